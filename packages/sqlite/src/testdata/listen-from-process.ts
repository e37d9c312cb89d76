// A child-process script for sqlite-message-queue.test.ts: listens on a
// queue file and prints one line per message it handles, until its stdin
// closes; then it stops listening, lets the running handlers finish and
// exits.
//
// Usage: <runtime> listen-from-process.ts <database path>
import process from "node:process";
import { SqliteMessageQueue } from "../message-queue.ts";

const [path] = process.argv.slice(2);
if (path == null) {
  process.stderr.write("Usage: listen-from-process.ts <database path>\n");
  process.exit(2);
}
const queue = new SqliteMessageQueue({ path, concurrency: 4, pollInterval: { milliseconds: 20 } });
const controller = new AbortController();
process.stdin.on("data", () => {});
process.stdin.on("end", () => controller.abort());
process.stdin.on("close", () => controller.abort());
process.stdout.write("READY\n");
await queue.listen(async (message) => {
  process.stdout.write(`HANDLED ${JSON.stringify(message)}\n`);
  await new Promise((resolve) => setTimeout(resolve, 1));
}, { signal: controller.signal });
await queue[Symbol.asyncDispose]();
