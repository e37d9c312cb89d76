// Two Fedwork servers on loopback, each with its own SQLite queue, follow
// each other and exchange a note over signed HTTP: the whole path from
// sendActivity() through the outbox queue, signed delivery, inbox
// verification and the inbox queue to the listener.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertEquals, test } from "@fedify/fixture";
import { Accept, type Actor, Create, Follow, Note, Person, PUBLIC_COLLECTION } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  generateCryptoKeyPair,
  MemoryKvStore,
} from "@fedwork/core";
import { SqliteMessageQueue } from "@fedwork/sqlite";
import { deferred, type FetchServer, serveFetch, within } from "./support.ts";

/** A tiny social app: actors with keys, followers, and what it received. */
interface App extends AsyncDisposable {
  readonly federation: Federation<void>;
  readonly server: FetchServer;
  readonly followers: Map<string, Actor>;
  readonly accepted: Promise<Accept>;
  readonly notes: Promise<Note>;
  url(path: string): URL;
}

async function startApp(directory: string, name: string): Promise<App> {
  const queue = new SqliteMessageQueue({
    path: join(directory, `${name}.sqlite`),
    pollInterval: { milliseconds: 50 },
  });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  const keys = new Map<string, CryptoKeyPair>();
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      followers: ctx.getFollowersUri(identifier),
      publicKey: pairs[0].cryptographicKey,
      assertionMethods: pairs.map((pair) => pair.multikey),
    });
  }).setKeyPairsDispatcher(async (_ctx, identifier) => {
    if (!keys.has(identifier)) keys.set(identifier, await generateCryptoKeyPair());
    return [keys.get(identifier)!];
  });
  const followers = new Map<string, Actor>();
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => ({
    items: [...followers.values()],
  }));
  const accepted = deferred<Accept>();
  const notes = deferred<Note>();
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      const followee = ctx.parseUri(follow.objectId);
      if (followee?.type !== "actor") return;
      const follower = await follow.getActor({
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.documentLoader,
      });
      if (follower?.id == null) return;
      followers.set(follower.id.href, follower);
      await ctx.sendActivity(
        { identifier: followee.identifier },
        follower,
        new Accept({
          id: new URL(`#accepts/${crypto.randomUUID()}`, ctx.getActorUri(followee.identifier)),
          actor: ctx.getActorUri(followee.identifier),
          object: follow,
        }),
      );
    })
    .on(Accept, (_ctx, accept) => accepted.resolve(accept))
    .on(Create, async (ctx, create) => {
      const object = await create.getObject({
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.documentLoader,
      });
      if (object instanceof Note) notes.resolve(object);
    });
  const server = await serveFetch((request) =>
    federation.fetch(request, { contextData: undefined })
  );
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  return {
    federation,
    server,
    followers,
    accepted: accepted.promise,
    notes: notes.promise,
    url: (path) => new URL(path, server.url),
    async [Symbol.asyncDispose]() {
      controller.abort();
      await workers;
      await server.close();
      await queue[Symbol.asyncDispose]();
    },
  };
}

test("two Fedwork servers follow each other and exchange a note through SQLite queues", async () => {
  const directory = await mkdtemp(join(tmpdir(), "fedwork-two-servers-"));
  try {
    await using alice = await startApp(directory, "alice");
    await using bob = await startApp(directory, "bob");
    const aliceCtx = alice.federation.createContext(alice.server.url, undefined);
    const bobUri = bob.url("/users/bob");
    await aliceCtx.sendActivity(
      { identifier: "alice" },
      { id: bobUri, inboxId: bob.url("/users/bob/inbox") },
      new Follow({
        id: alice.url("/follows/1"),
        actor: alice.url("/users/alice"),
        object: bobUri,
      }),
    );
    // Bob's listener stored alice as a follower and sent back an Accept.
    const accept = await within(alice.accepted, "alice to receive the Accept");
    assertEquals(accept.actorId?.href, bobUri.href);
    // The embedded Follow is on alice's origin: reading it would refetch it,
    // so look at its id only.
    assertEquals(accept.objectId?.href, alice.url("/follows/1").href);
    assertEquals([...bob.followers.keys()], [alice.url("/users/alice").href]);

    const bobCtx = bob.federation.createContext(bob.server.url, undefined);
    await bobCtx.sendActivity(
      { identifier: "bob" },
      "followers",
      new Create({
        id: bob.url("/creates/1"),
        actor: bobUri,
        to: PUBLIC_COLLECTION,
        object: new Note({
          id: bob.url("/notes/1"),
          attribution: bobUri,
          to: PUBLIC_COLLECTION,
          content: "Hello, followers!",
        }),
      }),
    );
    const note = await within(alice.notes, "alice to receive bob's note");
    assertEquals(note.content?.toString(), "Hello, followers!");
    assertEquals(note.id?.href, bob.url("/notes/1").href);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
