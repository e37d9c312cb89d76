import { Activity, Tombstone } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { parseActivityBody } from "../activitypub/inbox/parse-activity.ts";
import { type InboxVerification, verifyInboxRequest } from "../activitypub/inbox/verify.ts";
import {
  consumeSignatureNonce,
  withAcceptSignatureChallenge,
} from "../activitypub/inbox/challenge.ts";
import {
  createPublicKeyFetcher,
  type PublicKeyFetcher,
} from "../activitypub/signatures/key-cache.ts";
import { readBodyCapped } from "../http/capped-body.ts";
import { withDocumentLoadBudget } from "../activitypub/network/document-budget.ts";
import type { ResolvedDocumentComplexityLimits } from "../activitypub/network/document-complexity.ts";
import type { KvKey } from "../kv/kv-store.ts";
import type { Outcome } from "../processing/outcome.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type {
  FederationRegistry,
  IdempotencyKeyCallback,
  IdempotencyStrategy,
} from "./registry-api.ts";
import type { InboxContext, RequestContext } from "./context-api.ts";
import type { UnverifiedActivityReason } from "./callbacks.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/**
 * What {@link handleInboxRequest} needs from the federation.  Internal.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export interface InboxRequestHost<TContextData> {
  readonly registry: FederationRegistry<TContextData>;
  readonly options: ResolvedFederationOptions;
  readonly fetchPublicKey: PublicKeyFetcher;
  /**
   * Enqueues the message into the inbox queue (resolving to `undefined`)
   * or, without one, dispatches it now and resolves to its outcome;
   * rejects when it could not be enqueued or the attempt failed.
   */
  receive(message: InboxMessage, contextData: TContextData): Promise<Outcome | undefined>;
  /** The context an idempotency key callback gets (since 0.3.0). */
  createInboxContext(
    baseUrl: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
  ): InboxContext<TContextData>;
}

/**
 * How {@link handleInboxRequest} answers what it does not handle itself.
 * @since 0.2.0
 */
export interface InboxRequestCallbacks {
  readonly onNotFound: (request: Request) => Response | Promise<Response>;
  readonly onUnauthorized: (request: Request) => Response | Promise<Response>;
}

const IDEMPOTENCY_PREFIX = ["fedwork", "activity-idempotence"] as const;

/**
 * What identifies a received activity for deduplication: its `id`, or,
 * for an activity without one, the SHA-256 digest of the request body
 * (lowercase hex), so that the same bytes delivered twice still run once.
 * @since 0.3.0
 */
export type ReceivedActivityIdentity =
  | { readonly id: string }
  | { readonly bodySha256: string };

/**
 * The KV key recording that an activity was received, by the inbox's
 * idempotency strategy: `[...prefix, ...strategy's scope, senderOrigin,
 * activityId]`, or `[..., senderOrigin, "sha-256", digest]` for an
 * activity without an id.  The sender's origin is part of the key so that
 * nobody can make an inbox skip someone else's activity by sending a decoy
 * with its (predictable) id first: a decoy only ever shadows activities of
 * its own sender's origin.
 * @param strategy The strategy.
 * @param inboxUrl The inbox that received it (canonical origin and path).
 * @param senderOrigin The origin that sent it: the verified signer's, or,
 *                     with `skipSignatureVerification`, the `actor`'s
 *                     (`"null"` when the activity has no single actor URL).
 * @param activity The activity's id, or its body's digest.
 * @returns The key.
 * @since 0.2.0
 */
export function idempotencyKey(
  strategy: IdempotencyStrategy,
  inboxUrl: URL,
  senderOrigin: string,
  activity: ReceivedActivityIdentity,
): KvKey {
  const identity = "id" in activity ? [activity.id] : ["sha-256", activity.bodySha256];
  switch (strategy) {
    case "global":
      return [...IDEMPOTENCY_PREFIX, "global", senderOrigin, ...identity];
    case "per-origin":
      return [...IDEMPOTENCY_PREFIX, "origin", inboxUrl.origin, senderOrigin, ...identity];
    case "per-inbox":
      return [
        ...IDEMPOTENCY_PREFIX,
        "inbox",
        inboxUrl.origin + inboxUrl.pathname,
        senderOrigin,
        ...identity,
      ];
  }
}

/**
 * The KV key recording that an activity was received, by the inbox's
 * idempotency setting: {@link idempotencyKey} for a strategy name or, for
 * an {@link IdempotencyKeyCallback}, `[...prefix, "custom", senderOrigin,
 * key]` with the key it returns (so that a decoy from another origin still
 * cannot shadow the genuine activity), or `null` when it returns `null`
 * (no deduplication).  A callback that throws, or an activity it cannot
 * be given (not parsable), falls back to the `"per-inbox"` key.
 * Internal; also used by `ctx.routeActivity()`.
 * @param host The federation.
 * @param received Where and from whom the activity came, and what it is.
 * @returns The key, or `null` not to deduplicate.
 * @since 0.3.0
 */
export async function receivedActivityKey<TContextData>(
  host: Pick<InboxRequestHost<TContextData>, "registry" | "options" | "createInboxContext">,
  received: {
    readonly baseUrl: URL;
    readonly data: TContextData;
    readonly recipient: string | null;
    readonly inboxUrl: URL;
    readonly senderOrigin: string;
    readonly activity: Record<string, unknown>;
    readonly identity: ReceivedActivityIdentity;
  },
): Promise<KvKey | null> {
  const strategy = host.registry.inboxIdempotency ?? "per-inbox";
  const { inboxUrl, senderOrigin, identity } = received;
  if (typeof strategy !== "function") {
    return idempotencyKey(strategy, inboxUrl, senderOrigin, identity);
  }
  const key = await callIdempotencyKeyCallback(host, strategy, received);
  if (key === undefined) return idempotencyKey("per-inbox", inboxUrl, senderOrigin, identity);
  return key == null ? null : [...IDEMPOTENCY_PREFIX, "custom", senderOrigin, key];
}

/** The callback's key, or `undefined` when it could not give one. */
async function callIdempotencyKeyCallback<TContextData>(
  host: Pick<InboxRequestHost<TContextData>, "options" | "createInboxContext">,
  callback: IdempotencyKeyCallback<TContextData>,
  received: Parameters<typeof receivedActivityKey<TContextData>>[1],
): Promise<string | null | undefined> {
  let activity: Activity;
  try {
    activity = await parseReceivedActivity(host.options, received.activity);
  } catch {
    // The worker drops it with the reason; the default key will do.
    return undefined;
  }
  const ctx = host.createInboxContext(
    received.baseUrl,
    received.data,
    received.recipient,
    received.activity,
  );
  try {
    const key = await callback(ctx, activity);
    if (key === null || typeof key === "string") return key;
    throw new TypeError(`it returned ${typeof key}, not a string or null`);
  } catch (error) {
    logger.error(
      "The idempotency key callback failed on {activityId}; using the per-inbox key: {error}",
      { activityId: activity.id?.href ?? null, error },
    );
    return undefined;
  }
}

/**
 * Parses an activity received in a request (for the unverified-activity
 * hook or an idempotency key callback) within the document budget: at most
 * `remoteDocuments.maxLoads` loads within `remoteDocuments.loadTimeout` in
 * all, as the inbox worker parses it.  The body was held to the document
 * limits when it was read.
 */
function parseReceivedActivity(
  options: Pick<ResolvedFederationOptions, "documentLoader" | "remoteDocuments">,
  activity: Readonly<Record<string, unknown>>,
): Promise<Activity> {
  const loader = withDocumentLoadBudget(options.documentLoader, options.remoteDocuments.budget);
  return Activity.fromJsonLd(activity, { documentLoader: loader, contextLoader: loader });
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
}

/**
 * Answers a POST to a personal or the shared inbox: checks the recipient
 * exists (404/410), reads and verifies the request (413 above the
 * `inboxMaxBytes` option, read no further; 400 for a body that is not a
 * JSON object or nests deeper than 64 levels; 401 through `onUnauthorized`
 * for a missing or invalid signature or a signer that is not the
 * activity's actor), skips an activity already received from the same
 * sender origin (by its id, or its body's SHA-256 digest when it has none,
 * and the inbox's idempotency strategy; see {@link idempotencyKey}),
 * enqueues it and answers 202.  An activity the inbox queue cannot encode
 * answers 400 (sending it again cannot help).  Without an inbox queue the
 * dispatcher processes it in the request, as a worker would (same events
 * and metrics), and the outcome answers: `completed`, `unhandled` and
 * `failed` (a `PermanentError`) 202, `dropped` (unparsable) 400, and a
 * failed attempt 500, for the sender to retry.
 * @param host The federation.
 * @param ctx The request's context.
 * @param identifier The personal inbox's identifier, or `null`.
 * @param callbacks The fallbacks.
 * @returns The response.
 * @since 0.2.0
 */
export async function handleInboxRequest<TContextData>(
  host: InboxRequestHost<TContextData>,
  ctx: RequestContext<TContextData>,
  identifier: string | null,
  callbacks: InboxRequestCallbacks,
): Promise<Response> {
  const { request } = ctx;
  const { options, registry } = host;
  if (identifier != null && registry.actor != null) {
    const actor = await registry.actor.dispatcher(ctx, identifier);
    if (actor == null) {
      await request.body?.cancel();
      return await callbacks.onNotFound(request);
    }
    if (actor instanceof Tombstone) {
      await request.body?.cancel();
      return text(410, "This actor is gone.");
    }
  }
  // The inbox's public URL: what a challenge nonce is bound to, and what
  // deduplication is keyed on.
  const inboxUrl = new URL(new URL(request.url).pathname, ctx.canonicalOrigin);
  let activity: Record<string, unknown>;
  let body: Uint8Array;
  let senderOrigin: string;
  let signer: string | undefined;
  if (options.skipSignatureVerification) {
    const read = await readJsonObject(
      request,
      options.inboxMaxBytes,
      options.remoteDocuments.limits,
    );
    if (!read.ok) return text(read.status, read.message);
    ({ activity, body } = read);
    // Nothing was verified: the activity's own claim is all there is.
    senderOrigin = actorOriginOf(activity);
  } else {
    const verification = await verifyInboxRequest(request, {
      kv: options.kv,
      documentLoader: options.documentLoader,
      fetchKey: keyFetcherFor(host, ctx),
      timeWindow: options.signatureTimeWindow,
      proofMaxAge: options.proofMaxAge,
      maxBodySize: options.inboxMaxBytes,
      documentLimits: options.remoteDocuments.limits,
      ...(options.origin == null ? {} : { origin: options.origin }),
      ...(registry.unverifiedActivityHandler == null ? {} : { readUnsignedBody: true }),
    });
    if (!verification.ok) {
      if (verification.status !== 401) return text(verification.status, verification.message);
      const answered = await runUnverifiedActivityHandler(host, ctx, verification);
      if (answered != null) return answered;
      const refused = await callbacks.onUnauthorized(request);
      // A challenge says how to sign; a signer who is not the actor
      // signed well enough, and no other signature would help.
      return verification.reason === "actorMismatch" ? refused : await withAcceptSignatureChallenge(
        refused,
        options.inboxChallengePolicy,
        options.kv,
        inboxUrl,
      );
    }
    if (
      options.inboxChallengePolicy?.requestNonce && verification.spec === "rfc9421" &&
      !await consumeSignatureNonce(verification.nonce, inboxUrl, options.kv)
    ) {
      logger.debug("Refused an activity signed by {signer}: no valid challenge nonce.", {
        signer: verification.signer.href,
      });
      return await withAcceptSignatureChallenge(
        await callbacks.onUnauthorized(request),
        options.inboxChallengePolicy,
        options.kv,
        inboxUrl,
      );
    }
    ({ activity, body } = verification);
    senderOrigin = verification.signer.origin;
    signer = verification.signer.href;
  }
  const activityId = typeof activity.id === "string" ? activity.id : null;
  const claimed = await receivedActivityKey(host, {
    baseUrl: new URL(ctx.origin),
    data: ctx.data,
    recipient: identifier,
    inboxUrl,
    senderOrigin,
    activity,
    identity: activityId == null ? { bodySha256: await sha256Hex(body) } : { id: activityId },
  });
  if (claimed != null && !await claimReceivedActivity(options, claimed)) {
    logger.debug("Skipped activity {activityId}: already received at {inbox} from {sender}.", {
      activityId,
      inbox: inboxUrl.href,
      sender: senderOrigin,
    });
    return text(
      202,
      activityId == null
        ? "The activity was already received."
        : `The activity ${activityId} was already received.`,
    );
  }
  const message: InboxMessage = {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: ctx.origin,
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity,
    identifier,
    ...(signer == null ? {} : { signer }),
  };
  let outcome: Outcome | undefined;
  try {
    outcome = await host.receive(message, ctx.data);
  } catch (error) {
    // Let the sender's retry through: it was not handled.
    if (claimed != null) await options.kv.delete(claimed);
    if (options.queues.inbox == null) {
      // The attempt ran in the request and failed; the dispatcher logged
      // it, and the sender is the one to retry.
      return text(500, "The activity could not be processed; try again later.");
    }
    if (isUnencodable(error)) {
      // The same activity would fail the same way on every retry: the
      // sender's error to hear about, not ours to log with a stack.
      const reason = (error as Error).message;
      logger.debug("Refused activity {activityId}: the inbox queue cannot store it: {reason}", {
        activityId,
        reason,
      });
      return text(400, `The activity cannot be stored: ${reason}`);
    }
    logger.error("Failed to receive activity {activityId}: {error}", { activityId, error });
    return text(500, "The activity could not be processed; try again later.");
  }
  if (outcome?.type === "dropped") {
    // Sending the same activity again fails the same way, but a corrected
    // one with the same id must get through.
    if (claimed != null) await options.kv.delete(claimed);
    return text(400, `The activity is malformed: ${outcome.reason}`);
  }
  return text(202, "Accepted.");
}

/**
 * Gives an activity whose signature failed to the `onUnverifiedActivity()`
 * hook, if any: its response, or `undefined` for the default 401.  An
 * activity signed by someone else than its actor (`actorMismatch`) had a
 * good signature, and is not the hook's.
 */
async function runUnverifiedActivityHandler<TContextData>(
  host: InboxRequestHost<TContextData>,
  ctx: RequestContext<TContextData>,
  verification: InboxVerification & { readonly ok: false },
): Promise<Response | undefined> {
  const handler = host.registry.unverifiedActivityHandler;
  if (handler == null || verification.activity == null) return undefined;
  const reason = unverifiedReason(verification);
  if (reason == null) return undefined;
  let activity: Activity;
  try {
    activity = await parseReceivedActivity(host.options, verification.activity);
  } catch (error) {
    logger.debug(
      "Skipped the unverified activity hook: the activity could not be parsed: {error}",
      {
        error,
      },
    );
    return undefined;
  }
  try {
    const response = await handler(ctx, activity, reason);
    return response instanceof Response ? response : undefined;
  } catch (error) {
    logger.error("The unverified activity hook failed on {activityId}: {error}", {
      activityId: activity.id?.href ?? null,
      error,
    });
    return undefined;
  }
}

/** Fedify's shape of a signature failure, or `null` when it is not one. */
function unverifiedReason(
  verification: InboxVerification & { readonly ok: false },
): UnverifiedActivityReason | null {
  const { reason, message, keyId } = verification;
  switch (reason) {
    case "noSignature":
      return { type: "noSignature", detail: reason, message };
    case "keyNotFound":
      if (keyId != null) return { type: "keyFetchError", detail: reason, keyId, message };
      return { type: "invalidSignature", detail: reason, message };
    case "malformedSignature":
    case "unsupportedAlgorithm":
    case "missingRequiredComponent":
    case "missingDigest":
    case "digestMismatch":
    case "outsideTimeWindow":
    case "invalidSignature":
      return keyId == null
        ? { type: "invalidSignature", detail: reason, message }
        : { type: "invalidSignature", detail: reason, keyId, message };
    default:
      return null;
  }
}

/**
 * The key fetcher for an inbox request: the federation's or, with a shared
 * key dispatcher, one whose GETs that actor signs.  The dispatcher and the
 * actor's keys are asked for only when a key is fetched, so a request
 * refused before (unsigned, too large, malformed) costs the application
 * nothing.
 */
function keyFetcherFor<TContextData>(
  host: InboxRequestHost<TContextData>,
  ctx: RequestContext<TContextData>,
): PublicKeyFetcher {
  const dispatcher = host.registry.sharedKeyDispatcher;
  if (dispatcher == null) return host.fetchPublicKey;
  let fetcher: Promise<PublicKeyFetcher> | undefined;
  return async (keyId, options) => {
    fetcher ??= (async () => {
      const signer = await dispatcher(ctx);
      if (signer == null) return host.fetchPublicKey;
      // Keys are cached in the KV store whoever fetched them.
      return createPublicKeyFetcher({
        kv: host.options.kv,
        documentLoader: await ctx.getDocumentLoader(signer),
      });
    })();
    return (await fetcher)(keyId, options);
  };
}

/**
 * Records that an activity was received under its idempotency key, for
 * `inboxIdempotencyTtl`.  Internal; also used by `ctx.routeActivity()`.
 * @param options The federation's KV store and idempotency TTL.
 * @param key The key, from {@link idempotencyKey}.
 * @returns `false` when it was already recorded (a duplicate).
 * @since 0.3.0
 */
export async function claimReceivedActivity(
  options: Pick<ResolvedFederationOptions, "kv" | "inboxIdempotencyTtlMs">,
  key: KvKey,
): Promise<boolean> {
  const { kv, inboxIdempotencyTtlMs } = options;
  const ttl = { milliseconds: inboxIdempotencyTtlMs };
  // With compare-and-swap, two copies arriving at once still run once.
  if (kv.cas != null) return await kv.cas(key, undefined, true, { ttl });
  if (await kv.get(key) !== undefined) return false;
  await kv.set(key, true, { ttl });
  return true;
}

/** Reads an unverified inbox body with the same cap and parser as a verified one. */
async function readJsonObject(
  request: Request,
  maxBytes: number,
  limits: ResolvedDocumentComplexityLimits,
): Promise<
  | { readonly ok: true; readonly activity: Record<string, unknown>; readonly body: Uint8Array }
  | { readonly ok: false; readonly status: 400 | 413; readonly message: string }
> {
  let body: Uint8Array;
  try {
    const read = await readBodyCapped(request, maxBytes);
    if (read.truncated) {
      return { ok: false, status: 413, message: `The body exceeds ${maxBytes} bytes.` };
    }
    body = read.body;
  } catch {
    return { ok: false, status: 400, message: "The body could not be read." };
  }
  const parsed = parseActivityBody(body, limits);
  if (!parsed.ok) return { ok: false, status: 400, message: parsed.message };
  return { ok: true, activity: parsed.activity, body };
}

/** The origin of an activity's sole `actor` (a URL or an object's `id`), else `"null"`. */
function actorOriginOf(activity: Record<string, unknown>): string {
  let { actor } = activity;
  if (typeof actor === "object" && actor != null && !Array.isArray(actor)) {
    actor = (actor as Record<string, unknown>).id;
  }
  if (typeof actor !== "string") return "null";
  try {
    return new URL(actor).origin;
  } catch {
    return "null";
  }
}

async function sha256Hex(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>),
  );
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Whether an enqueue failed because the message cannot be encoded: the
 * stack overflow (`RangeError`) of `JSON.stringify()` or `structuredClone()`,
 * thrown as is or as the `cause` of a backend's own error.
 */
function isUnencodable(error: unknown): boolean {
  return error instanceof RangeError ||
    (error instanceof Error && error.cause instanceof RangeError);
}
