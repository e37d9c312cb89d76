// The child process of the poison-message test (see poison-test.ts): a
// worker that plays the processing layer's part.  It listens; for each
// hand-out it prints the message's kind and delivery count, then:
// - a "poison" message within the limit kills this process, by SIGKILL or
//   by allocating until the runtime runs out of memory (mode "oom");
// - a "poison" message over the limit is quarantined: acknowledged unrun;
// - any other message is handled and acknowledged.
//
// Usage: <runtime> poison-worker.ts <factory module URL> <namespace> <leaseMs>
//        <maxDeliveries> <sigkill|oom>
import process from "node:process";
import { loadQueueFactory } from "./queue-harness.ts";
import { say } from "./worker-process.ts";

const [factoryModule, namespace, leaseText, limitText, mode] = process.argv.slice(2);
if (factoryModule == null || namespace == null || leaseText == null || limitText == null) {
  process.stderr.write(
    "Usage: poison-worker.ts <factory module URL> <namespace> <leaseMs> <maxDeliveries> " +
      "<sigkill|oom>\n",
  );
  process.exit(2);
}
const maxDeliveries = Number(limitText);

// Keeps the event loop alive even if the queue's own polling does not.
setInterval(() => {}, 1 << 30);

function dieOutOfMemory(): never {
  // Strings of 1 MiB kept reachable until the heap limit aborts the process.
  const hoard: string[] = [];
  for (let i = 0;; i++) hoard.push(`${i}`.padEnd(1 << 20, "x") + i);
}

const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace, { leaseMs: Number(leaseText) });
await queue.listen(async (message: { kind?: string }, redelivery) => {
  const count = redelivery?.deliveryCount;
  await say(`DELIVERY ${message.kind} ${count ?? "none"}`);
  if (message.kind !== "poison") {
    await say(`HANDLED ${message.kind}`);
    return;
  }
  if (count != null && count > maxDeliveries) {
    await say(`QUARANTINED ${count}`);
    return;
  }
  // Only under a heap limit (the parent gives Node.js and Deno one).
  if (mode === "oom" && !("Bun" in globalThis)) dieOutOfMemory();
  process.kill(process.pid, "SIGKILL");
  // SIGKILL may take a moment to land; never acknowledge meanwhile.
  await new Promise<never>(() => {});
});
