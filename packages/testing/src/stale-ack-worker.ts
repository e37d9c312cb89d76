// The child process of the lease-owner test (see stale-ack-test.ts):
// listens, announces the message it is handling on stdout, and returns
// from its handler only when the parent writes a line to its stdin; then
// stops listening (which sends the acknowledgement), disposes of the queue
// and prints "STOPPED".  The parent freezes it with SIGSTOP in between, so
// that its lease runs out while the handler is still running.
//
// Usage: <runtime> stale-ack-worker.ts <factory module URL> <namespace> <leaseMs>
import process from "node:process";
import { HANDLING_PREFIX } from "./crash-test.ts";
import { loadQueueFactory } from "./queue-harness.ts";

const [factoryModule, namespace, leaseText] = process.argv.slice(2);
if (factoryModule == null || namespace == null || leaseText == null) {
  process.stderr.write("Usage: stale-ack-worker.ts <factory module URL> <namespace> <leaseMs>\n");
  process.exit(2);
}

let finish!: () => void;
const finishing = new Promise<void>((resolve) => finish = resolve);
process.stdin.setEncoding("utf8");
process.stdin.on("data", () => finish());

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
