// A worker process of the batch-handler crash test (see
// batch-handler-suite.ts): the backend's engines, one handleMany task
// whose handler prints RUN <n,n,…> and then never returns, so that the test
// can SIGKILL the process in the middle of a run.  It prints READY once it
// listens.
//
// Usage: <runtime> batch-handler-worker.ts <backend module URL> <namespace> <task name> <size>
import process from "node:process";
import { type BatchHandlerBackend, buildBatchHandlerApp } from "./batch-handler-app.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, taskName, size] = process.argv.slice(2);
if (backendModule == null || namespace == null || taskName == null || size == null) {
  process.stderr.write(
    "Usage: batch-handler-worker.ts <backend module URL> <namespace> <task name> <size>\n",
  );
  process.exit(2);
}

const backend = await openBackendModule<BatchHandlerBackend>(backendModule, namespace);
const { federation } = buildBatchHandlerApp(
  backend,
  taskName,
  // A wait no run reaches: the run starts when it is full.
  { size: Number(size), waitMs: 60_000 },
  async (items) => {
    await say(`RUN ${items.map((item) => item.data.n).join(",")}`);
    // Held until the test kills the process.
    await new Promise(() => {});
  },
);
await federation.startQueue(undefined, {
  onWorkerEvent(event) {
    if (event.type === "ready") void say("READY");
  },
});
