// The inbox refuses activities from blocked hosts with 403 before any key
// fetch: a real federation on loopback, signed requests, and key hosts on
// other loopback addresses that record whether they were asked.
import { assert, assertEquals, test, withLogs } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createFederation } from "../../federation/federation.ts";
import { post } from "../../federation/testdata/inbox-test-support.ts";
import { serveFederation, testKeyPair } from "../../federation/testdata/test-support.ts";
import { startLoopbackHost } from "../host-policy/testdata/loopback-hosts.ts";

const { privateKey } = await testKeyPair();

async function withInbox(
  options: {
    readonly skipSignatureVerification?: boolean;
    readonly hostPolicy?: { readonly block: (host: string) => boolean };
  },
  fn: (inbox: URL, received: unknown[]) => Promise<void>,
): Promise<void> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    hostPolicy: { block: ["127.0.0.2"] },
    ...options,
  });
  const received: unknown[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, activity) => void received.push(activity));
  await using server = await serveFederation(federation, undefined);
  await fn(new URL("/inbox", server.url), received);
}

function followBy(actor: URL): string {
  return JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: new URL("/follows/1", actor).href,
    type: "Follow",
    actor: actor.href,
    object: "https://example.com/users/bob",
  });
}

test("an activity whose actor or signing key is on a blocked host gets 403, and no key is fetched", async () => {
  await using blocked = await startLoopbackHost("127.0.0.2", () => ({ status: 404 }));
  await using open = await startLoopbackHost("127.0.0.3", () => ({ status: 404 }));
  await withInbox({}, async (inbox, received) => {
    await withLogs(async (records) => {
      const byBlockedActor = await post(
        inbox,
        followBy(new URL("/users/mallory", blocked.url)),
        { keyId: new URL("/users/mallory#main-key", open.url), privateKey },
      );
      const byBlockedKey = await post(
        inbox,
        followBy(new URL("/users/eve", open.url)),
        { keyId: new URL("/users/eve#main-key", blocked.url), privateKey },
      );
      assertEquals([byBlockedActor.status, byBlockedKey.status], [403, 403]);
      assertEquals(blocked.requests.length + open.requests.length, 0);
      const refusals = records.filter((record) =>
        record.category.join(".") === "fedwork.federation.inbox" &&
        record.properties.reason === "blockedHost"
      );
      assert(refusals.length >= 1);
      assertEquals(refusals[0].properties.status, 403);
    });
    // The same request from a host not blocked makes the inbox fetch the key.
    const byOpen = await post(
      inbox,
      followBy(new URL("/users/eve", open.url)),
      { keyId: new URL("/users/eve#main-key", open.url), privateKey },
    );
    assertEquals(byOpen.status, 401);
    assert(open.requests.some((request) => request.path.startsWith("/users/eve")));
    assertEquals(blocked.requests.length, 0);
    assertEquals(received.length, 0);
  });
});

test("with skipSignatureVerification, an activity whose actor is on a blocked host (however spelt) gets 403", async () => {
  await withInbox({ skipSignatureVerification: true }, async (inbox, received) => {
    const refused = await post(inbox, followBy(new URL("http://127.0.0.2.:8080/users/m")), null);
    assertEquals(refused.status, 403);
    const accepted = await post(inbox, followBy(new URL("http://127.0.0.3/users/m")), null);
    assertEquals(accepted.status, 202);
    assertEquals(received.length, 1);
  });
});

test("a block function that throws answers 500, for the sender to try again, and fetches no key", async () => {
  await using open = await startLoopbackHost("127.0.0.3", () => ({ status: 404 }));
  const hostPolicy = {
    block: (): boolean => {
      throw new Error("the moderation service is down");
    },
  };
  await withInbox({ hostPolicy }, async (inbox, received) => {
    const response = await withLogs(() =>
      post(
        inbox,
        followBy(new URL("/users/eve", open.url)),
        { keyId: new URL("/users/eve#main-key", open.url), privateKey },
      )
    );
    assertEquals(response.status, 500);
    assertEquals(open.requests.length, 0);
    assertEquals(received.length, 0);
  });
});
