// The worker process of the SIGKILL test in ../fedwork-engines.test.ts: a
// Fedify federation on a Fedwork engine that processes its queue until it
// is killed.
//
// Usage: <runtime> fedify-worker.ts <engine> <namespace> <leaseMs>
import process from "node:process";
import { createFedifyApp } from "./fedify-app.ts";
import { fedworkEngine } from "./fedwork-engines.ts";

const [engineName, namespace, leaseText] = process.argv.slice(2);
if (engineName == null || namespace == null || leaseText == null) {
  process.stderr.write("Usage: fedify-worker.ts <engine> <namespace> <leaseMs>\n");
  process.exit(2);
}
const instance = fedworkEngine(engineName).open(namespace, Number(leaseText));
const federation = createFedifyApp(instance);
// Keeps the event loop alive whatever the queue's own timers do.
setInterval(() => {}, 1 << 30);
process.stdout.write("WORKER STARTED\n");
await federation.startQueue(undefined);
