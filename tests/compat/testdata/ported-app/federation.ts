// A small microblog written against Fedify 2.3's API, the way its manual
// teaches: actors with RSA and Ed25519 keys kept in the key–value store as
// JWKs, a followers collection with a counter and cursors, an outbox, notes
// as objects, NodeInfo, and inbox listeners that accept follows.
//
// It is ported to Fedwork by changing its imports and nothing else:
// federation.fedwork.ts is this file with "@fedify/fedify" replaced by
// "@fedwork/core" (ported-app.test.ts checks that the two stay so).
import {
  type Context,
  createFederation,
  exportJwk,
  type Federation,
  generateCryptoKeyPair,
  type HttpMessageSignaturesSpec,
  importJwk,
  InProcessMessageQueue,
  MemoryKvStore,
} from "@fedify/fedify";
import {
  Accept,
  type Actor,
  Create,
  Endpoints,
  Follow,
  isActor,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Undo,
} from "@fedify/vocab";

/** What the app's federation is built with. */
export interface MicroblogOptions {
  /** The signature spec tried first when delivering. */
  readonly firstKnock: HttpMessageSignaturesSpec;
}

/** A post an actor wrote. */
interface Post {
  readonly id: string;
  readonly content: string;
  readonly tags: readonly string[];
}

/** The app: its federation and what its inboxes received. */
export interface Microblog extends AsyncDisposable {
  readonly federation: Federation<void>;
  /** Every activity the inboxes accepted, newest last. */
  readonly received: (Accept | Create | Follow | Undo)[];
  /** The follower ids of each local actor. */
  followersOf(identifier: string): string[];
  /** Sends a Follow from a local actor to a remote one, found by its URI. */
  follow(base: URL, identifier: string, target: URL): Promise<void>;
  /** Undoes that Follow. */
  unfollow(base: URL, identifier: string, target: URL): Promise<void>;
  /**
   * Writes a public note and sends it to the actor's followers; its
   * `#hashtags` file it in the actor's tag collections.
   */
  post(base: URL, identifier: string, content: string): Promise<URL>;
}

const USERS = new Set(["alice", "bob"]);

/**
 * Builds the app.  Its queue's workers run until the app is disposed.
 * @param options The signature spec to try first.
 * @returns The app.
 */
export function createMicroblog(options: MicroblogOptions): Microblog {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    // The peers of the tests are loopback servers.
    allowPrivateAddress: true,
    firstKnock: options.firstKnock,
  });
  const followers = new Map<string, Map<string, Actor>>();
  const posts = new Map<string, Post[]>();
  const received: (Accept | Create | Follow | Undo)[] = [];
  const following = new Map<string, { follow: Follow; actor: Actor }>();

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!USERS.has(identifier)) return null;
      const keys = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: identifier[0].toUpperCase() + identifier.slice(1),
        inbox: ctx.getInboxUri(identifier),
        outbox: ctx.getOutboxUri(identifier),
        followers: ctx.getFollowersUri(identifier),
        endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
        publicKey: keys[0].cryptographicKey,
        assertionMethods: keys.map((key) => key.multikey),
      });
    })
    .setKeyPairsDispatcher(async (_ctx, identifier) => {
      const pairs: CryptoKeyPair[] = [];
      for (const algorithm of ["RSASSA-PKCS1-v1_5", "Ed25519"] as const) {
        const stored = await kv.get<{ privateKey: JsonWebKey; publicKey: JsonWebKey }>([
          "keys",
          identifier,
          algorithm,
        ]);
        if (stored != null) {
          pairs.push({
            privateKey: await importJwk(stored.privateKey, "private"),
            publicKey: await importJwk(stored.publicKey, "public"),
          });
          continue;
        }
        const pair = await generateCryptoKeyPair(algorithm);
        await kv.set(["keys", identifier, algorithm], {
          privateKey: await exportJwk(pair.privateKey),
          publicKey: await exportJwk(pair.publicKey),
        });
        pairs.push(pair);
      }
      return pairs;
    });

  federation
    .setFollowersDispatcher("/users/{identifier}/followers", (_ctx, identifier, cursor) => {
      const all = [...(followers.get(identifier)?.values() ?? [])];
      if (cursor == null) return { items: all };
      const start = Number(cursor);
      const items = all.slice(start, start + 10);
      return {
        items,
        nextCursor: start + 10 < all.length ? String(start + 10) : null,
      };
    })
    .setCounter((_ctx, identifier) => followers.get(identifier)?.size ?? 0)
    .setFirstCursor(() => "0");

  federation
    .setOutboxDispatcher("/users/{identifier}/outbox", (ctx, identifier) => ({
      items: (posts.get(identifier) ?? []).map((post) => createOf(ctx, identifier, post)),
    }))
    .setCounter((_ctx, identifier) => posts.get(identifier)?.length ?? 0);

  // A custom collection per hashtag, newest first, paged by index.
  federation
    .setOrderedCollectionDispatcher(
      "tagged",
      Note,
      "/users/{identifier}/tags/{tag}",
      (ctx, values, cursor) => {
        if (!USERS.has(values.identifier)) return null;
        const tagged = (posts.get(values.identifier) ?? [])
          .filter((post) => post.tags.includes(values.tag))
          .reverse()
          .map((post) => noteOf(ctx, values.identifier, post));
        if (cursor == null) return { items: tagged };
        const start = Number(cursor);
        return {
          items: tagged.slice(start, start + 2),
          nextCursor: start + 2 < tagged.length ? String(start + 2) : null,
        };
      },
    )
    .setCounter((_ctx, values) =>
      (posts.get(values.identifier) ?? []).filter((post) => post.tags.includes(values.tag)).length
    )
    .setFirstCursor(() => "0");

  // A collection only signed requests may read.
  federation
    .setCollectionDispatcher(
      "drafts",
      Note,
      "/users/{identifier}/drafts",
      () => ({ items: [] }),
    )
    .authorize(async (ctx) => await ctx.getSignedKey() != null);

  federation.setObjectDispatcher(
    Note,
    "/users/{identifier}/posts/{id}",
    (ctx, values) => {
      const post = posts.get(values.identifier)?.find((p) => p.id === values.id);
      return post == null ? null : noteOf(ctx, values.identifier, post);
    },
  );

  federation.setNodeInfoDispatcher("/nodeinfo/2.1", () => ({
    software: { name: "ported-microblog", version: "1.0.0" },
    protocols: ["activitypub"],
    usage: {
      users: { total: USERS.size, activeHalfyear: USERS.size, activeMonth: USERS.size },
      localPosts: [...posts.values()].reduce((sum, list) => sum + list.length, 0),
      localComments: 0,
    },
  }));

  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      const target = ctx.parseUri(follow.objectId);
      if (target?.type !== "actor" || follow.id == null) return;
      const follower = await follow.getActor(ctx);
      if (follower?.id == null || !isActor(follower)) return;
      received.push(follow);
      const list = followers.get(target.identifier) ?? new Map<string, Actor>();
      list.set(follower.id.href, follower);
      followers.set(target.identifier, list);
      await ctx.sendActivity(
        { identifier: target.identifier },
        follower,
        new Accept({
          id: new URL(`#accepts/${crypto.randomUUID()}`, ctx.getActorUri(target.identifier)),
          actor: ctx.getActorUri(target.identifier),
          object: follow,
        }),
      );
    })
    .on(Undo, async (ctx, undo) => {
      const object = await undo.getObject(ctx);
      if (!(object instanceof Follow) || undo.actorId == null) return;
      const target = ctx.parseUri(object.objectId);
      if (target?.type !== "actor") return;
      received.push(undo);
      followers.get(target.identifier)?.delete(undo.actorId.href);
    })
    .on(Accept, (_ctx, accept) => {
      received.push(accept);
    })
    .on(Create, (_ctx, create) => {
      received.push(create);
    });

  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });

  return {
    federation,
    received,
    followersOf: (identifier) => [...(followers.get(identifier)?.keys() ?? [])],
    async follow(base, identifier, target) {
      const ctx = federation.createContext(base, undefined);
      const actor = await ctx.lookupObject(target);
      if (!isActor(actor)) throw new Error(`${target.href} is not an actor.`);
      const follow = new Follow({
        id: new URL(`#follows/${crypto.randomUUID()}`, ctx.getActorUri(identifier)),
        actor: ctx.getActorUri(identifier),
        object: actor.id,
      });
      following.set(`${identifier} ${target.href}`, { follow, actor });
      await ctx.sendActivity({ identifier }, actor, follow);
    },
    async unfollow(base, identifier, target) {
      const ctx = federation.createContext(base, undefined);
      const entry = following.get(`${identifier} ${target.href}`);
      if (entry == null) throw new Error(`${identifier} does not follow ${target.href}.`);
      following.delete(`${identifier} ${target.href}`);
      await ctx.sendActivity(
        { identifier },
        entry.actor,
        new Undo({
          id: new URL(`#undos/${crypto.randomUUID()}`, ctx.getActorUri(identifier)),
          actor: ctx.getActorUri(identifier),
          object: entry.follow,
        }),
      );
    },
    async post(base, identifier, content) {
      const ctx = federation.createContext(base, undefined);
      const post: Post = {
        id: crypto.randomUUID(),
        content,
        tags: [...content.matchAll(/#(\w+)/g)].map((match) => match[1].toLowerCase()),
      };
      posts.set(identifier, [...(posts.get(identifier) ?? []), post]);
      await ctx.sendActivity({ identifier }, "followers", createOf(ctx, identifier, post));
      return ctx.getObjectUri(Note, { identifier, id: post.id });
    },
    async [Symbol.asyncDispose]() {
      controller.abort();
      await workers;
    },
  };
}

function noteOf(ctx: Context<void>, identifier: string, post: Post): Note {
  return new Note({
    id: ctx.getObjectUri(Note, { identifier, id: post.id }),
    attribution: ctx.getActorUri(identifier),
    to: PUBLIC_COLLECTION,
    cc: ctx.getFollowersUri(identifier),
    content: post.content,
  });
}

function createOf(ctx: Context<void>, identifier: string, post: Post): Create {
  const note = noteOf(ctx, identifier, post);
  return new Create({
    id: new URL(`${note.id!.href}#create`),
    actor: ctx.getActorUri(identifier),
    to: PUBLIC_COLLECTION,
    cc: ctx.getFollowersUri(identifier),
    object: note,
  });
}
