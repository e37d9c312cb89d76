// Deduplicating received activities: the KV key an activity is recorded
// under, by the inbox's idempotency strategy or key callback, and the claim
// that makes a second copy a no-op.  Shared by the inbox request and
// `ctx.routeActivity()`.
import { Activity, type DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import type { ResolvedRemoteDocumentOptions } from "../network/remote-document-options.ts";
import { withDocumentLoadBudget } from "../network/document-budget.ts";

const logger = getLogger(["fedwork", "federation", "inbox"]);

/**
 * How received activities are deduplicated by their id: per inbox (the
 * same activity delivered to two personal inboxes runs twice, once for
 * each), per origin of the receiving server, or globally.
 * @since 0.2.0
 */
export type IdempotencyStrategy = "per-inbox" | "per-origin" | "global";

/**
 * Returns the key that identifies a received activity, or `null` not to
 * deduplicate it: the federation's `IdempotencyKeyCallback`, generic over
 * the context it gets.
 * @typeParam TContext The inbox context it gets.
 * @since 0.4.0
 */
export type IdempotencyKeyFunction<TContext> = (
  ctx: TContext,
  activity: Activity,
) => string | null | Promise<string | null>;

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
 * What parsing a received activity (for a hook or a key callback) needs:
 * the loader and the document budget the inbox worker parses it with.
 * @since 0.4.0
 */
export interface ReceivedActivityParsing {
  /** Loads remote documents. */
  readonly documentLoader: DocumentLoader;
  /** The document limits and load budget. */
  readonly remoteDocuments: ResolvedRemoteDocumentOptions;
}

/**
 * What {@link receivedActivityKey} needs: the idempotency setting, the
 * parsing settings, and a way to make the context a key callback gets.
 * @typeParam TContextData The context data type.
 * @typeParam TInboxContext The context a key callback gets.
 * @since 0.4.0
 */
export interface ReceivedActivityKeyHost<TContextData, TInboxContext> {
  /** The inbox's idempotency setting (`"per-inbox"` when absent). */
  readonly registry: {
    readonly inboxIdempotency?:
      | IdempotencyStrategy
      | IdempotencyKeyFunction<TInboxContext>
      | undefined;
  };
  /** How a received activity is parsed for the callback. */
  readonly options: ReceivedActivityParsing;
  /**
   * Makes the context an idempotency key callback gets.
   * @param baseUrl The base URL the activity was received at.
   * @param data The context data.
   * @param recipient The personal inbox's identifier, or `null`.
   * @param activity The activity as received.
   */
  createInboxContext(
    baseUrl: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
  ): TInboxContext;
}

const IDEMPOTENCY_PREFIX = ["fedwork", "activity-idempotence"] as const;

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
 * Where and from whom an activity came, and what it is: what
 * {@link receivedActivityKey} keys it by.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface ReceivedActivity<TContextData> {
  readonly baseUrl: URL;
  readonly data: TContextData;
  readonly recipient: string | null;
  readonly inboxUrl: URL;
  readonly senderOrigin: string;
  readonly activity: Record<string, unknown>;
  readonly identity: ReceivedActivityIdentity;
}

/**
 * The KV key recording that an activity was received, by the inbox's
 * idempotency setting: {@link idempotencyKey} for a strategy name or, for
 * a key callback, `[...prefix, "custom", senderOrigin, key]` with the key
 * it returns (so that a decoy from another origin still cannot shadow the
 * genuine activity), or `null` when it returns `null` (no deduplication).
 * A callback that throws, or an activity it cannot be given (not
 * parsable), falls back to the `"per-inbox"` key.  Used by the inbox
 * request and `ctx.routeActivity()`.
 * @param host The idempotency setting and the callback's context.
 * @param received Where and from whom the activity came, and what it is.
 * @returns The key, or `null` not to deduplicate.
 * @since 0.3.0
 */
export async function receivedActivityKey<TContextData, TInboxContext>(
  host: ReceivedActivityKeyHost<TContextData, TInboxContext>,
  received: ReceivedActivity<TContextData>,
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
async function callIdempotencyKeyCallback<TContextData, TInboxContext>(
  host: ReceivedActivityKeyHost<TContextData, TInboxContext>,
  callback: IdempotencyKeyFunction<TInboxContext>,
  received: ReceivedActivity<TContextData>,
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
 * @param options The loader and the document budget.
 * @param activity The activity as received.
 * @returns The activity.
 * @throws When it cannot be parsed.
 * @since 0.4.0
 */
export function parseReceivedActivity(
  options: ReceivedActivityParsing,
  activity: Readonly<Record<string, unknown>>,
): Promise<Activity> {
  const loader = withDocumentLoadBudget(options.documentLoader, options.remoteDocuments.budget);
  return Activity.fromJsonLd(activity, { documentLoader: loader, contextLoader: loader });
}

/**
 * Records that an activity was received under its idempotency key, for
 * `inboxIdempotencyTtl`.  Used by the inbox request and
 * `ctx.routeActivity()`.
 * @param options The federation's KV store and idempotency TTL.
 * @param key The key, from {@link idempotencyKey}.
 * @returns `false` when it was already recorded (a duplicate).
 * @since 0.3.0
 */
export async function claimReceivedActivity(
  options: { readonly kv: KvStore; readonly inboxIdempotencyTtlMs: number },
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
