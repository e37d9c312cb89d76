// What the host policy costs a delivery, in two measures, for four setups:
// 1. the policy step alone: the outbox's host-policy check wrapped around a
//    delivery that does nothing, M times in a row, in microseconds per
//    delivery (its added cost, without the network);
// 2. end to end: one activity signed and sent to N inboxes on one loopback
//    host, through the outbox queue (in-process, 8 at once), from
//    sendActivity() to the N-th request received, in deliveries per second.
// Rounds of the setups are interleaved and each setup's median is taken,
// so that a machine whose load changes during the run skews none of them;
// ratios are to "off".  The setups:
//   off          no hostPolicy;
//   retryAfter   hostPolicy: {} (a store read per delivery for the host's
//                Retry-After);
//   block        a 1,000-entry block list, the host not on it;
//   limits       hostPolicy.concurrency 64 and rate 1,000,000/s: slots and
//                start times in the store for every delivery, never binding.
// Run with node -C fedwork-source, deno run -A, or bun --conditions=fedwork-source:
// bench/host-policy.ts [N] [rounds]
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
import { resolveHostPolicy } from "../packages/core/src/activitypub/host-policy/options.ts";
import { DeliveryHostPolicy } from "../packages/core/src/activitypub/outbox/host-policy.ts";
import type { OutboxMessage } from "../packages/core/src/activitypub/outbox/messages.ts";

const N = Number(process.argv[2] ?? 300);
const ROUNDS = Number(process.argv[3] ?? 5);
const STEPS = 20_000;
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

/** The policy step alone: microseconds per delivery. */
async function measureStep(hostPolicy: HostPolicyOptions | undefined): Promise<number> {
  const resolved = resolveHostPolicy(hostPolicy);
  const policy = resolved == null
    ? undefined
    : new DeliveryHostPolicy(resolved, new MemoryKvStore());
  const signal = new AbortController().signal;
  const attempt = () => Promise.resolve();
  const message = {
    type: "outbox",
    id: crypto.randomUUID(),
    attempt: 0,
    inbox: `${inboxOrigin}/users/1/inbox`,
  } as unknown as OutboxMessage;
  const start = performance.now();
  for (let i = 0; i < STEPS; i++) {
    // What Outbox.deliver() does: the attempt alone without a policy.
    if (policy == null) await attempt();
    else await policy.deliver(message, signal, attempt);
  }
  return (performance.now() - start) * 1000 / STEPS;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const runtime = "Deno" in globalThis
  ? "Deno"
  : "Bun" in globalThis
  ? "Bun"
  : `Node.js ${process.versions.node}`;
console.log(
  `Host policy cost (${runtime}): the policy step (${STEPS} deliveries) and a signed fan-out ` +
    `to ${N} inboxes on one loopback host; median of ${ROUNDS} interleaved rounds`,
);
const steps = new Map<string, number[]>();
const rates = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  // Each round in another order, so that no setup always runs first.
  const order = round % 2 === 0 ? setups : [...setups].reverse();
  for (const [name, policy] of order) {
    steps.set(name, [...steps.get(name) ?? [], await measureStep(policy)]);
    rates.set(name, [...rates.get(name) ?? [], await measure(policy, `${name}-${round}`)]);
  }
}
const offStep = median(steps.get("off")!);
const offRate = median(rates.get("off")!);
for (const [name] of setups) {
  const step = median(steps.get(name)!);
  const rate = median(rates.get(name)!);
  console.log(
    `${name.padEnd(10)} step ${step.toFixed(2).padStart(6)} µs/delivery ` +
      `(+${(step - offStep).toFixed(2)} µs); fan-out ` +
      `${Math.round(rate).toLocaleString("en").padStart(6)} deliveries/s, ratio to off ` +
      `${(rate / offRate).toFixed(2)}×`,
  );
}
server.closeAllConnections?.();
server.close();
process.exit(0);
