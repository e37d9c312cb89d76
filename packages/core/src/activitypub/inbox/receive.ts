// The inbox request: check the recipient, read and verify the request,
// answer a challenge, skip an activity already received, then hand the
// message over (enqueued, or run now without an inbox queue) and answer.
// Generic over the contexts: the federation fills in the host.
import { Tombstone } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { readBodyCapped } from "../../http/capped-body.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { Outcome } from "../../processing/outcome.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { DurationInput } from "../../time/duration.ts";
import type { ResolvedDocumentComplexityLimits } from "../network/document-complexity.ts";
import type { ResolvedRemoteDocumentOptions } from "../network/remote-document-options.ts";
import { createPublicKeyFetcher, type PublicKeyFetcher } from "../signatures/key-cache.ts";
import {
  consumeSignatureNonce,
  type InboxChallengePolicy,
  withAcceptSignatureChallenge,
} from "./challenge.ts";
import {
  claimReceivedActivity,
  type IdempotencyKeyFunction,
  type IdempotencyStrategy,
  receivedActivityKey,
} from "./idempotency.ts";
import type { InboxMessage } from "./message.ts";
import { parseActivityBody } from "./parse-activity.ts";
import type { InboxRefusalLog, InboxRefusalReason } from "./refusal-log.ts";
import { blockedActorHost } from "./blocked-sender.ts";
import type { HostBlockPredicate } from "../host-policy/options.ts";
import { runUnverifiedActivityHook, type UnverifiedActivityHook } from "./unverified.ts";
import { verifyInboxRequest } from "./verify.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/**
 * What {@link handleInboxRequest} reads of the request's context.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface InboxRequestContext<TContextData> {
  /** The request. */
  readonly request: Request;
  /** The request's origin. */
  readonly origin: string;
  /** The origin URIs are built from. */
  readonly canonicalOrigin: string;
  /** The context data. */
  readonly data: TContextData;
  /**
   * A document loader whose requests an actor signs.
   * @param identity The actor.
   */
  getDocumentLoader(identity: { readonly identifier: string }): Promise<DocumentLoader>;
}

/**
 * The registrations {@link handleInboxRequest} reads: the part of a
 * federation's registry it uses.
 * @typeParam TRequestContext The request's context.
 * @typeParam TInboxContext The context an idempotency key callback gets.
 * @since 0.4.0
 */
export interface InboxRequestRegistry<TRequestContext, TInboxContext> {
  /** The actor route, to check that a personal inbox's actor exists. */
  readonly actor?: {
    readonly dispatcher: (ctx: TRequestContext, identifier: string) => unknown;
  } | undefined;
  /** How received activities are deduplicated. */
  readonly inboxIdempotency?:
    | IdempotencyStrategy
    | IdempotencyKeyFunction<TInboxContext>
    | undefined;
  /** Names the actor whose key signs the inbox's key fetches. */
  readonly sharedKeyDispatcher?:
    | ((
      ctx: TRequestContext,
    ) =>
      | { readonly identifier: string }
      | null
      | Promise<{ readonly identifier: string } | null>)
    | undefined;
  /** Sees activities whose signature failed. */
  readonly unverifiedActivityHandler?: UnverifiedActivityHook<TRequestContext> | undefined;
}

/**
 * The federation options {@link handleInboxRequest} reads.
 * @since 0.4.0
 */
export interface InboxRequestOptions {
  readonly kv: KvStore;
  /** Only whether there is an inbox queue matters. */
  readonly queues: { readonly inbox?: MessageQueue | undefined };
  readonly origin?: string | undefined;
  readonly documentLoader: DocumentLoader;
  readonly remoteDocuments: ResolvedRemoteDocumentOptions;
  readonly signatureTimeWindow: DurationInput | false;
  readonly proofMaxAge: DurationInput | false;
  readonly skipSignatureVerification: boolean;
  readonly inboxChallengePolicy?: InboxChallengePolicy | undefined;
  readonly inboxIdempotencyTtlMs: number;
  readonly inboxMaxBytes: number;
  /**
   * The host policy: the inbox refuses activities from blocked hosts with
   * 403 before fetching any key.
   * @since 0.4.0
   */
  readonly hostPolicy?: { readonly isBlocked?: HostBlockPredicate } | undefined;
}

/**
 * What {@link handleInboxRequest} needs from the federation.  Internal.
 * @typeParam TContextData The context data type.
 * @typeParam TRequestContext The request's context (since 0.4.0).
 * @typeParam TInboxContext The context an idempotency key callback gets
 *                          (since 0.4.0).
 * @since 0.2.0
 */
export interface InboxRequestHost<
  TContextData,
  TRequestContext extends InboxRequestContext<TContextData>,
  TInboxContext,
> {
  readonly registry: InboxRequestRegistry<TRequestContext, TInboxContext>;
  readonly options: InboxRequestOptions;
  readonly fetchPublicKey: PublicKeyFetcher;
  /** Logs refused requests at info, once per host per minute (since 0.4.0). */
  readonly inboxRefusals: InboxRefusalLog;
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
  ): TInboxContext;
}

/**
 * How {@link handleInboxRequest} answers what it does not handle itself.
 * @since 0.2.0
 */
export interface InboxRequestCallbacks {
  readonly onNotFound: (request: Request) => Response | Promise<Response>;
  readonly onUnauthorized: (request: Request) => Response | Promise<Response>;
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
export async function handleInboxRequest<
  TContextData,
  TRequestContext extends InboxRequestContext<TContextData>,
  TInboxContext,
>(
  host: InboxRequestHost<TContextData, TRequestContext, TInboxContext>,
  ctx: TRequestContext,
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
  const refuse = (
    status: number,
    reason: InboxRefusalReason,
    message: string,
    from: string | undefined = undefined,
  ) =>
    host.inboxRefusals.refused({
      host: from ?? "(unknown)",
      inbox: inboxUrl.href,
      status,
      reason,
      message,
    });
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
    if (!read.ok) {
      refuse(read.status, read.status === 413 ? "bodyTooLarge" : "invalidJson", read.message);
      return text(read.status, read.message);
    }
    ({ activity, body } = read);
    const isBlocked = options.hostPolicy?.isBlocked;
    const blocked = isBlocked == null ? undefined : await blockedActorHost(activity, isBlocked);
    if (blocked != null) {
      const message = `The actor's host ${blocked} is blocked.`;
      refuse(403, "blockedHost", message, blocked);
      return text(403, message);
    }
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
      ...(options.hostPolicy?.isBlocked == null
        ? {}
        : { isBlockedHost: options.hostPolicy.isBlocked }),
    });
    if (!verification.ok) {
      const logRefusal = () =>
        refuse(
          verification.status,
          verification.reason,
          verification.message,
          hostOf(verification.keyId?.href) ?? actorHostOf(verification.activity),
        );
      if (verification.status !== 401) {
        logRefusal();
        return text(verification.status, verification.message);
      }
      const answered = await runUnverifiedActivityHook(
        registry.unverifiedActivityHandler,
        options,
        ctx,
        verification,
      );
      // The hook took it (a Delete from an actor that is gone, say): the
      // application's decision, not a refusal.
      if (answered != null) return answered;
      logRefusal();
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
      refuse(
        401,
        "challengeNonce",
        `The request signed by ${verification.signer.href} carries no valid challenge nonce.`,
        verification.signer.host,
      );
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
  const senderHost = hostOf(senderOrigin);
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
      refuse(400, "unencodable", `The activity cannot be stored: ${reason}`, senderHost);
      return text(400, `The activity cannot be stored: ${reason}`);
    }
    logger.error("Failed to receive activity {activityId}: {error}", { activityId, error });
    return text(500, "The activity could not be processed; try again later.");
  }
  if (outcome?.type === "dropped") {
    // Sending the same activity again fails the same way, but a corrected
    // one with the same id must get through.
    if (claimed != null) await options.kv.delete(claimed);
    refuse(400, "malformed", `The activity is malformed: ${outcome.reason}`, senderHost);
    return text(400, `The activity is malformed: ${outcome.reason}`);
  }
  return text(202, "Accepted.");
}

/**
 * The key fetcher for an inbox request: the federation's or, with a shared
 * key dispatcher, one whose GETs that actor signs.  The dispatcher and the
 * actor's keys are asked for only when a key is fetched, so a request
 * refused before (unsigned, too large, malformed) costs the application
 * nothing.
 */
function keyFetcherFor<
  TContextData,
  TRequestContext extends InboxRequestContext<TContextData>,
  TInboxContext,
>(
  host: InboxRequestHost<TContextData, TRequestContext, TInboxContext>,
  ctx: TRequestContext,
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

/** The host of a URL, or `undefined` when it is none. */
function hostOf(url: string | undefined): string | undefined {
  if (url == null) return undefined;
  try {
    const { host } = new URL(url);
    return host === "" ? undefined : host;
  } catch {
    return undefined;
  }
}

/** The host of an unverified activity's sole `actor`, if it has one. */
function actorHostOf(activity: Record<string, unknown> | undefined): string | undefined {
  return activity == null ? undefined : hostOf(actorOriginOf(activity));
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
