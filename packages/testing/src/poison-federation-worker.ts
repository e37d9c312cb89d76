// The worker process of the federation poison test (see
// poison-federation-test.ts): a federation built like the web process's,
// running the inbox queue.  Its inbox listener SIGKILLs this process on a
// Create whose note says "poison", and prints RECORDED <activity id> for
// any other; a failed event with reason "poison" prints QUARANTINED
// <message id> <deliveries>.
//
// Usage: <runtime> poison-federation-worker.ts <factory module URL> <namespace> <leaseMs>
//        <maxDeliveries>
import process from "node:process";
import { MemoryKvStore, PoisonMessageError } from "@fedwork/core";
import { type Create, Note } from "@fedify/vocab";
import { definePoisonApp } from "./poison-federation-app.ts";
import { loadQueueFactory } from "./queue-harness.ts";
import { say } from "./worker-process.ts";

const [factoryModule, namespace, leaseText, limitText] = process.argv.slice(2);
if (factoryModule == null || namespace == null || leaseText == null || limitText == null) {
  process.stderr.write(
    "Usage: poison-federation-worker.ts <factory module URL> <namespace> <leaseMs> " +
      "<maxDeliveries>\n",
  );
  process.exit(2);
}

const factory = await loadQueueFactory(factoryModule);
const queue = await factory.createQueue(namespace, { leaseMs: Number(leaseText) });
const builder = definePoisonApp(async (create: Create) => {
  const note = await create.getObject();
  const content = note instanceof Note ? note.content?.toString() : undefined;
  if (content === "poison") {
    await say(`POISON ${create.id?.href}`);
    process.kill(process.pid, "SIGKILL");
    await new Promise<never>(() => {});
  }
  await say(`RECORDED ${create.id?.href}`);
});
const federation = await builder.build({
  kv: new MemoryKvStore(),
  queue,
  manuallyStartQueue: true,
  maxDeliveries: Number(limitText),
});
federation.on("failed", async (event) => {
  if (event.reason !== "poison") return;
  const deliveries = event.error instanceof PoisonMessageError ? event.error.deliveries : "?";
  await say(`QUARANTINED ${event.messageId} ${deliveries}`);
});
await say("READY");
await federation.startQueue(undefined, { queue: "inbox" });
