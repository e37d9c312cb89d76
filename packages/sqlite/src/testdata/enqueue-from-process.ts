// A child-process script for sqlite-message-queue.test.ts: enqueues one
// message into a queue file from a process other than the listener's, so
// that the test sees the cross-process (polling) pickup path.
//
// Usage: <runtime> enqueue-from-process.ts <database path> <message JSON>
import process from "node:process";
import { SqliteMessageQueue } from "../message-queue.ts";

const [path, json] = process.argv.slice(2);
if (path == null || json == null) {
  process.stderr.write("Usage: enqueue-from-process.ts <database path> <message JSON>\n");
  process.exit(2);
}
const queue = new SqliteMessageQueue({ path });
await queue.enqueue(JSON.parse(json));
await queue[Symbol.asyncDispose]();
