// The same tiny social app written twice, on Fedwork and on Fedify 2.3.6:
// actors with keys, a followers collection, a Follow listener that accepts,
// and promises of what arrived.  Each is served on loopback behind a
// recorder that can also refuse RFC 9421 signatures with a 401.
import {
  createFederation as createFedifyFederation,
  MemoryKvStore as FedifyMemoryKvStore,
} from "@fedify/fedify";
import {
  Accept,
  type Activity,
  type Actor,
  Create,
  Follow,
  Note,
  Person,
  type Recipient,
} from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  type FederationKvPrefixes,
  type FederationOptions,
  generateCryptoKeyPair,
  type HttpSignatureSpec,
  InProcessMessageQueue,
  type KvStore,
  MemoryKvStore,
  type MessageQueue,
} from "@fedwork/core";
import { deferred, type FetchServer, serveFetch } from "./support.ts";

/** One POST an app's server received. */
export interface RecordedPost {
  readonly path: string;
  /** The scheme it was signed with. */
  readonly spec: HttpSignatureSpec | null;
  readonly status: number;
  /** Its `Collection-Synchronization` header (FEP-8fcf), if any. */
  readonly collectionSync: string | null;
}

/** What both apps offer a test. */
export interface TestApp extends AsyncDisposable {
  readonly server: FetchServer;
  /** Every POST received, in order, with the status it got. */
  readonly posts: RecordedPost[];
  /** The followers of each actor, by actor id. */
  readonly followers: Map<string, Actor>;
  /** Resolves with the first Accept received. */
  readonly accepted: Promise<Accept>;
  /** Resolves with the first Note received in a Create. */
  readonly notes: Promise<Note>;
  url(path: string): URL;
  /** Sends an activity from one of the app's actors. */
  send(
    identifier: string,
    recipients: Recipient | "followers",
    activity: Activity,
  ): Promise<void>;
}

/** Options shared by both apps. */
export interface TestAppOptions {
  /** Which scheme to try first when delivering. */
  readonly firstKnock?: HttpSignatureSpec;
  /** Answer 401 to every POST signed with RFC 9421 (a peer without it). */
  readonly refuseRfc9421?: boolean;
  /**
   * Forward every Create received to this recipient, as the actor `carol`
   * (a server spreading a reply to a thread's followers).
   */
  readonly forwardCreatesTo?: () => Recipient;
  /**
   * Hand the app POSTs without their signatures unless their
   * `Signature-Input` carries a nonce, so that the app's own inbox
   * challenges them (Fedify challenges only a failed signature).
   */
  readonly unsignedUnlessNonce?: boolean;
  /** The inbox's `Accept-Signature` challenges (the same option on both). */
  readonly inboxChallengePolicy?: {
    readonly enabled: boolean;
    readonly requestNonce?: boolean;
    readonly components?: string[];
  };
}

const keyPairs = new Map<string, Promise<CryptoKeyPair[]>>();

/** An RSA key pair (for HTTP signatures) and an Ed25519 one per actor. */
function actorKeyPairs(id: string): Promise<CryptoKeyPair[]> {
  let pairs = keyPairs.get(id);
  if (pairs == null) {
    pairs = Promise.all([generateCryptoKeyPair(), generateCryptoKeyPair("Ed25519")]);
    keyPairs.set(id, pairs);
  }
  return pairs;
}

function specOf(request: Request): HttpSignatureSpec | null {
  if (request.headers.has("signature-input")) return "rfc9421";
  if (request.headers.has("signature")) return "draft-cavage-http-signatures-12";
  return null;
}

/** The request without its HTTP signature and its object proof. */
async function unsigned(request: Request): Promise<Request> {
  const headers = new Headers(request.headers);
  for (const name of ["signature", "signature-input", "digest", "content-digest"]) {
    headers.delete(name);
  }
  const { proof: _, ...activity } = await request.json();
  return new Request(request.url, {
    method: "POST",
    headers,
    body: JSON.stringify(activity),
  });
}

async function serveRecorded(
  handle: (request: Request) => Promise<Response>,
  options: TestAppOptions,
): Promise<{ server: FetchServer; posts: RecordedPost[] }> {
  const posts: RecordedPost[] = [];
  const server = await serveFetch(async (request) => {
    const spec = specOf(request);
    const response = request.method === "POST" && options.refuseRfc9421 && spec === "rfc9421"
      ? new Response("RFC 9421 is not supported here.", { status: 401 })
      : await handle(
        request.method === "POST" && options.unsignedUnlessNonce &&
          !/;nonce=/.test(request.headers.get("signature-input") ?? "")
          ? await unsigned(request)
          : request,
      );
    if (request.method === "POST") {
      posts.push({
        path: new URL(request.url).pathname,
        spec,
        status: response.status,
        collectionSync: request.headers.get("collection-synchronization"),
      });
    }
    return response;
  });
  return { server, posts };
}

function person(
  id: URL,
  identifier: string,
  inbox: URL,
  followers: URL,
  keys: { cryptographicKey: unknown; multikey: unknown }[],
): Person {
  return new Person({
    id,
    preferredUsername: identifier,
    inbox,
    followers,
    // deno-lint-ignore no-explicit-any
    publicKey: keys[0].cryptographicKey as any,
    // deno-lint-ignore no-explicit-any
    assertionMethods: keys.map((key) => key.multikey) as any,
  });
}

/**
 * Starts the app on Fedwork, with an in-process queue unless another is
 * given.
 */
export async function startFedworkApp(
  options: TestAppOptions & {
    readonly queue?: MessageQueue;
    readonly kv?: KvStore;
    readonly kvPrefixes?: Partial<FederationKvPrefixes>;
    /** The `waitedActivities` option. */
    readonly waitedActivities?: FederationOptions<void>["waitedActivities"];
    /** Defines more (tasks) on the federation before its workers start. */
    readonly setup?: (federation: Federation<void>) => void;
  } = {},
): Promise<TestApp & { readonly federation: Federation<void> }> {
  const queue = options.queue ?? new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: options.kv ?? new MemoryKvStore(),
    ...(options.kvPrefixes == null ? {} : { kvPrefixes: options.kvPrefixes }),
    ...(options.waitedActivities == null ? {} : { waitedActivities: options.waitedActivities }),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    ...(options.firstKnock == null ? {} : { firstKnock: options.firstKnock }),
    ...(options.inboxChallengePolicy == null
      ? {}
      : { inboxChallengePolicy: options.inboxChallengePolicy }),
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    person(
      ctx.getActorUri(identifier),
      identifier,
      ctx.getInboxUri(identifier),
      ctx.getFollowersUri(identifier),
      await ctx.getActorKeyPairs(identifier),
    ))
    .setKeyPairsDispatcher((ctx, identifier) => actorKeyPairs(ctx.getActorUri(identifier).href));
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
      if (options.forwardCreatesTo != null) {
        await ctx.forwardActivity({ identifier: "carol" }, options.forwardCreatesTo());
      }
      const object = await create.getObject({
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.documentLoader,
      });
      if (object instanceof Note) notes.resolve(object);
    });
  options.setup?.(federation);
  const { server, posts } = await serveRecorded(
    (request) => federation.fetch(request, { contextData: undefined }),
    options,
  );
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  return {
    federation,
    server,
    posts,
    followers,
    accepted: accepted.promise,
    notes: notes.promise,
    url: (path) => new URL(path, server.url),
    send: (identifier, recipients, activity) =>
      federation.createContext(server.url, undefined).sendActivity(
        { identifier },
        recipients,
        activity,
      ),
    async [Symbol.asyncDispose]() {
      controller.abort();
      await workers;
      await server.close();
      if (options.queue == null) await (queue as InProcessMessageQueue)[Symbol.asyncDispose]();
    },
  };
}

/** Starts the app on Fedify 2.3.6, without a queue (it delivers at once). */
export async function startFedifyApp(options: TestAppOptions = {}): Promise<TestApp> {
  const federation = createFedifyFederation<void>({
    kv: new FedifyMemoryKvStore(),
    // Fedify refuses loopback URLs by default, as Fedwork does.
    allowPrivateAddress: true,
    ...(options.firstKnock == null ? {} : { firstKnock: options.firstKnock }),
    ...(options.inboxChallengePolicy == null
      ? {}
      : { inboxChallengePolicy: options.inboxChallengePolicy }),
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    person(
      ctx.getActorUri(identifier),
      identifier,
      ctx.getInboxUri(identifier),
      ctx.getFollowersUri(identifier),
      await ctx.getActorKeyPairs(identifier),
    ))
    .setKeyPairsDispatcher((ctx, identifier) => actorKeyPairs(ctx.getActorUri(identifier).href));
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
      const follower = await follow.getActor(ctx);
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
      if (options.forwardCreatesTo != null) {
        await ctx.forwardActivity({ identifier: "carol" }, options.forwardCreatesTo());
      }
      const object = await create.getObject(ctx);
      if (object instanceof Note) notes.resolve(object);
    });
  const { server, posts } = await serveRecorded(
    (request) => federation.fetch(request, { contextData: undefined }),
    options,
  );
  return {
    server,
    posts,
    followers,
    accepted: accepted.promise,
    notes: notes.promise,
    url: (path) => new URL(path, server.url),
    send: (identifier, recipients, activity) => {
      const ctx = federation.createContext(server.url, undefined);
      return recipients === "followers"
        ? ctx.sendActivity({ identifier }, "followers", activity)
        : ctx.sendActivity({ identifier }, recipients, activity);
    },
    [Symbol.asyncDispose]: () => server.close(),
  };
}
