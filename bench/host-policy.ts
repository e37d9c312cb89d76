// What the host policy costs a delivery: one activity signed and sent to N
// inboxes on one loopback host, through the outbox queue (in-process, 8 at
// once), measured from sendActivity() to the N-th request received, in
// deliveries per second.  Four setups in the same run, alternated (A B C D
// D C B A) and averaged, each as a ratio to the first:
//   off          no hostPolicy;
//   retryAfter   hostPolicy: {} (a store read per delivery for the host's
//                Retry-After);
//   block        a 1,000-entry block list, the host not on it;
//   limits       hostPolicy.concurrency 64 and rate 1,000,000/s: slots and
//                start times in the store for every delivery, never binding.
// Run with node -C fedwork-source, deno run -A, or bun --conditions=fedwork-source:
// bench/host-policy.ts [N]
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";
import { Create, Note, Person, type Recipient } from "@fedify/vocab";
import {
  createFederation,
  generateCryptoKeyPair,
  type HostPolicyOptions,
  InProcessMessageQueue,
  MemoryKvStore,
  ParallelMessageQueue,
} from "@fedwork/core";

const N = Number(process.argv[2] ?? 1000);
const WARM_UP = 50;
const keyPair = await generateCryptoKeyPair();

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

const senderOrigin = "https://sender.example";

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

async function measure(hostPolicy: HostPolicyOptions | undefined, run: string): Promise<number> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), 8),
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    ...(hostPolicy == null ? {} : { hostPolicy }),
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  ).setKeyPairsDispatcher(() => [keyPair]);
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  const ctx = federation.createContext(new URL(senderOrigin), undefined);
  const send = (to: Recipient[]) =>
    ctx.sendActivity(
      { identifier: "alice" },
      to,
      new Create({
        id: new URL(`${senderOrigin}/creates/${crypto.randomUUID()}`),
        actor: new URL(`${senderOrigin}/users/alice`),
        object: new Note({ content: "x".repeat(500) }),
      }),
    );
  await fanOut(send, WARM_UP, `${run}-warm`);
  const rate = await fanOut(send, N, run);
  controller.abort();
  await workers;
  return rate;
}

const setups: [string, HostPolicyOptions | undefined][] = [
  ["off", undefined],
  ["retryAfter", {}],
  ["block", { block: Array.from({ length: 1000 }, (_, i) => `blocked-${i}.example`) }],
  ["limits", { concurrency: 64, rate: { limit: 1_000_000, period: { seconds: 1 } } }],
];
const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node.js ${process.versions.node}`;
console.log(`Host policy cost: a signed fan-out to ${N} inboxes on one loopback host (${runtime})`);
const rates = new Map<string, number[]>();
for (const [name, policy] of [...setups, ...[...setups].reverse()]) {
  const list = rates.get(name) ?? [];
  list.push(await measure(policy, `${name}-${list.length}`));
  rates.set(name, list);
}
const mean = (name: string) => rates.get(name)!.reduce((a, b) => a + b, 0) / 2;
const off = mean("off");
for (const [name] of setups) {
  const rate = mean(name);
  console.log(
    `${name.padEnd(10)} ${Math.round(rate).toLocaleString("en").padStart(7)} deliveries/s, ` +
      `ratio to off ${(rate / off).toFixed(2)}× (mean of two runs, alternated)`,
  );
}
server.closeAllConnections?.();
server.close();
process.exit(0);
