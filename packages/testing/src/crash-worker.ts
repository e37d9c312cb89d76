// The child process of the message-queue crash test (see crash-test.ts):
// imports the backend's factory module, listens, announces the message it
// is handling on stdout and then never finishes, so that the parent can
// kill it mid-handler.
//
// Usage: <runtime> crash-worker.ts <factory module URL> <namespace> <leaseMs>
import process from "node:process";
import { HANDLING_PREFIX } from "./crash-test.ts";
import { loadQueueFactory } from "./queue-harness.ts";

const [factoryModule, namespace, leaseText] = process.argv.slice(2);
if (factoryModule == null || namespace == null || leaseText == null) {
  process.stderr.write("Usage: crash-worker.ts <factory module URL> <namespace> <leaseMs>\n");
  process.exit(2);
}

// Keeps the event loop alive even if the queue's own polling does not.
setInterval(() => {}, 1 << 30);

const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace, { leaseMs: Number(leaseText) });
await queue.listen(async (message) => {
  process.stdout.write(`${HANDLING_PREFIX}${JSON.stringify(message)}\n`);
  await new Promise<never>(() => {});
});
