// A worker process of the durable-steps tests (see durable-steps-suite.ts):
// the app on the backend's engines, running every role.  It prints READY
// once it listens, STARTED <step> when a step's function starts, EFFECT
// <step> [detail] when it does its side effect, and BETWEEN <step> after a
// step; with a kill point it SIGKILLs itself there the first time (inside
// step b, before its side effect, or between steps b and s).  It stops
// when its stdin closes.
//
// Usage: <runtime> durable-steps-worker.ts <backend module URL> <namespace> <kill point>
//        (kill point: "in-b", "after-b" or "none")
import process from "node:process";
import { buildDurableStepsApp, type DurableStepsBackend } from "./durable-steps-app.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, killPoint] = process.argv.slice(2);
if (backendModule == null || namespace == null || killPoint == null) {
  process.stderr.write(
    "Usage: durable-steps-worker.ts <backend module URL> <namespace> <in-b|after-b|none>\n",
  );
  process.exit(2);
}

async function die(where: string): Promise<never> {
  await say(`KILLED ${where}`);
  process.kill(process.pid, "SIGKILL");
  return await new Promise<never>(() => {});
}

const opened = await openBackendModule<DurableStepsBackend>(backendModule, namespace);
const { federation } = await buildDurableStepsApp(opened, {
  async started(step) {
    await say(`STARTED ${step}`);
    if (step === "b" && killPoint === "in-b") await die("in-b");
  },
  effect: (step, detail) => say(`EFFECT ${step}${detail == null ? "" : ` ${detail}`}`),
  async between(after) {
    await say(`BETWEEN ${after}`);
    if (after === "b" && killPoint === "after-b") await die("after-b");
  },
});
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
  await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
}
await say("STOPPED");
process.exit(0);
