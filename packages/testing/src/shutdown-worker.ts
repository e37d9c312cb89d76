// The worker process of testGracefulShutdown() (see shutdown-suite.ts): a
// federation on the backend's engines, closed by closeOnSignals(), which
// disposes of its engines once startQueue() has resolved and then lets
// the process end by itself (it never calls process.exit()).
//
// Usage: <runtime> shutdown-worker.ts <backend module URL> <namespace> <mode> <graceMs>
//        <enqueue: yes|no>
//
// Its one task prints STARTED <id> when it starts, then by mode: "hold"
// waits for its signal, prints ABORTED <id> and throws its reason;
// "finish-in-grace" waits for this process's SIGTERM, then a moment, and
// prints COMPLETED <id>; "finish" prints COMPLETED <id> at once.
// "enqueue-only" is a web process: it starts no worker, enqueues the task,
// prints ENQUEUED and disposes of its engines with no signal.  READY
// when listening, TERMINATED on the first SIGTERM, DISPOSED once the
// engines are disposed of.
import process from "node:process";
import { closeOnSignals, createFederation } from "@fedwork/core";
import { numberSchema } from "./backend-set.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, mode, graceText, enqueue] = process.argv.slice(2);
if (
  backendModule == null || namespace == null || graceText == null ||
  !["hold", "finish-in-grace", "finish", "enqueue-only"].includes(mode ?? "")
) {
  process.stderr.write(
    "Usage: shutdown-worker.ts <backend module URL> <namespace> " +
      "hold|finish-in-grace|finish|enqueue-only " +
      "<graceMs> yes|no\n",
  );
  process.exit(2);
}

const { queue, kv, pubsub } = await openBackendModule<ShutdownBackend>(backendModule, namespace);
// Stands for what keeps a real worker's process up until it is stopped (a
// web server beside an in-process queue): an idle InProcessMessageQueue
// does not.  Cleared by SIGTERM, so that it cannot hide an engine's timer.
const keepAlive = setInterval(() => {}, 60_000);
const terminated = new Promise<void>((resolve) =>
  process.once("SIGTERM", () => {
    clearInterval(keepAlive);
    void say("TERMINATED");
    resolve();
  })
);
const federation = createFederation<void>({
  kv,
  queue,
  ...(pubsub == null ? {} : { pubsub }),
  manuallyStartQueue: true,
});
const task = federation.defineTask("shutdown-test", {
  schema: numberSchema,
  async handler(ctx) {
    const { id, signal } = ctx.task;
    await say(`STARTED ${id}`);
    if (mode === "hold") {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      await say(`ABORTED ${id}`);
      throw signal.reason;
    }
    if (mode === "finish-in-grace") {
      await terminated;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await say(`COMPLETED ${id}`);
  },
});
if (mode === "enqueue-only") {
  clearInterval(keepAlive);
  await federation.createContext(new URL("https://shutdown.example/"), undefined)
    .enqueueTask(task, { n: 1 });
  await say("ENQUEUED");
} else {
  using _closing = closeOnSignals(federation, { grace: { milliseconds: Number(graceText) } });
  const workers = federation.startQueue(undefined);
  await say("READY");
  if (enqueue === "yes") {
    await federation.createContext(new URL("https://shutdown.example/"), undefined)
      .enqueueTask(task, { n: 1 });
  }
  await workers;
}
// The app owns the engines it gave the federation: dispose of them last.
for (const engine of [pubsub, kv, queue]) {
  await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
}
await say("DISPOSED");
