// processQueuedMessage()'s deliveryCount option, which push-based queue
// adapters (Cloudflare Queues) pass their platform's hand-out count with.
import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import { createFederation } from "./federation.ts";

async function followMessage(): Promise<InboxMessage> {
  const follow = new Follow({
    id: new URL("https://remote.example/follows/1"),
    actor: new URL("https://remote.example/users/bob"),
    object: new URL("https://example.com/users/alice"),
  });
  return {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: await follow.toJsonLd(),
    identifier: "alice",
  };
}

test("processQueuedMessage() runs a message given its deliveryCount", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  let ran = 0;
  federation.setInboxListeners("/users/{identifier}/inbox").on(Follow, () => void ran++);
  await federation.processQueuedMessage(undefined, await followMessage(), { deliveryCount: 1 });
  await federation.processQueuedTask(undefined, await followMessage(), { deliveryCount: 2 });
  assertEquals(ran, 2);
});

test("processQueuedMessage() refuses a deliveryCount that is not a positive integer", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  let ran = 0;
  federation.setInboxListeners("/users/{identifier}/inbox").on(Follow, () => void ran++);
  for (const deliveryCount of [0, -1, 1.5, Number.NaN, "2" as unknown as number]) {
    await assertRejects(
      async () =>
        federation.processQueuedMessage(undefined, await followMessage(), { deliveryCount }),
      RangeError,
      "deliveryCount",
    );
  }
  assertEquals(ran, 0);
});
