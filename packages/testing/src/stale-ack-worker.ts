// The child process of the lease-owner test (see stale-ack-test.ts):
// listens, announces the message it is handling on stdout, and returns
// from its handler only once the parent has created a file; then
// stops listening (which sends the acknowledgement), disposes of the queue
// and prints "STOPPED".  The parent freezes it with SIGSTOP in between, so
// that its lease runs out while the handler is still running.
//
// Usage: <runtime> stale-ack-worker.ts <factory module URL> <namespace> <leaseMs> <file>
import { existsSync } from "node:fs";
import process from "node:process";
import { HANDLING_PREFIX } from "./crash-test.ts";
import { loadQueueFactory } from "./queue-harness.ts";

const [factoryModule, namespace, leaseText, file] = process.argv.slice(2);
if (factoryModule == null || namespace == null || leaseText == null || file == null) {
  process.stderr.write(
    "Usage: stale-ack-worker.ts <factory module URL> <namespace> <leaseMs> <file>\n",
  );
  process.exit(2);
}

// A file rather than stdin: reading stdin differs between the runtimes.
const finishing = new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    if (!existsSync(file)) return;
    clearInterval(timer);
    resolve();
  }, 20);
});

const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace, { leaseMs: Number(leaseText) });
const controller = new AbortController();
await queue.listen(async (message) => {
  process.stdout.write(`${HANDLING_PREFIX}${JSON.stringify(message)}\n`);
  await finishing;
  controller.abort();
}, { signal: controller.signal });
await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
process.stdout.write("STOPPED\n");
process.exit(0);
