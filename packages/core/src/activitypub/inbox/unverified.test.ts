import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import { type Activity, Follow } from "@fedify/vocab";
import { signRequest } from "../signatures/sign.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createFederation } from "../../federation/federation.ts";
import type {
  UnverifiedActivityHandler,
  UnverifiedActivityReason,
} from "../../federation/callbacks.ts";
import { DuplicateRegistrationError } from "../../federation/errors.ts";
import {
  registerTestActor,
  serveFederation,
  testKeyPair,
} from "../../federation/testdata/test-support.ts";

type Sign = "good" | "none" | "tampered" | "unknownKey";

/**
 * A sender (alice, whose key it serves) and a receiver (bob) whose inbox
 * has the hook, both on loopback; `send` posts a Follow signed as asked.
 */
async function withPair(
  hook: UnverifiedActivityHandler<void> | undefined,
  fn: (send: (sign: Sign) => Promise<Response>, received: string[]) => Promise<void>,
): Promise<void> {
  const sender = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(sender);
  const receiver = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(receiver);
  const received: string[] = [];
  const setters = receiver.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, follow) => void received.push(follow.id!.href));
  if (hook != null) setters.onUnverifiedActivity(hook);
  const senderServer = await serveFederation(sender, undefined);
  const receiverServer = await serveFederation(receiver, undefined);
  let count = 0;
  try {
    const { privateKey } = await testKeyPair();
    await fn(async (sign) => {
      const inbox = new URL("/users/bob/inbox", receiverServer.url);
      const body = JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: new URL(`/follows/${++count}`, senderServer.url).href,
        type: "Follow",
        actor: new URL("/users/alice", senderServer.url).href,
        object: new URL("/users/bob", receiverServer.url).href,
      });
      let request = new Request(inbox, {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body,
      });
      if (sign !== "none") {
        const keyId = new URL(
          sign === "unknownKey" ? "/no-such-actor#main-key" : "/users/alice#main-key",
          senderServer.url,
        );
        request = await signRequest(request, privateKey, keyId, {
          spec: "draft-cavage-http-signatures-12",
        });
      }
      if (sign === "tampered") {
        request = new Request(inbox, {
          method: "POST",
          headers: request.headers,
          body: `${body} `,
        });
      }
      const response = await fetch(request);
      await response.body?.cancel();
      return response;
    }, received);
  } finally {
    await senderServer.close();
    await receiverServer.close();
  }
}

test("onUnverifiedActivity() sees an unsigned activity and may answer for it", async () => {
  const seen: { activity: Activity; reason: UnverifiedActivityReason }[] = [];
  await withPair((_ctx, activity, reason) => {
    seen.push({ activity, reason });
    return new Response(null, { status: 202 });
  }, async (send, received) => {
    const response = await send("none");
    assertEquals(response.status, 202);
    assertEquals(seen.length, 1);
    assert(seen[0].activity instanceof Follow);
    assertEquals(seen[0].reason.type, "noSignature");
    assertEquals(received, [], "the listeners never see an unverified activity");
  });
});

test("onUnverifiedActivity() sees a failing signature with its key, and 401 stays the default", async () => {
  const seen: UnverifiedActivityReason[] = [];
  await withPair((_ctx, _activity, reason) => void seen.push(reason), async (send, received) => {
    const tampered = await send("tampered");
    assertEquals(tampered.status, 401);
    const unknownKey = await send("unknownKey");
    assertEquals(unknownKey.status, 401);
    assertEquals(seen.map((reason) => reason.type), ["invalidSignature", "keyFetchError"]);
    assertEquals(seen[0].detail, "digestMismatch");
    assert(seen[1].type === "keyFetchError");
    assertEquals(new URL(seen[1].keyId).pathname, "/no-such-actor");
    assertEquals(received, []);
  });
});

test("onUnverifiedActivity() is not called for a good signature", async () => {
  let calls = 0;
  await withPair(() => void calls++, async (send, received) => {
    assertEquals((await send("good")).status, 202);
    assertEquals(calls, 0);
    assertEquals(received.length, 1);
  });
});

test("a throwing onUnverifiedActivity() hook leaves the 401", async () => {
  await withPair(() => {
    throw new Error("the hook broke");
  }, async (send) => {
    assertEquals((await send("none")).status, 401);
  });
});

test("without onUnverifiedActivity() an unsigned activity gets 401", async () => {
  await withPair(undefined, async (send, received) => {
    assertEquals((await send("none")).status, 401);
    assertEquals(received, []);
  });
});

test("onUnverifiedActivity() refuses a second hook and a non-function", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const setters = federation.setInboxListeners("/users/{identifier}/inbox");
  setters.onUnverifiedActivity(() => {});
  assertThrows(() => setters.onUnverifiedActivity(() => {}), DuplicateRegistrationError);
  const other = createFederation<void>({ kv: new MemoryKvStore() })
    .setInboxListeners("/users/{identifier}/inbox");
  assertThrows(
    () => other.onUnverifiedActivity("no" as unknown as UnverifiedActivityHandler<void>),
    TypeError,
    "onUnverifiedActivity",
  );
});
