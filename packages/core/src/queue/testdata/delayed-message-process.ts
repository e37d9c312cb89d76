// Run by in-process-message-queue.test.ts in a child process to check
// whether the queue's delay timer keeps the process alive.
//   idle:      a delayed message and no listener; the process must exit.
//   listening: a listener waits for a delayed message; the process must
//              stay alive until it is handled.
import process from "node:process";
import { InProcessMessageQueue } from "../in-process-message-queue.ts";

const mode = process.argv.at(-1);
const queue = new InProcessMessageQueue();
if (mode === "idle") {
  await queue.enqueue("never handled", { delay: { hours: 1 } });
  process.stdout.write("enqueued\n");
} else if (mode === "listening") {
  const controller = new AbortController();
  const listening = queue.listen((message: string) => {
    process.stdout.write(`handled ${message}\n`);
    controller.abort();
  }, { signal: controller.signal });
  await queue.enqueue("later", { delay: { milliseconds: 200 } });
  // Deliberately not awaiting `listening`: a pending promise does not keep a
  // process alive, so only the queue's timer can.
  void listening;
} else {
  throw new Error(`Unknown mode: ${mode}`);
}
