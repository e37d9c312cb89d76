// A child process for kv-deduplication.test.ts: a federation whose queue
// does not deduplicate natively (a SQLite queue with enqueueDeduplicated
// hidden, as an AMQP queue would be) and whose KvStore is SQLite, making
// many concurrent keyed enqueues and printing how many were enqueued.
//
// Usage: <runtime> kv-dedup-enqueuer.ts <database path> <count>
import process from "node:process";
import { createFederationBuilder, type MessageQueue } from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue } from "../mod.ts";
import { tickSchema } from "./tick-task.ts";

const [path, countText] = process.argv.slice(2);
if (countText == null) {
  process.stderr.write("Usage: kv-dedup-enqueuer.ts <database path> <count>\n");
  process.exit(2);
}
const builder = createFederationBuilder<void>();
const task = builder.defineTask("once", { schema: tickSchema, handler() {} });
await using kv = new SqliteKvStore({ path });
await using sqlite = new SqliteMessageQueue({ path });
const queue: MessageQueue = {
  enqueue: (message, options) => sqlite.enqueue(message, options),
  listen: (handler, options) => sqlite.listen(handler, options),
};
const federation = await builder.build({ kv, queue, manuallyStartQueue: true });
const ctx = federation.createContext(new URL("https://web.example/"), undefined);
const results = await Promise.all(
  Array.from(
    { length: Number(countText) },
    () => ctx.enqueueTask(task, {}, { deduplicationKey: "the-key" }),
  ),
);
process.stdout.write(`ENQUEUED ${results.filter((r) => r.status === "enqueued").length}\n`);
