import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { signRequest } from "../signatures/sign.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createFederation } from "../../federation/federation.ts";
import type { IdempotencyKeyCallback, IdempotencyStrategy } from "../../federation/registry-api.ts";
import {
  registerTestActor,
  serveFederation,
  testKeyPair,
} from "../../federation/testdata/test-support.ts";

/**
 * A sender (alice) and a receiver (bob) whose inbox deduplicates with the
 * callback, both on loopback; `send(n)` posts a signed Follow with the id
 * `/follows/n`, and `received` lists the ids the listener ran for.
 */
async function withPair(
  callback: IdempotencyKeyCallback<void>,
  fn: (send: (n: number) => Promise<number>, received: string[]) => Promise<void>,
): Promise<void> {
  const sender = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(sender);
  const receiver = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(receiver);
  const received: string[] = [];
  receiver.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, follow) => void received.push(new URL(follow.id!).pathname))
    .withIdempotency(callback);
  const senderServer = await serveFederation(sender, undefined);
  const receiverServer = await serveFederation(receiver, undefined);
  try {
    const { privateKey } = await testKeyPair();
    await fn(async (n) => {
      const request = await signRequest(
        new Request(new URL("/users/bob/inbox", receiverServer.url), {
          method: "POST",
          headers: { "Content-Type": "application/activity+json" },
          body: JSON.stringify({
            "@context": "https://www.w3.org/ns/activitystreams",
            id: new URL(`/follows/${n}`, senderServer.url).href,
            type: "Follow",
            actor: new URL("/users/alice", senderServer.url).href,
            object: new URL("/users/bob", receiverServer.url).href,
          }),
        }),
        privateKey,
        new URL("/users/alice#main-key", senderServer.url),
      );
      const response = await fetch(request);
      await response.body?.cancel();
      return response.status;
    }, received);
  } finally {
    await senderServer.close();
    await receiverServer.close();
  }
}

test("withIdempotency() with a callback deduplicates by the key it returns", async () => {
  const recipients: (string | null)[] = [];
  await withPair((ctx, activity) => {
    recipients.push(ctx.recipient);
    // One Follow per followee, whatever its id.
    return activity instanceof Follow ? `follow ${activity.objectId?.href}` : null;
  }, async (send, received) => {
    assertEquals(await send(1), 202);
    assertEquals(await send(2), 202);
    assertEquals(received, ["/follows/1"]);
    assertEquals(recipients, ["bob", "bob"]);
  });
});

test("an idempotency callback returning null turns deduplication off", async () => {
  await withPair(() => null, async (send, received) => {
    assertEquals(await send(1), 202);
    assertEquals(await send(1), 202);
    assertEquals(received, ["/follows/1", "/follows/1"]);
  });
});

test("an idempotency callback that throws falls back to the per-inbox key", async () => {
  await withPair(() => {
    throw new Error("the callback broke");
  }, async (send, received) => {
    assertEquals(await send(1), 202);
    assertEquals(await send(1), 202);
    assertEquals(await send(2), 202);
    assertEquals(received, ["/follows/1", "/follows/2"]);
  });
});

test("withIdempotency() takes a callback and refuses other values", () => {
  const setters = createFederation<void>({ kv: new MemoryKvStore() })
    .setInboxListeners("/users/{identifier}/inbox");
  setters.withIdempotency(() => null);
  assertThrows(
    () => setters.withIdempotency(42 as unknown as IdempotencyStrategy),
    TypeError,
    "or a callback",
  );
});
