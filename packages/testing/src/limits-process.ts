// A worker process of testTaskLimits() (see limits-suite.ts): a federation
// on the backend's engines with the suite's tasks, three runs at a time.
//
// Usage: <runtime> limits-process.ts <backend module URL> <namespace> <counter URL>
//
// It starts the queue and prints `READY`; the tasks report to the counter.
import process from "node:process";
import { createFederation, ParallelMessageQueue } from "@fedwork/core";
import { defineLimitTasks } from "./limits-tasks.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, counter] = process.argv.slice(2);
if (backendModule == null || namespace == null || counter == null) {
  process.stderr.write(
    "Usage: limits-process.ts <backend module URL> <namespace> <counter URL>\n",
  );
  process.exit(2);
}

const { queue, kv, pubsub } = await openBackendModule<ShutdownBackend>(backendModule, namespace);
const federation = createFederation<void>({
  kv,
  // Three at once per process: six in all, so that the limits are what
  // stops a third run of a key, not the number of workers.
  queue: new ParallelMessageQueue(queue, 3),
  ...(pubsub == null ? {} : { pubsub }),
  manuallyStartQueue: true,
});
defineLimitTasks(federation, counter, async (key) => {
  const entry = await kv.get<{ holders?: [string, number][] }>([
    "fedwork",
    "task-concurrency",
    "limited",
    key,
  ]);
  const now = Date.now();
  return entry?.holders?.filter(([, expiresAt]) => expiresAt > now).length ?? -1;
});
// Failed attempts are the suite's business: a limit must not fail runs.
federation.on("retrying", async (event) => {
  if (event.reason !== "wait") {
    await say(`ERROR ${event.reason} ${String((event.error as Error | undefined)?.message)}`);
  }
});
federation.on("failed", (event) => say(`ERROR failed ${event.reason}`));
const workers = federation.startQueue(undefined);
await say("READY");
await workers;
