// The poison-message test on classic queues.  The conformance suite runs
// it with an ordering key (quorum-conformance.test.ts does); a classic
// queue counts a redelivered message in a copy that joins the back of its
// queue (see delivery.ts), so a keyed poison message loses its place and
// the message behind it runs first: here the two messages have no key.
import { test } from "@fedify/fixture";
import { runPoisonTest } from "@fedwork/testing";
import type { AmqpMessageQueue } from "./message-queue.ts";
import { cleanup, createQueue } from "./testdata/conformance-factory.ts";

const factoryModule = new URL("./testdata/conformance-factory.ts", import.meta.url).href;

test("AmqpMessageQueue (classic queues): a message that kills every worker handling it is counted in copies until it is quarantined", async () => {
  const namespace = `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
  const queues: AmqpMessageQueue[] = [];
  try {
    await runPoisonTest(
      {
        namespace,
        leaseMs: 1500,
        createQueue: () => {
          const queue = createQueue(namespace);
          queues.push(queue);
          return Promise.resolve(queue);
        },
      },
      factoryModule,
      { orderingKey: false, kill: "oom" },
    );
  } finally {
    for (const queue of queues) await queue[Symbol.asyncDispose]();
    await cleanup(namespace);
  }
});
