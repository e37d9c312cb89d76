// A worker process for scheduled-tasks.test.ts: a federation over a SQLite
// queue and key–value store in one file, running the task worker (which
// runs the schedules) and printing one line per run of the "tick" task,
// until its stdin closes.
//
// Usage: <runtime> schedule-worker.ts <database path>
import process from "node:process";
import { createFederationBuilder } from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue } from "../mod.ts";
import { tickSchema } from "./tick-task.ts";

const [path] = process.argv.slice(2);
if (path == null) {
  process.stderr.write("Usage: schedule-worker.ts <database path>\n");
  process.exit(2);
}
const builder = createFederationBuilder<void>();
builder.defineTask("tick", {
  schema: tickSchema,
  handler(ctx) {
    process.stdout.write(
      `RAN ${JSON.stringify({ tick: ctx.task.schedule?.tick.getTime(), pid: process.pid })}\n`,
    );
  },
});
await using kv = new SqliteKvStore({ path });
await using queue = new SqliteMessageQueue({ path, pollInterval: { milliseconds: 50 } });
const federation = await builder.build({ kv, queue, manuallyStartQueue: true });
const controller = new AbortController();
process.stdin.on("data", () => {});
process.stdin.on("end", () => controller.abort());
process.stdin.on("close", () => controller.abort());
process.stdout.write("READY\n");
await federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
