import { Tombstone } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { DEFAULT_MAX_INBOX_BODY_SIZE, verifyInboxRequest } from "../activitypub/inbox/verify.ts";
import {
  createPublicKeyFetcher,
  type PublicKeyFetcher,
} from "../activitypub/signatures/key-cache.ts";
import type { KvKey } from "../kv/kv-store.ts";
import { MalformedMessageError, PermanentError } from "../processing/errors.ts";
import type { InboxMessage } from "./message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { FederationRegistry, IdempotencyStrategy } from "./registry.ts";
import type { RequestContext } from "./request-context.ts";

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
   * Enqueues the message into the inbox queue or, without one, runs the
   * listeners now; rejects when neither worked.
   */
  receive(message: InboxMessage, contextData: TContextData): Promise<void>;
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
 * The KV key recording that an activity was received, by the inbox's
 * idempotency strategy.
 * @param strategy The strategy.
 * @param inboxUrl The inbox that received it (canonical origin and path).
 * @param activityId The activity's id.
 * @returns The key.
 * @since 0.2.0
 */
export function idempotencyKey(
  strategy: IdempotencyStrategy,
  inboxUrl: URL,
  activityId: string,
): KvKey {
  switch (strategy) {
    case "global":
      return [...IDEMPOTENCY_PREFIX, "global", activityId];
    case "per-origin":
      return [...IDEMPOTENCY_PREFIX, "origin", inboxUrl.origin, activityId];
    case "per-inbox":
      return [...IDEMPOTENCY_PREFIX, "inbox", inboxUrl.origin + inboxUrl.pathname, activityId];
  }
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
}

/**
 * Answers a POST to a personal or the shared inbox: checks the recipient
 * exists (404/410), reads and verifies the request (400 for a body that is
 * not a JSON object, 413 above 1 MiB, 401 through `onUnauthorized` for a
 * missing or invalid signature or a signer that is not the activity's
 * actor), skips an activity already received (by its id and the inbox's
 * idempotency strategy), enqueues it (or runs the listeners without an
 * inbox queue: a listener's `PermanentError` still answers 202, an
 * unparsable activity 400, any other error 500 for the sender to retry)
 * and answers 202.
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
  let activity: Record<string, unknown>;
  if (options.skipSignatureVerification) {
    const parsed = await readJsonObject(request);
    if (typeof parsed === "number") {
      return text(parsed, parsed === 413 ? "The body is too large." : "The body is not JSON.");
    }
    activity = parsed;
  } else {
    const signer = await registry.sharedKeyDispatcher?.(ctx) ?? null;
    const verification = await verifyInboxRequest(request, {
      kv: options.kv,
      documentLoader: options.documentLoader,
      // Keys are cached in the KV store whoever fetched them.
      fetchKey: signer == null ? host.fetchPublicKey : createPublicKeyFetcher({
        kv: options.kv,
        documentLoader: await ctx.getDocumentLoader(signer),
      }),
      timeWindow: options.signatureTimeWindow,
      ...(options.origin == null ? {} : { origin: options.origin }),
    });
    if (!verification.ok) {
      if (verification.status === 401) return await callbacks.onUnauthorized(request);
      return text(verification.status, verification.message);
    }
    activity = verification.activity;
  }
  const activityId = typeof activity.id === "string" ? activity.id : null;
  let claimed: KvKey | null = null;
  if (activityId != null) {
    const inboxUrl = new URL(new URL(request.url).pathname, ctx.canonicalOrigin);
    const key = idempotencyKey(registry.inboxIdempotency ?? "per-inbox", inboxUrl, activityId);
    if (!await claim(host, key)) {
      logger.debug("Skipped activity {activityId}: already received at {inbox}.", {
        activityId,
        inbox: inboxUrl.href,
      });
      return text(202, `The activity ${activityId} was already received.`);
    }
    claimed = key;
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
  };
  try {
    await host.receive(message, ctx.data);
  } catch (error) {
    // Without an inbox queue the listeners ran in the request, so their
    // failure is the sender's to retry, unless retrying cannot help.
    if (error instanceof PermanentError) {
      logger.error("A listener gave up on activity {activityId}: {error}", { activityId, error });
      return text(202, "Accepted.");
    }
    // Let the sender's retry through: it was not handled.
    if (claimed != null) await options.kv.delete(claimed);
    if (error instanceof MalformedMessageError) {
      return text(400, `The activity is malformed: ${error.message}`);
    }
    logger.error("Failed to receive activity {activityId}: {error}", { activityId, error });
    return text(500, "The activity could not be processed; try again later.");
  }
  return text(202, "Accepted.");
}

async function claim<TContextData>(host: InboxRequestHost<TContextData>, key: KvKey) {
  const { kv, inboxIdempotencyTtlMs } = host.options;
  const ttl = { milliseconds: inboxIdempotencyTtlMs };
  // With compare-and-swap, two copies arriving at once still run once.
  if (kv.cas != null) return await kv.cas(key, undefined, true, { ttl });
  if (await kv.get(key) !== undefined) return false;
  await kv.set(key, true, { ttl });
  return true;
}

async function readJsonObject(request: Request): Promise<Record<string, unknown> | 400 | 413> {
  const body = new Uint8Array(await request.arrayBuffer());
  if (body.byteLength > DEFAULT_MAX_INBOX_BODY_SIZE) return 413;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body));
    return typeof parsed === "object" && parsed != null && !Array.isArray(parsed) ? parsed : 400;
  } catch {
    return 400;
  }
}
