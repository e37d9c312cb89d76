// A worker process of the many-workers soak (see soak.ts): imports the
// backend's factory module, runs `listeners` listen() calls on one queue
// instance and reports each handler's start ("S <id>") and end ("D <id>")
// on stdout, with synchronous writes, so that a line written before the
// handler returned reaches the parent even if the process is SIGKILLed
// right after.
//
// Usage: <runtime> soak-worker.ts <factory module URL> <namespace> <leaseMs>
//        <listeners> <handlerMs>
import { writeSync } from "node:fs";
import process from "node:process";
import { loadQueueFactory } from "./queue-harness.ts";

const [factoryModule, namespace, leaseText, listenersText, handlerText] = process.argv.slice(2);
if (handlerText == null) {
  process.stderr.write(
    "Usage: soak-worker.ts <factory module URL> <namespace> <leaseMs> <listeners> <handlerMs>\n",
  );
  process.exit(2);
}
const handlerMs = Number(handlerText);

// Keeps the event loop alive even if the queue's own polling does not.
setInterval(() => {}, 1 << 30);

const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace!, { leaseMs: Number(leaseText) });
const listening: Promise<void>[] = [];
for (let i = 0; i < Number(listenersText); i++) {
  listening.push(queue.listen(async (message: { i: number }) => {
    writeSync(1, `S ${message.i}\n`);
    if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
    writeSync(1, `D ${message.i}\n`);
  }));
}
writeSync(1, "READY\n");
await Promise.all(listening);
