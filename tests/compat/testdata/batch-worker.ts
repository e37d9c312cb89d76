// A worker process of the batch crash test (../batch-crash.test.ts): the
// batch app on a Fedwork engine, processing its queue until it is killed.
//
// Usage: <runtime> batch-worker.ts <engine> <namespace> <leaseMs> <log>
import process from "node:process";
import { createBatchApp } from "./batch-app.ts";
import { fedworkEngine } from "./fedwork-engines.ts";

const [engineName, namespace, leaseText, log] = process.argv.slice(2);
if (engineName == null || namespace == null || leaseText == null || log == null) {
  process.stderr.write("Usage: batch-worker.ts <engine> <namespace> <leaseMs> <log>\n");
  process.exit(2);
}
const instance = fedworkEngine(engineName).open(namespace, Number(leaseText));
const { federation } = createBatchApp(instance, log);
// Keeps the event loop alive whatever the queue's own timers do.
setInterval(() => {}, 1 << 30);
process.stdout.write("WORKER STARTED\n");
await federation.startQueue(undefined);
