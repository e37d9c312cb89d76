// Signed fan-out: one activity sent to N inboxes on loopback, each delivery
// signed (RFC 9421, RSA-2048) and POSTed by the outbox workers, measured
// from sendActivity() to the N-th request received, in deliveries per
// second.  Fedwork and Fedify 2.3.6 do the same fan-out in the same run,
// with the same key, the same receiving server (answering 202 at once) and
// the same queue setup (an in-process queue, one at a time or 8 at once);
// the ratio is reported.  At concurrency 1 it also runs Fedwork with the
// fanoutDeliveries option (first attempts from the fan-out worker, 8 at once).
// Run with node, deno run -A, or bun: bench/signed-fanout.ts [N]
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";
import {
  createFederation as createFedifyFederation,
  InProcessMessageQueue as FedifyInProcessMessageQueue,
  MemoryKvStore as FedifyMemoryKvStore,
  type MessageQueue as FedifyMessageQueue,
  ParallelMessageQueue as FedifyParallelMessageQueue,
} from "@fedify/fedify";
import { Create, Note, Person, type Recipient } from "@fedify/vocab";
import {
  createFederation,
  generateCryptoKeyPair,
  InProcessMessageQueue,
  MemoryKvStore,
  type MessageQueue,
  ParallelMessageQueue,
} from "@fedwork/core";

const N = Number(process.argv[2] ?? 1000);
const WARM_UP = 50;
const keyPair = await generateCryptoKeyPair();

// The receiving side: counts POSTs, answers 202, resolves a waiter at a count.
let received = 0;
let waiter: { count: number; resolve: () => void } | null = null;
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(202).end();
    received++;
    if (waiter != null && received >= waiter.count) {
      waiter.resolve();
      waiter = null;
    }
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const inboxOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

function recipients(count: number, run: string): Recipient[] {
  return Array.from({ length: count }, (_, i) => ({
    id: new URL(`${inboxOrigin}/${run}/users/${i}`),
    inboxId: new URL(`${inboxOrigin}/${run}/users/${i}/inbox`),
  }));
}

function activity(origin: string): Create {
  return new Create({
    id: new URL(`${origin}/creates/${crypto.randomUUID()}`),
    actor: new URL(`${origin}/users/alice`),
    object: new Note({ id: new URL(`${origin}/notes/1`), content: "x".repeat(500) }),
  });
}

/** Sends to `count` inboxes and resolves with deliveries per second. */
async function fanOut(
  send: (to: Recipient[]) => Promise<void>,
  count: number,
  run: string,
): Promise<number> {
  received = 0;
  const done = new Promise<void>((resolve) => waiter = { count, resolve });
  const start = performance.now();
  await send(recipients(count, run));
  await done;
  return count / ((performance.now() - start) / 1000);
}

const senderOrigin = "https://sender.example";

async function fedwork(
  queue: MessageQueue,
  label: string,
  fanoutDeliveries: number | false = false,
): Promise<number> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    fanoutDeliveries: fanoutDeliveries === false ? false : { concurrency: fanoutDeliveries },
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  )
    .setKeyPairsDispatcher(() => [keyPair]);
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const ctx = federation.createContext(new URL(senderOrigin), undefined);
  const send = (to: Recipient[]) =>
    ctx.sendActivity({ identifier: "alice" }, to, activity(senderOrigin));
  await fanOut(send, WARM_UP, `${label}-warm`);
  const rate = await fanOut(send, N, label);
  controller.abort();
  await workers;
  return rate;
}

async function fedify(queue: FedifyMessageQueue, label: string): Promise<number> {
  const federation = createFedifyFederation<void>({
    kv: new FedifyMemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  )
    .setKeyPairsDispatcher(() => [keyPair]);
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const ctx = federation.createContext(new URL(senderOrigin), undefined);
  const send = (to: Recipient[]) =>
    ctx.sendActivity({ identifier: "alice" }, to, activity(senderOrigin));
  await fanOut(send, WARM_UP, `${label}-warm`);
  const rate = await fanOut(send, N, label);
  controller.abort();
  await workers;
  return rate;
}

const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node.js ${process.versions.node}`;
console.log(`Signed fan-out of one activity to ${N} inboxes on loopback (${runtime})`);
/** The mean of two runs, one before and one after the other framework's. */
const mean = (a: number, b: number) => (a + b) / 2;
for (const concurrency of [1, 8]) {
  const ourQueue = () =>
    concurrency === 1
      ? new InProcessMessageQueue()
      : new ParallelMessageQueue(new InProcessMessageQueue(), concurrency);
  const theirQueue = () =>
    concurrency === 1
      ? new FedifyInProcessMessageQueue()
      : new FedifyParallelMessageQueue(new FedifyInProcessMessageQueue(), concurrency);
  // Alternated (ours, theirs, theirs, ours), so that neither framework
  // always runs on code the other one's run made hot (both use
  // @fedify/vocab and the runtime's HTTP and crypto code).
  const ours1 = await fedwork(ourQueue(), `fedwork-${concurrency}-a`);
  const theirs1 = await fedify(theirQueue(), `fedify-${concurrency}-a`);
  const theirs2 = await fedify(theirQueue(), `fedify-${concurrency}-b`);
  const ours2 = await fedwork(ourQueue(), `fedwork-${concurrency}-b`);
  const ours = mean(ours1, ours2);
  const theirs = mean(theirs1, theirs2);
  const fmt = (rate: number) => `${Math.round(rate).toLocaleString("en")} deliveries/s`;
  console.log(
    `concurrency ${concurrency}: Fedwork ${fmt(ours)}, Fedify 2.3.6 ${fmt(theirs)}, ` +
      `ratio ${(ours / theirs).toFixed(2)}× (mean of two runs each, alternated)`,
  );
  if (concurrency === 1) {
    // The same one-at-a-time queue, with the fan-out worker making the
    // first attempts itself, 8 at once (the fanoutDeliveries option).
    const direct = await fedwork(new InProcessMessageQueue(), "fedwork-direct", 8);
    console.log(
      `concurrency 1, fanoutDeliveries 8: Fedwork ${fmt(direct)}, ratio to Fedify at ` +
        `concurrency 1 ${(direct / theirs).toFixed(2)}×`,
    );
  }
}
server.closeAllConnections?.();
server.close();
process.exit(0);
