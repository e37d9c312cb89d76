// A worker process of the pause tests (see pause-suite.ts): the pause app
// on the backend's engines, running every role.  It prints READY once it
// listens, RAN <task> <n> <attempt> for each task it runs, HELD <type>
// <task name or -> for each message it puts back into the queue with a
// delay (what it does with a paused message it took), and stops
// (closing its federation and engines, then printing STOPPED) when its
// stdin closes.
//
// Usage: <runtime> pause-worker.ts <backend module URL> <namespace>
import process from "node:process";
import type { MessageQueue, MessageQueueEnqueueOptions } from "@fedwork/core";
import { buildPauseApp, type PauseBackend } from "./pause-app.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace] = process.argv.slice(2);
if (backendModule == null || namespace == null) {
  process.stderr.write("Usage: pause-worker.ts <backend module URL> <namespace>\n");
  process.exit(2);
}

const opened = await openBackendModule<PauseBackend>(backendModule, namespace);
// The queue as this worker sees it, with its delayed enqueues reported: no
// task fails in these tests, so each is a paused message put back.  Its
// siblings (a queue with separateRoles derives one per role) likewise.
function reporting(queue: MessageQueue): MessageQueue {
  return new Proxy(queue, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === "enqueue") {
        return async (message: unknown, options?: MessageQueueEnqueueOptions) => {
          await (value as MessageQueue["enqueue"]).call(target, message, options);
          if (options?.delay != null) {
            const { type, taskName } = message as { type?: string; taskName?: string };
            await say(`HELD ${type} ${taskName ?? "-"}`);
          }
        };
      }
      if (property === "derive" && typeof value === "function") {
        return (name: string) => reporting(value.call(target, name));
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
const queue = reporting(opened.queue);
const backend: PauseBackend = { ...opened, queue };
const { federation } = await buildPauseApp(
  backend,
  (task, n, attempt) => say(`RAN ${task} ${n} ${attempt}`),
);
const stop = new AbortController();
process.stdin.on("data", () => {});
process.stdin.on("end", () => stop.abort());
process.stdin.on("close", () => stop.abort());
await federation.startQueue(undefined, {
  signal: stop.signal,
  onWorkerEvent(event) {
    if (event.type === "ready") void say("READY");
  },
});
for (const engine of [opened.pubsub, opened.kv, opened.queue]) {
  await (engine as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
}
await say("STOPPED");
process.exit(0);
