// The microblog's federation: actors with persisted keys, a followers
// collection, notes, NodeInfo, the inbox listeners, and the typed tasks it
// really uses (the follow import, in durable steps, is in follow-import.ts).
import {
  Accept,
  Create,
  Follow,
  isActor,
  Like,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Undo,
} from "@fedify/vocab";
import {
  createFederation,
  type DurationInput,
  exportJwk,
  type Federation,
  fetchRemote,
  generateCryptoKeyPair,
  importJwk,
  type KvStore,
  type MessageQueue,
  PermanentError,
  PrivateAddressError,
  RemoteRequestError,
  type RemoteResponse,
  UnacceptableContentTypeError,
} from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import * as v from "valibot";
import { z } from "zod";
import { defineFollowImport, parseImportList } from "./follow-import.ts";
import { renderNoteContent } from "./html.ts";
import { newPostId, type Post, type Store } from "./store.ts";
import { noteVisibility } from "./visibility.ts";

const logger = getLogger(["fedwork", "microblog"]);

/** Options for {@link createMicroblog}. */
export type MicroblogOptions =
  & MicroblogSettings
  & (
    | {
      /** The federation's KV store (keys cache, idempotency, schedules). */
      readonly kv: KvStore;
      /** The queue for activities and tasks. */
      readonly queue: MessageQueue;
    }
    | {
      /**
       * A federation to build on instead of one made from `kv` and
       * `queue`: the tests give one from `@fedwork/testing/app`.
       */
      readonly federation: Federation<void>;
    }
  );

/** What {@link MicroblogOptions} holds besides the federation's engines. */
export interface MicroblogSettings {
  /** The public origin, e.g. `http://127.0.0.1:8000`. */
  readonly origin: URL;
  /** The app's own data. */
  readonly store: Store;
  /** Lets the server talk to loopback peers (the demo); never in production. */
  readonly allowPrivateAddress: boolean;
  /** How long after an accepted Follow the welcome note is sent. */
  readonly welcomeDelay: DurationInput;
  /** How often the digest runs. */
  readonly digestEvery: DurationInput;
}

/** The federation and what the web routes do with it. */
export interface Microblog {
  readonly federation: Federation<void>;
  readonly store: Store;
  readonly origin: URL;
  /** Creates a local user with fresh keys, unless it exists. */
  createUser(name: string): Promise<void>;
  /** Sends a Follow from `user` to a handle (`@bob@host`) or an actor URL. */
  follow(user: string, target: string): Promise<string>;
  /** Sends an Undo of `user`'s Follow of an actor, by its URL. */
  unfollow(user: string, actorId: string): Promise<void>;
  /** Publishes a note to `user`'s followers; returns the post. */
  post(user: string, content: string): Promise<Post>;
  /** Sends a Like of a remote note, by its URL. */
  like(user: string, noteUrl: string): Promise<void>;
  /**
   * Starts the import-follows task: follows every account of a list (one a
   * line) and waits for their Accepts.
   * @returns The task's id.
   * @throws {RangeError} When the list has no account or more than 100.
   */
  importFollows(user: string, list: string): Promise<string>;
  /** Registers the recurring digest (safe at every start). */
  scheduleDigest(): Promise<void>;
}

/** The first http(s) URL in a text. */
export function firstLink(text: string): string | undefined {
  return text.match(/https?:\/\/[^\s<>"]+/)?.[0];
}

/** Builds the microblog on a federation. */
export function createMicroblog(options: MicroblogOptions): Microblog {
  const { store, origin } = options;
  const federation = "federation" in options ? options.federation : createFederation<void>({
    kv: options.kv,
    queue: options.queue,
    origin,
    manuallyStartQueue: true,
    allowPrivateAddress: options.allowPrivateAddress,
    userAgent: "FedworkMicroblog/0.0.0",
  });
  const keyCache = new Map<string, Promise<CryptoKeyPair[]>>();

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      const user = await store.getUser(identifier);
      if (user == null) return null;
      const pairs = await ctx.getActorKeyPairs(identifier);
      return new Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: identifier,
        summary: `${identifier} posts here, on a Fedwork microblog.`,
        url: ctx.getActorUri(identifier),
        inbox: ctx.getInboxUri(identifier),
        followers: ctx.getFollowersUri(identifier),
        publicKey: pairs[0].cryptographicKey,
        assertionMethods: pairs.map((pair) => pair.multikey),
      });
    })
    .setKeyPairsDispatcher((_ctx, identifier) => {
      let pairs = keyCache.get(identifier);
      if (pairs == null) {
        pairs = store.getUser(identifier).then((user) => {
          // Not cached while the user does not exist: another process may
          // create it.
          if (user == null) keyCache.delete(identifier);
          return Promise.all(
            (user?.keys ?? []).map(async (jwk) => ({
              privateKey: await importJwk(jwk.privateKey, "private"),
              publicKey: await importJwk(jwk.publicKey, "public"),
            })),
          );
        });
        keyCache.set(identifier, pairs);
      }
      return pairs;
    });

  federation.setFollowersDispatcher("/users/{identifier}/followers", async (_ctx, identifier) => ({
    items: (await store.listFollowers(identifier)).map((follower) => ({
      id: new URL(follower.id),
      inboxId: new URL(follower.inbox),
    })),
  }));

  // Anyone may GET a post's URI: every post is public (post() addresses it
  // to the Public collection).  The only non-public notes this server
  // writes, the direct welcome notes, are not stored and have no route, so
  // a GET of their id answers 404.  An app that stores followers-only or
  // direct posts must return null here for them unless the request is
  // signed by an addressee (`.authorize()` with `ctx.getSignedKeyOwner()`),
  // and must likewise keep them out of an outbox collection served to
  // unsigned requests.  This app registers no outbox dispatcher.
  federation.setObjectDispatcher(Note, "/users/{identifier}/posts/{id}", async (ctx, values) => {
    const post = await store.getPost(values.identifier, values.id);
    return post == null
      ? null
      : toNote(ctx.getActorUri(post.author), ctx.getObjectUri(Note, values), post);
  });

  federation.setNodeInfoDispatcher("/nodeinfo/2.1", async () => {
    const users = await store.listUsers();
    let localPosts = 0;
    for (const user of users) localPosts += (await store.listPosts(user.name)).length;
    return {
      software: { name: "fedwork-microblog", version: "0.0.0" },
      protocols: ["activitypub"],
      openRegistrations: false,
      usage: { users: { total: users.length }, localPosts },
    };
  });

  // welcome-note: a direct note to a new follower, some time after the
  // Accept (Zod schema).
  const welcomeNote = federation.defineTask("welcome-note", {
    schema: z.object({ user: z.string(), follower: z.url() }),
    async handler(ctx, { user, follower }) {
      const known = (await store.listFollowers(user)).find((f) => f.id === follower);
      // Unfollowed in the meantime: nothing to say.
      if (known == null) return;
      const actorUri = ctx.getActorUri(user);
      const id = new URL(`${actorUri.href}/welcome/${crypto.randomUUID()}`);
      const to = new URL(follower);
      await ctx.sendActivity(
        { identifier: user },
        { id: to, inboxId: new URL(known.inbox) },
        new Create({
          id: new URL(`${id.href}#create`),
          actor: actorUri,
          to,
          object: new Note({
            id,
            attribution: actorUri,
            to,
            content: `<p>Welcome, ${known.handle}! Thanks for following me.</p>`,
          }),
        }),
      );
      logger.info("Sent a welcome note from {user} to {follower}.", { user, follower });
    },
  });

  // link-preview: fetch the first link of a new post and keep its <title>
  // (Valibot schema).
  const linkPreview = federation.defineTask("link-preview", {
    schema: v.object({
      author: v.string(),
      postId: v.string(),
      url: v.pipe(v.string(), v.url()),
    }),
    async handler(ctx, { author, postId, url }) {
      // A post's link is anyone's input: it goes through the core's
      // outgoing-HTTP module, which keeps it off the server's own network
      // (at every redirect) and bounds its time and size.
      let response: RemoteResponse;
      try {
        response = await fetchRemote(url, {
          headers: { Accept: "text/html" },
          userAgent: "FedworkMicroblog/0.3 (+https://github.com/fedwork)",
          allowPrivateAddress: options.allowPrivateAddress ?? false,
          timeout: { seconds: 10 },
          // The <title> is near the top; the rest is not read.
          maxBodyBytes: 100_000,
          oversizedBody: "truncate",
          acceptContentTypes: ["text/html", "application/xhtml+xml"],
          signal: ctx.task.signal,
        });
      } catch (error) {
        // Retrying would not change these answers.
        if (error instanceof PrivateAddressError || error instanceof UnacceptableContentTypeError) {
          throw new PermanentError(`Not previewing ${url}: ${error.message}`, { cause: error });
        }
        throw error;
      }
      // The page's server failing is no bug here: a RemoteRequestError is
      // logged at each retry with its message, not a stack trace.
      if (!response.ok) throw new RemoteRequestError(url, `${url} answered ${response.status}.`);
      const html = response.text();
      const title = html.match(/<title[^>]*>([^<]*)<\/title>/i)?.[1]?.trim() ?? url;
      const post = await store.getPost(author, postId);
      if (post == null) return;
      await store.savePost({ ...post, preview: { url, title: decodeEntities(title) } });
      logger.info("Stored the preview of {url} for post {postId}.", { url, postId });
    },
  });

  // refresh-counts: recount a post's likes.  Enqueued on every Like with an
  // ordering key per post, so two recounts of one post never race.
  const refreshCounts = federation.defineTask("refresh-counts", {
    schema: v.object({ author: v.string(), postId: v.string() }),
    async handler(_ctx, { author, postId }) {
      const post = await store.getPost(author, postId);
      if (post == null) return;
      await store.savePost({ ...post, likes: await store.countLikes(author, postId) });
    },
  });

  // digest: a recurring summary of the server, kept for the home page.
  const digest = federation.defineTask("digest", {
    schema: z.object({}),
    async handler() {
      const users = await store.listUsers();
      let posts = 0;
      let followers = 0;
      for (const user of users) {
        posts += (await store.listPosts(user.name)).length;
        followers += (await store.listFollowers(user.name)).length;
      }
      await store.saveDigest({
        at: new Date().toISOString(),
        users: users.length,
        posts,
        followers,
      });
      logger.info("Digest: {users} users, {posts} posts, {followers} followers.", {
        users: users.length,
        posts,
        followers,
      });
    },
  });

  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      const followee = ctx.parseUri(follow.objectId);
      if (followee?.type !== "actor" || await store.getUser(followee.identifier) == null) return;
      const follower = await follow.getActor(ctx);
      if (follower?.id == null || follower.inboxId == null) return;
      await store.addFollower(followee.identifier, {
        id: follower.id.href,
        inbox: follower.inboxId.href,
        handle: `@${follower.preferredUsername}@${follower.id.host}`,
      });
      await ctx.sendActivity(
        { identifier: followee.identifier },
        follower,
        new Accept({
          id: new URL(`#accepts/${crypto.randomUUID()}`, ctx.getActorUri(followee.identifier)),
          actor: ctx.getActorUri(followee.identifier),
          object: follow,
        }),
      );
      await ctx.enqueueTask(
        welcomeNote,
        { user: followee.identifier, follower: follower.id.href },
        { delay: options.welcomeDelay },
      );
    })
    .on(Undo, async (ctx, undo) => {
      const object = await undo.getObject(ctx);
      if (!(object instanceof Follow) || undo.actorId == null) return;
      const followee = ctx.parseUri(object.objectId);
      if (followee?.type !== "actor") return;
      await store.removeFollower(followee.identifier, undo.actorId.href);
    })
    .on(Accept, async (ctx, accept) => {
      if (ctx.recipient == null || accept.actorId == null) return;
      const following = (await store.listFollowing(ctx.recipient))
        .find((f) => f.id === accept.actorId?.href);
      if (following == null) return;
      await store.setFollowing(ctx.recipient, following.id, "accepted", following.followId);
    })
    .on(Create, async (ctx, create) => {
      if (ctx.recipient == null) return;
      const note = await create.getObject(ctx);
      if (!(note instanceof Note) || note.id == null) return;
      await store.addReceivedNote(ctx.recipient, {
        id: note.id.href,
        from: create.actorId?.href ?? "",
        content: note.content?.toString() ?? "",
        visibility: noteVisibility(note, ctx.getActorUri(ctx.recipient)),
        receivedAt: new Date().toISOString(),
      });
    })
    .on(Like, async (ctx, like) => {
      const liked = ctx.parseUri(like.objectId);
      if (liked?.type !== "object" || like.actorId == null) return;
      const { identifier, id } = liked.values;
      if (await store.getPost(identifier, id) == null) return;
      await store.addLike(identifier, id, like.actorId.href);
      await ctx.enqueueTask(
        refreshCounts,
        { author: identifier, postId: id },
        { orderingKey: `post:${identifier}/${id}` },
      );
    });

  const followImport = defineFollowImport(federation, store);

  const context = () => federation.createContext(origin, undefined);

  return {
    federation,
    store,
    origin,
    async createUser(name) {
      if (await store.getUser(name) != null) return;
      const pairs = [await generateCryptoKeyPair(), await generateCryptoKeyPair("Ed25519")];
      await store.saveUser({
        name,
        createdAt: new Date().toISOString(),
        keys: await Promise.all(pairs.map(async (pair) => ({
          privateKey: await exportJwk(pair.privateKey),
          publicKey: await exportJwk(pair.publicKey),
        }))),
      });
    },
    async follow(user, target) {
      const ctx = context();
      const actor = await ctx.lookupObject(target);
      if (!isActor(actor) || actor.id == null) throw new Error(`${target} is not an actor.`);
      const followId = new URL(`#follows/${crypto.randomUUID()}`, ctx.getActorUri(user));
      await store.setFollowing(user, actor.id.href, "pending", followId.href);
      await ctx.sendActivity(
        { identifier: user },
        actor,
        new Follow({ id: followId, actor: ctx.getActorUri(user), object: actor.id }),
      );
      return actor.id.href;
    },
    async unfollow(user, actorId) {
      const ctx = context();
      const following = (await store.listFollowing(user)).find((f) => f.id === actorId);
      if (following == null) return;
      const actor = await ctx.lookupObject(actorId);
      if (!isActor(actor) || actor.id == null) throw new Error(`${actorId} is not an actor.`);
      await ctx.sendActivity(
        { identifier: user },
        actor,
        new Undo({
          id: new URL(`#undo/${crypto.randomUUID()}`, ctx.getActorUri(user)),
          actor: ctx.getActorUri(user),
          // The Follow it undoes, embedded, so the peer need not fetch it.
          object: new Follow({
            id: new URL(following.followId),
            actor: ctx.getActorUri(user),
            object: actor.id,
          }),
        }),
      );
      await store.removeFollowing(user, actorId);
    },
    async post(user, content) {
      const ctx = context();
      const post: Post = {
        id: newPostId(),
        author: user,
        content,
        published: new Date().toISOString(),
      };
      await store.savePost(post);
      const noteId = ctx.getObjectUri(Note, { identifier: user, id: post.id });
      const note = toNote(ctx.getActorUri(user), noteId, post);
      await ctx.sendActivity(
        { identifier: user },
        "followers",
        new Create({
          id: new URL(`${noteId.href}#create`),
          actor: ctx.getActorUri(user),
          to: PUBLIC_COLLECTION,
          cc: ctx.getFollowersUri(user),
          object: note,
        }),
      );
      const link = firstLink(content);
      if (link != null) {
        await ctx.enqueueTask(linkPreview, { author: user, postId: post.id, url: link });
      }
      return post;
    },
    async like(user, noteUrl) {
      const ctx = context();
      const note = await ctx.lookupObject(noteUrl);
      if (!(note instanceof Note) || note.id == null) throw new Error(`${noteUrl} is not a note.`);
      const author = await note.getAttribution(ctx);
      if (!isActor(author)) throw new Error(`${noteUrl} has no author.`);
      await ctx.sendActivity(
        { identifier: user },
        author,
        new Like({
          id: new URL(`#likes/${crypto.randomUUID()}`, ctx.getActorUri(user)),
          actor: ctx.getActorUri(user),
          object: note.id,
        }),
      );
    },
    async importFollows(user, list) {
      const enqueued = await context().enqueueTask(followImport, {
        user,
        accounts: parseImportList(list),
      });
      if (enqueued.status !== "enqueued") throw new Error(`The import was ${enqueued.status}.`);
      return enqueued.messageId;
    },
    async scheduleDigest() {
      await federation.scheduleTask(digest, {}, {
        every: options.digestEvery,
        id: "digest",
        baseUrl: origin,
      });
    },
  };
}

function toNote(author: URL, id: URL, post: Post): Note {
  return new Note({
    id,
    attribution: author,
    to: PUBLIC_COLLECTION,
    content: renderNoteContent(post.content),
    url: id,
  });
}

function decodeEntities(text: string): string {
  return text.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"').replace(/&#39;/g, "'");
}
