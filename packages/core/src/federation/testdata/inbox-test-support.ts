// Loopback federations with actors, keys and inboxes, shared by the inbox
// tests.  Not exported from mod.ts.
import type { TestServer } from "@fedify/fixture";
import type { MeterProvider } from "@opentelemetry/api";
import { Create, Follow, Person } from "@fedify/vocab";
import type { Temporal } from "@js-temporal/polyfill";
import { signRequest } from "../../activitypub/signatures/sign.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { InboxMessage } from "../../activitypub/inbox/message.ts";
import { createFederation, type Federation } from "../federation.ts";
import type { InboxContext } from "../context-api.ts";
import type { IdempotencyStrategy } from "../registry-api.ts";
import type { FederationOptions } from "../options.ts";
import { serveFederation, testKeyPair } from "./test-support.ts";

/** How {@link startServer} sets its federation up. */
export interface InboxServerOptions {
  idempotency?: IdempotencyStrategy;
  /** The inbox queue (and every other role's); workers start manually. */
  queue?: MessageQueue;
  skipSignatureVerification?: boolean;
  /** The `inboxMaxBytes` option. */
  inboxMaxBytes?: number;
  forwardTo?: URL;
  /** Serve actors only to signed requests (authorized fetch). */
  authorizedFetch?: boolean;
  /** Sign key fetches as this actor. */
  sharedKey?: string;
  /** Errors the Create listener throws, one per call, before it succeeds. */
  failures?: Error[];
  /** The `meterProvider` option. */
  meterProvider?: MeterProvider;
  /** The `waitedActivities` option. */
  waitedActivities?: FederationOptions<void>["waitedActivities"];
}

/** An activity a {@link startServer} federation's listeners received. */
export interface ReceivedActivity {
  readonly recipient: string | null;
  readonly activity: Follow | Create;
}

/** A federation served on loopback by {@link startServer}. */
export interface InboxServer {
  readonly federation: Federation<void>;
  readonly server: TestServer;
  /** What the Follow and Create listeners received, in order. */
  readonly received: ReceivedActivity[];
  /** How many times the shared key dispatcher (the `sharedKey` option) was called. */
  readonly sharedKeyCalls: number;
  /** A URL on this server. */
  url(path: string): URL;
}

/**
 * Starts a federation whose actors (`/users/{identifier}`, every identifier
 * but `nobody`) share the test key pair and have inboxes listening to
 * `Follow` and `Create`, served on 127.0.0.1; 401s answer "Who are you?".
 */
export async function startServer(options: InboxServerOptions = {}): Promise<InboxServer> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    skipSignatureVerification: options.skipSignatureVerification ?? false,
    ...(options.inboxMaxBytes == null ? {} : { inboxMaxBytes: options.inboxMaxBytes }),
    ...(options.queue == null ? {} : { queue: options.queue, manuallyStartQueue: true }),
    ...(options.meterProvider == null ? {} : { meterProvider: options.meterProvider }),
    ...(options.waitedActivities == null ? {} : { waitedActivities: options.waitedActivities }),
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier === "nobody") return null;
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      inbox: ctx.getInboxUri(identifier),
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => [await testKeyPair()])
    .authorize(async (ctx) => !options.authorizedFetch || await ctx.getSignedKey() != null);
  const received: ReceivedActivity[] = [];
  const setters = federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (ctx: InboxContext<void>, activity) => {
      received.push({ recipient: ctx.recipient, activity });
    })
    .on(Create, async (ctx, activity) => {
      const failure = options.failures?.shift();
      if (failure != null) throw failure;
      received.push({ recipient: ctx.recipient, activity });
      if (options.forwardTo != null) {
        await ctx.forwardActivity({ identifier: "bob" }, { id: null, inboxId: options.forwardTo });
      }
    });
  if (options.idempotency != null) setters.withIdempotency(options.idempotency);
  let sharedKeyCalls = 0;
  if (options.sharedKey != null) {
    setters.setSharedKeyDispatcher(() => {
      sharedKeyCalls++;
      return { identifier: options.sharedKey! };
    });
  }
  const server = await serveFederation(federation, undefined, {
    onUnauthorized: () => new Response("Who are you?", { status: 401 }),
  });
  return {
    federation,
    server,
    received,
    get sharedKeyCalls() {
      return sharedKeyCalls;
    },
    url: (path: string) => new URL(path, server.url),
  };
}

/** A Follow of `to`'s bob by `from`'s alice, with an id on `from`. */
export function follow(
  from: InboxServer,
  to: InboxServer,
  id = "/follows/1",
): Record<string, unknown> {
  return {
    "@context": "https://www.w3.org/ns/activitystreams",
    id: from.url(id).href,
    type: "Follow",
    actor: from.url("/users/alice").href,
    object: to.url("/users/bob").href,
  };
}

/** The key an actor signs with: its key id and the test private key. */
export interface SigningKey {
  readonly keyId: URL;
  readonly privateKey: CryptoKey;
  /** When the signature is made; now by default. */
  readonly at?: Temporal.Instant;
}

/**
 * POSTs `body` to an inbox over HTTP, signed with RFC 9421 when `sign` is
 * given, and with the body swapped for `tamper` after signing when given.
 * @returns The response, its body discarded.
 */
export async function post(
  inbox: URL,
  body: string,
  sign: SigningKey | null,
  tamper?: string,
): Promise<Response> {
  let request = new Request(inbox, {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body,
  });
  if (sign != null) {
    request = await signRequest(request, sign.privateKey, sign.keyId, {
      spec: "rfc9421",
      ...(sign.at == null ? {} : { currentTime: sign.at }),
    });
  }
  if (tamper != null) {
    request = new Request(inbox, { method: "POST", headers: request.headers, body: tamper });
  }
  const response = await fetch(request);
  await response.body?.cancel();
  return response;
}

/** Runs a test against a remote server (alice's) and a local one (bob's). */
export async function withServers(
  fn: (remote: InboxServer, local: InboxServer, aliceKey: SigningKey) => Promise<void>,
): Promise<void> {
  const { privateKey } = await testKeyPair();
  const remote = await startServer();
  const local = await startServer();
  try {
    await fn(remote, local, { keyId: remote.url("/users/alice#main-key"), privateKey });
  } finally {
    await remote.server.close();
    await local.server.close();
  }
}

/**
 * An inbox queue row holding `activity` as it was received, written
 * straight into a queue, as a hostile row would be.
 */
export function queuedInboxMessage(activity: Record<string, unknown>): InboxMessage {
  return {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity,
    identifier: null,
  };
}
