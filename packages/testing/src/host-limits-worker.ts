// A worker process of the host-limit tests (see host-limits-suite.ts): the
// host-limits app on the backend's engines, with the host policy given as
// JSON, running every role.  It prints READY once it listens, one line per
// delivery event (`COMPLETED <attempt>`, `WAIT <waitReason> <attempt>`,
// `RETRY <attempt>`, `DROPPED <reason>`, `FAILED <reason>`), and stops
// (closing its federation and engines, then printing STOPPED) when its
// stdin closes.
//
// Usage: <runtime> host-limits-worker.ts <backend module URL> <namespace> <host policy JSON>
import process from "node:process";
import type { HostPolicyOptions } from "@fedwork/core";
import { buildHostLimitsApp } from "./host-limits-app.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { openBackendModule, say } from "./worker-process.ts";

const [backendModule, namespace, policy] = process.argv.slice(2);
if (backendModule == null || namespace == null || policy == null) {
  process.stderr.write(
    "Usage: host-limits-worker.ts <backend module URL> <namespace> <host policy JSON>\n",
  );
  process.exit(2);
}

const backend = await openBackendModule<ShutdownBackend>(backendModule, namespace);
const federation = await buildHostLimitsApp(backend, JSON.parse(policy) as HostPolicyOptions);
federation.on("completed", (event) => {
  if (event.kind === "outbox") void say(`COMPLETED ${event.attempt}`);
});
federation.on("retrying", (event) => {
  if (event.kind !== "outbox") return;
  void say(
    event.reason === "wait"
      ? `WAIT ${event.waitFor} ${event.attempt}`
      : `RETRY ${event.attempt} ${String(event.error).replaceAll("\n", " ")}`,
  );
});
federation.on("dropped", (event) => {
  if (event.kind === "outbox") void say(`DROPPED ${event.reason}`);
});
federation.on("failed", (event) => {
  if (event.kind === "outbox") void say(`FAILED ${event.reason}`);
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
for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
  await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
}
await say("STOPPED");
process.exit(0);
