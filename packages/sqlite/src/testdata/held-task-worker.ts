// A worker process for cross-process.test.ts and bench/sqlite-pubsub.ts: a
// federation over a SQLite queue, key–value store and SqlitePubSub in one
// file, running the "hold" task, which reports its progress (with the
// time it did so) and then waits for its signal to abort.  It prints
// READY once its workers listen, PROGRESS <ms> after each report and
// ABORTED <reason> when the task's signal aborts, and stops when its stdin
// closes.
//
// Usage: <runtime> held-task-worker.ts <database path> [reports]
import process from "node:process";
import { createFederationBuilder } from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "../mod.ts";
import { holdSchema } from "./hold-task.ts";

const [path, reportsArg] = process.argv.slice(2);
if (path == null) {
  process.stderr.write("Usage: held-task-worker.ts <database path> [reports]\n");
  process.exit(2);
}
const reports = Number(reportsArg ?? 1);
const builder = createFederationBuilder<void>();
builder.defineTask("hold", {
  schema: holdSchema,
  async handler(ctx) {
    for (let i = 0; i < reports; i++) {
      // Apart, so that each report is its own publication to time.
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const at = Date.now();
      await ctx.task.reportProgress({ percent: 0, data: { at, i } });
      process.stdout.write(`PROGRESS ${at}\n`);
    }
    const signal = ctx.task.signal;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    const reason = signal.reason as { reason?: string } | undefined;
    process.stdout.write(`ABORTED ${reason?.reason ?? ""}\n`);
    throw signal.reason;
  },
});
await using kv = new SqliteKvStore({ path });
await using queue = new SqliteMessageQueue({ path, pollInterval: { milliseconds: 50 } });
await using pubsub = new SqlitePubSub({ path });
const federation = await builder.build({ kv, queue, pubsub, manuallyStartQueue: true });
const controller = new AbortController();
process.stdin.on("data", () => {});
process.stdin.on("end", () => controller.abort());
process.stdin.on("close", () => controller.abort());
await federation.startQueue(undefined, {
  signal: controller.signal,
  queue: "task",
  onWorkerEvent(event) {
    if (event.type === "ready") process.stdout.write("READY\n");
  },
});
