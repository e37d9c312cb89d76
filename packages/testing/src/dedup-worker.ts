// The child process of the deduplication test (see deduplication-suite.ts):
// creates a queue instance on the test's namespace, makes many concurrent
// enqueueDeduplicated() calls with one key, and prints how many of them
// added a message, as "ADDED <n>".
//
// Usage: <runtime> dedup-worker.ts <factory module URL> <namespace> <leaseMs> <key> <count>
import process from "node:process";
import { loadQueueFactory } from "./queue-harness.ts";

const [factoryModule, namespace, leaseText, key, countText] = process.argv.slice(2);
if (countText == null) {
  process.stderr.write(
    "Usage: dedup-worker.ts <factory module URL> <namespace> <leaseMs> <key> <count>\n",
  );
  process.exit(2);
}
const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace, { leaseMs: Number(leaseText) });
const results = await Promise.all(
  Array.from(
    { length: Number(countText) },
    (_, i) =>
      queue.enqueueDeduplicated!({ kind: "dedup", from: process.pid, i }, {
        deduplicationKey: key,
        deduplicationTtl: { minutes: 5 },
      }),
  ),
);
process.stdout.write(`ADDED ${results.filter((added) => added).length}\n`);
await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
process.exit(0);
