// Running a queued delivery: sign it with the sender's keys, POST it, and
// tell a permanent failure from one worth retrying.  Generic over the
// context the callbacks get (the federation's Context).
import { Activity, type DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { ActorKeyPair } from "../actors/key-pairs.ts";
import { PrivateAddressError } from "../network/errors.ts";
import { buildCollectionSynchronizationHeader } from "../collections/synchronization.ts";
import { deliverSignedActivity } from "./deliver.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { PermanentError } from "../../processing/errors.ts";
import { DeliveryError } from "./errors.ts";
import type { FanoutMessage, OutboxMessage } from "./messages.ts";
import type { ResolvedRemoteRequestOptions } from "../network/remote-request-options.ts";

const logger = getLogger(["fedwork", "federation", "outbox"]);

/**
 * What an outbox permanent failure handler is told about a delivery that
 * will never succeed.
 * @since 0.2.0
 */
export interface OutboxPermanentFailure {
  /** The inbox that refused the activity for good. */
  readonly inbox: URL;
  /** The activity. */
  readonly activity: Activity;
  /** The error the delivery failed with. */
  readonly error: Error;
  /** The status the inbox answered (one of `permanentFailureStatusCodes`). */
  readonly statusCode: number;
  /** The recipients reached through that inbox, e.g. followers to remove. */
  readonly actorIds: readonly URL[];
}

/**
 * Called once when a delivery fails for good (the federation's
 * `OutboxPermanentFailureHandler`).
 * @typeParam TContext The context it gets.
 * @since 0.4.0
 */
export type PermanentFailureCallback<TContext> = (
  ctx: TContext,
  failure: OutboxPermanentFailure,
) => void | Promise<void>;

/**
 * What {@link deliverOutboxMessage} needs from the federation.
 * @typeParam TContext The context the callbacks get (since 0.4.0; the
 *                     context data type before).
 * @since 0.1.0
 */
export interface DeliveryOptions<TContext extends { readonly documentLoader: DocumentLoader }> {
  /** Where the signature scheme each origin accepted is remembered. */
  readonly kv: KvStore;
  /** The `User-Agent` header. */
  readonly userAgent: string;
  /** Whether loopback and private inboxes may be contacted. */
  readonly allowPrivateAddress: boolean;
  /** The limits of outgoing requests (the delivery time limit, redirects). */
  readonly remoteRequests: ResolvedRemoteRequestOptions;
  /** The scheme to try first with an origin not yet remembered. */
  readonly firstKnock: HttpSignatureSpec;
  /** The statuses after which a delivery is never retried. */
  readonly permanentFailureStatusCodes: readonly number[];
  /** A context for the message's base URL, for the callbacks. */
  readonly createContext: (baseUrl: URL) => TContext;
  /** Returns the sender's key pairs (cached per process). */
  readonly getKeyPairs: (ctx: TContext, identifier: string) => Promise<ActorKeyPair[]>;
  /** Called once when the delivery fails for good. */
  readonly onPermanentFailure?: PermanentFailureCallback<TContext> | undefined;
  /**
   * Aborts the delivery: the worker's shutdown or the `outboxTimeout`.
   * @since 0.3.0
   */
  readonly signal?: AbortSignal;
}

/**
 * Delivers one outbox message: signs its activity with the sender's first
 * RSA key, now, and POSTs it to its inbox with the double knock.  Returns
 * when the inbox accepted it; throws {@link PermanentError} when the inbox
 * answered a permanent failure status (after calling the permanent failure
 * handler once) or refused a private address, and a {@link DeliveryError}
 * for anything worth retrying (5xx, 429, network errors…), which the
 * dispatcher retries by the outbox retry policy, signing again each time.
 * @param message The message.
 * @param options The federation's delivery settings.
 * @throws {PermanentError} When retrying cannot help.
 * @throws {DeliveryError} When the delivery may succeed later.
 * @since 0.1.0
 */
export async function deliverOutboxMessage<
  TContext extends { readonly documentLoader: DocumentLoader },
>(
  message: OutboxMessage,
  options: DeliveryOptions<TContext>,
): Promise<void> {
  const inbox = new URL(message.inbox);
  if (message.senderIdentifier == null) {
    throw new PermanentError(
      `The delivery to ${inbox.href} names no sender, so it cannot be signed.`,
    );
  }
  const ctx = options.createContext(new URL(message.baseUrl));
  const keys = await options.getKeyPairs(ctx, message.senderIdentifier);
  if (keys.length === 0) {
    throw new PermanentError(
      `The actor ${JSON.stringify(message.senderIdentifier)} has no key pairs to sign the ` +
        `delivery to ${inbox.href} with.`,
    );
  }
  const result = await deliverSignedActivity({
    activity: activityJsonOf(message.activity),
    inbox,
    keys,
    kv: options.kv,
    firstKnock: options.firstKnock,
    permanentFailureStatusCodes: options.permanentFailureStatusCodes,
    userAgent: options.userAgent,
    allowPrivateAddress: options.allowPrivateAddress,
    signal: options.signal,
    timeout: { milliseconds: options.remoteRequests.deliveryTimeoutMs },
    maxRedirects: options.remoteRequests.maxRedirects,
    ...(message.collectionSync == null || message.actorIds.length === 0 ? {} : {
      headers: {
        "Collection-Synchronization": await buildCollectionSynchronizationHeader(
          message.collectionSync,
          message.actorIds,
        ),
      },
    }),
  });
  if (result.kind === "delivered") {
    logger.debug("Delivered activity {activityId} to {inbox} (HTTP {status}, {spec}).", {
      activityId: message.activityId,
      inbox: inbox.href,
      status: result.status,
      spec: result.spec,
      messageId: message.id,
    });
    return;
  }
  const error = new DeliveryError(
    inbox.href,
    result.status,
    result.body,
    result.cause,
    result.retryAfterMs,
  );
  if (result.kind === "retryableFailure") throw error;
  if (result.cause instanceof PrivateAddressError) {
    throw new PermanentError(result.cause.message, { cause: result.cause });
  }
  if (options.onPermanentFailure != null && result.status != null) {
    await callPermanentFailureHandler(options.onPermanentFailure, ctx, message, {
      inbox,
      error,
      statusCode: result.status,
    });
  }
  throw new PermanentError(error.message, { cause: error });
}

/**
 * The JSON text of deliveries' activities, by the activity object: the
 * deliveries a fan-out expands into in one process share one object, and
 * queued messages are never changed, so it is serialized once, not once a
 * delivery.
 */
const activityJson = new WeakMap<object, string>();

function activityJsonOf(activity: unknown): unknown {
  if (typeof activity !== "object" || activity == null) return activity;
  let json = activityJson.get(activity);
  if (json == null) {
    json = JSON.stringify(activity);
    activityJson.set(activity, json);
  }
  return json;
}

async function callPermanentFailureHandler<
  TContext extends { readonly documentLoader: DocumentLoader },
>(
  handler: PermanentFailureCallback<TContext>,
  ctx: TContext,
  message: OutboxMessage,
  failure: { inbox: URL; error: Error; statusCode: number },
): Promise<void> {
  try {
    const activity = await Activity.fromJsonLd(message.activity, {
      documentLoader: ctx.documentLoader,
      contextLoader: ctx.documentLoader,
    });
    await handler(ctx, {
      ...failure,
      activity,
      actorIds: message.actorIds.flatMap((id) => URL.canParse(id) ? [new URL(id)] : []),
    });
  } catch (handlerError) {
    logger.error("The outbox permanent failure handler threw {handlerError}.", {
      messageId: message.id,
      inbox: failure.inbox.href,
      handlerError,
    });
  }
}

/**
 * Expands a fan-out message into one outbox message per inbox.  The new
 * messages get fresh IDs, attempt 0 and the fan-out's ordering key; their
 * trace context is filled in when they are enqueued.
 * @param message The fan-out message.
 * @returns The outbox messages.
 * @since 0.1.0
 */
export function expandFanoutMessage(message: FanoutMessage): OutboxMessage[] {
  const started = new Date().toISOString();
  // The actor id arrays are shared with the fan-out message, not copied
  // per delivery: messages are never changed once built.
  return Object.entries(message.inboxes).map(([inbox, { actorIds, sharedInbox }]) => ({
    type: "outbox",
    id: crypto.randomUUID(),
    baseUrl: message.baseUrl,
    started,
    attempt: 0,
    ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
    traceContext: {},
    inbox,
    sharedInbox,
    actorIds,
    activity: message.activity,
    ...(message.activityId == null ? {} : { activityId: message.activityId }),
    activityType: message.activityType,
    ...(message.senderIdentifier == null ? {} : { senderIdentifier: message.senderIdentifier }),
    ...(message.collectionSync == null ? {} : { collectionSync: message.collectionSync }),
  }));
}
