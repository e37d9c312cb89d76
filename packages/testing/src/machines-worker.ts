// A worker process of testWorkerMachines() (see machines-suite.ts): a
// federation on the backend's engines with its own machine id, running
// the suite's task.  The task reports progress, then waits until the
// store holds the suite's release key, so that a worker running one
// message at a time leaves the next task to the other process.
//
// Usage: <runtime> machines-worker.ts <backend module URL> <namespace> <machine id>
//
// Prints READY <worker id> <machine id> once registered, STARTED <task id>
// when a task starts, and DISPOSED after SIGTERM stopped it and its
// engines were disposed of.
import process from "node:process";
import { createFederation, type WorkerEvent } from "@fedwork/core";
import { MACHINES_RELEASE_KEY, MACHINES_TASK_NAME } from "./machines-task.ts";
import { numberSchema } from "./backend-set.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { delay } from "./wait.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, machineId] = process.argv.slice(2);
if (backendModule == null || namespace == null || machineId == null) {
  process.stderr.write("Usage: machines-worker.ts <backend module URL> <namespace> <machine id>\n");
  process.exit(2);
}

const { queue, kv, pubsub } = await openBackendModule<ShutdownBackend>(backendModule, namespace);
const federation = createFederation<void>({
  kv,
  queue,
  ...(pubsub == null ? {} : { pubsub }),
  manuallyStartQueue: true,
  machineId,
  // The suite's webhook receiver listens on loopback.
  allowPrivateAddress: true,
});
federation.defineTask(MACHINES_TASK_NAME, {
  schema: numberSchema,
  async handler(ctx) {
    await say(`STARTED ${ctx.task.id}`);
    await ctx.task.reportProgress({ percent: 50, data: { machine: machineId } });
    while (await kv.get(MACHINES_RELEASE_KEY) == null) {
      if (ctx.task.signal.aborted) throw ctx.task.signal.reason;
      await delay(50);
    }
  },
});
const controller = new AbortController();
process.once("SIGTERM", () => controller.abort());
await federation.startQueue(undefined, {
  signal: controller.signal,
  presence: { heartbeatInterval: { milliseconds: 500 } },
  onWorkerEvent(event: WorkerEvent) {
    if (event.type === "ready") void say(`READY ${event.worker.id} ${event.worker.machineId}`);
  },
});
for (const engine of [pubsub, kv, queue]) {
  await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
}
await say("DISPOSED");
