// ctx.routeActivity() between two federations on loopback: the origin
// (Alice's, with RSA and Ed25519 keys, serving one activity at its id) and
// the local one whose Create listener records what it gets.
import { assertEquals, startTestServer, test } from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../activitypub/actors/keys.ts";
import { signObject } from "../activitypub/proofs/proof.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation, type Federation } from "./federation.ts";
import { testKeyPair } from "./testdata/test-support.ts";

const ed25519 = await generateCryptoKeyPair("Ed25519");

async function withOrigin(
  fn: (url: (path: string) => URL, origin: Federation<void>) => Promise<void>,
): Promise<void> {
  const origin = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  origin.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: pairs[0].cryptographicKey,
      assertionMethods: pairs.map((pair) => pair.multikey),
    });
  }).setKeyPairsDispatcher(async () => [await testKeyPair(), ed25519]);
  const server = await startTestServer(async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/activities/1") {
      return new Response(
        JSON.stringify(await created(new URL("/", request.url), "As served").toJsonLd()),
        {
          headers: { "Content-Type": "application/activity+json" },
        },
      );
    }
    return await origin.fetch(request, { contextData: undefined });
  });
  try {
    await fn((path) => new URL(path, server.url), origin);
  } finally {
    await server.close();
  }
}

function created(base: URL, content: string, id = "/activities/1"): Create {
  return new Create({
    id: new URL(id, base),
    actor: new URL("/users/alice", base),
    object: new Note({ attribution: new URL("/users/alice", base), content }),
  });
}

function localFederation(queue?: InProcessMessageQueue) {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    ...(queue == null ? {} : { queue, manuallyStartQueue: true }),
  });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  const received: { recipient: string | null; content: string | undefined }[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Create, async (ctx, create) => {
      const note = await create.getObject(ctx);
      received.push({ recipient: ctx.recipient, content: note?.content?.toString() });
    });
  const ctx = federation.createContext(new URL("https://local.example/"), undefined);
  return { federation, ctx, received };
}

test("routeActivity() fetches a proofless activity from its origin and routes that copy", async () => {
  await withOrigin(async (url) => {
    const { ctx, received } = localFederation();
    assertEquals(await ctx.routeActivity("bob", created(url("/"), "As claimed")), true);
    assertEquals(received, [{ recipient: "bob", content: "As served" }]);
  });
});

test("routeActivity() refuses what its origin does not serve, or an actor on another origin", async () => {
  await withOrigin(async (url) => {
    const { ctx, received } = localFederation();
    // Not served: 404.
    assertEquals(await ctx.routeActivity(null, created(url("/"), "x", "/activities/2")), false);
    // The actor is not on the activity's origin.
    const foreign = new Create({
      id: url("/activities/1"),
      actor: new URL("https://elsewhere.example/users/mallory"),
      object: new Note({ content: "x" }),
    });
    assertEquals(await ctx.routeActivity(null, foreign), false);
    assertEquals(received, []);
  });
});

test("routeActivity() accepts an activity by its actor's proof, and refuses a forged one", async () => {
  await withOrigin(async (url, origin) => {
    const { ctx, received } = localFederation();
    const pairs = await origin.createContext(url("/"), undefined).getActorKeyPairs("alice");
    const keyId = pairs[1].multikey.id!;
    // An id the origin does not serve: only the proof can vouch for it.
    const activity = created(url("/"), "Signed", "/activities/unserved");
    const signed = await signObject(await activity.toJsonLd() as Record<string, unknown>, {
      privateKey: ed25519.privateKey,
      keyId,
    });
    const proven = await Create.fromJsonLd(signed);
    assertEquals(await ctx.routeActivity("bob", proven), true);
    const forged = await Create.fromJsonLd({
      ...signed,
      object: { ...(signed.object as Record<string, unknown>), content: "Forged" },
    });
    assertEquals(await ctx.routeActivity("bob", forged), false);
    assertEquals(received, [{ recipient: "bob", content: "Signed" }]);
  });
});

test("routeActivity() enqueues into the inbox queue unless immediate", async () => {
  await withOrigin(async (url) => {
    const queue = new InProcessMessageQueue();
    const { ctx, received } = localFederation(queue);
    const enqueued: unknown[] = [];
    const enqueue = queue.enqueue.bind(queue);
    queue.enqueue = (message, options) => {
      enqueued.push(message);
      return enqueue(message, options);
    };
    assertEquals(await ctx.routeActivity("bob", created(url("/"), "x")), true);
    assertEquals([enqueued.length, received.length], [1, 0]);
    // Another inbox, so that it is not a duplicate of the first.
    assertEquals(
      await ctx.routeActivity("carol", created(url("/"), "x"), { immediate: true }),
      true,
    );
    assertEquals([enqueued.length, received.length], [1, 1]);
  });
});

test("routeActivity() runs an activity once, however often it is routed to the same inbox", async () => {
  await withOrigin(async (url) => {
    const { ctx, received } = localFederation();
    assertEquals(await ctx.routeActivity("bob", created(url("/"), "x")), true);
    assertEquals(await ctx.routeActivity("bob", created(url("/"), "x")), true);
    assertEquals(received.length, 1);
    // Another personal inbox is another recipient (the default "per-inbox").
    assertEquals(await ctx.routeActivity("carol", created(url("/"), "x")), true);
    assertEquals(received.map((r) => r.recipient), ["bob", "carol"]);
  });
});

test("routeActivity() checks an activity whose proof is too old against its origin instead", async () => {
  await withOrigin(async (url, origin) => {
    const { ctx, received } = localFederation();
    const pairs = await origin.createContext(url("/"), undefined).getActorKeyPairs("alice");
    const keyId = pairs[1].multikey.id!;
    const sign = async (activity: Create) =>
      await Create.fromJsonLd(
        await signObject(await activity.toJsonLd() as Record<string, unknown>, {
          privateKey: ed25519.privateKey,
          keyId,
          created: new Date("2019-06-01T00:00:00Z"),
        }),
      );
    // Its origin does not serve it: a proof from 2019 vouches for nothing.
    assertEquals(
      await ctx.routeActivity("bob", await sign(created(url("/"), "Old", "/activities/2"))),
      false,
    );
    // Its origin serves it: routed as served, as a proofless one would be.
    assertEquals(await ctx.routeActivity("bob", await sign(created(url("/"), "Old"))), true);
    assertEquals(received, [{ recipient: "bob", content: "As served" }]);
  });
});
