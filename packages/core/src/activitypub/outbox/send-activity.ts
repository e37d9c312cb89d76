import { Activity, type Recipient } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { assertKnownOptions } from "../../options/known-options.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../../queue/message-queue.ts";
import type { ActorKeyPair } from "../actors/key-pairs.ts";
import { signActivityObject } from "../proofs/sign-activity.ts";
import type { FanoutInbox, FanoutMessage, OutboxMessage } from "./messages.ts";
import type {
  SendActivityOptions,
  SendActivityOptionsForCollection,
  SenderIdentity,
} from "./send-options.ts";

const logger = getLogger(["fedwork", "federation"]);

/**
 * Above this many inboxes, `fanout: "auto"` enqueues a single fan-out
 * message instead of one delivery per inbox.
 * @since 0.1.0
 */
export const FANOUT_THRESHOLD = 5;

/**
 * Maps recipients to the inboxes to deliver to, merging recipients that
 * share an inbox.  Recipients without any inbox are skipped.
 * @param recipients The recipients.
 * @param preferSharedInbox Whether to use shared inboxes when available.
 * @returns The inboxes, keyed by inbox URL.
 * @since 0.1.0
 */
export function collectInboxes(
  recipients: readonly Recipient[],
  preferSharedInbox: boolean,
): Record<string, FanoutInbox> {
  // One Map entry and one array per inbox, no Set per inbox: a large
  // account's followers share a few thousand inboxes among a hundred
  // thousand recipients, and a Set of every actor id was most of the cost.
  // Duplicates are rare (a followers collection overlapping a list), so
  // each inbox's ids are checked for them on a sorted copy and only an
  // inbox that has some is filtered, keeping the first of each in order.
  const entries = new Map<string, FanoutInbox & { actorIds: string[] }>();
  // Indexed, as in validateSendActivityArguments(): no iterator result a
  // recipient.
  for (let i = 0; i < recipients.length; i++) {
    const recipient = recipients[i];
    const shared = preferSharedInbox ? recipient.endpoints?.sharedInbox ?? null : null;
    const inbox = shared ?? recipient.inboxId;
    if (inbox == null) continue;
    const href = inbox.href;
    let entry = entries.get(href);
    if (entry == null) {
      entry = { actorIds: [], sharedInbox: shared != null };
      entries.set(href, entry);
    }
    if (recipient.id != null) entry.actorIds.push(recipient.id.href);
  }
  const inboxes: Record<string, FanoutInbox> = {};
  for (const [href, entry] of entries) {
    inboxes[href] = hasDuplicates(entry.actorIds)
      ? { actorIds: [...new Set(entry.actorIds)], sharedInbox: entry.sharedInbox }
      : entry;
  }
  return inboxes;
}

/** Whether a list of strings holds one twice, judged on a sorted copy. */
function hasDuplicates(values: readonly string[]): boolean {
  if (values.length < 2) return false;
  const sorted = [...values].sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
  return false;
}

/**
 * Checks the arguments of `sendActivity()` and normalizes the recipients.
 * @param sender The sender.
 * @param recipients One recipient or several.
 * @param activity The activity.
 * @returns The recipients as an array.
 * @throws {TypeError} When an argument is malformed; the message names it.
 * @since 0.1.0
 */
export function validateSendActivityArguments(
  sender: SenderIdentity,
  recipients: Recipient | readonly Recipient[],
  activity: Activity,
): Recipient[] {
  if (
    typeof sender !== "object" || sender == null || typeof sender.identifier !== "string" ||
    sender.identifier === ""
  ) {
    throw new TypeError(
      "The sender given to sendActivity() must be { identifier: string } naming one of your actors.",
    );
  }
  if (!(activity instanceof Activity)) {
    throw new TypeError(
      "The activity given to sendActivity() must be an Activity from @fedify/vocab (e.g. a Create).",
    );
  }
  if (activity.actorId == null) {
    throw new TypeError("The activity given to sendActivity() must have an actor.");
  }
  const list = Array.isArray(recipients) ? recipients : [recipients as Recipient];
  // Indexed, not `entries()`: a pair a recipient is garbage a large
  // account's followers collection turns into megabytes.
  for (let index = 0; index < list.length; index++) {
    const recipient = list[index];
    if (
      typeof recipient !== "object" || recipient == null ||
      !(recipient.inboxId == null || recipient.inboxId instanceof URL)
    ) {
      throw new TypeError(
        `The recipient #${index} given to sendActivity() must be an actor or ` +
          "{ id: URL, inboxId: URL, endpoints?: { sharedInbox: URL } }.",
      );
    }
  }
  return list;
}

/**
 * What a delivery message is built from.
 * @since 0.1.0
 */
export interface DeliveryDraft {
  readonly baseUrl: string;
  readonly activity: unknown;
  readonly activityId?: string;
  readonly activityType: string;
  readonly senderIdentifier: string;
  readonly orderingKey?: string;
  /** The followers collection of a `syncCollection` delivery (0.4.0). */
  readonly collectionSync?: string;
}

/**
 * Builds one outbox message per inbox.  Trace context is filled in when
 * they are enqueued.
 * @param draft The activity and its metadata.
 * @param inboxes The inboxes.
 * @returns The messages.
 * @since 0.1.0
 */
export function createOutboxMessages(
  draft: DeliveryDraft,
  inboxes: Readonly<Record<string, FanoutInbox>>,
): OutboxMessage[] {
  const started = new Date().toISOString();
  return Object.entries(inboxes).map(([inbox, { actorIds, sharedInbox }]) => ({
    type: "outbox",
    id: crypto.randomUUID(),
    started,
    attempt: 0,
    traceContext: {},
    inbox,
    sharedInbox,
    // Shared with `inboxes`, not copied: messages are never changed.
    actorIds,
    ...draft,
  }));
}

/**
 * Builds the fan-out message for all inboxes.
 * @param draft The activity and its metadata.
 * @param inboxes The inboxes.
 * @returns The message.
 * @since 0.1.0
 */
export function createFanoutMessage(
  draft: DeliveryDraft,
  inboxes: Readonly<Record<string, FanoutInbox>>,
): FanoutMessage {
  return {
    type: "fanout",
    id: crypto.randomUUID(),
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    inboxes,
    ...draft,
  };
}

/**
 * What {@link sendActivity} needs of the context it sends from: the origin
 * deliveries are made from and the sender's keys.
 * @since 0.3.0
 */
export interface SendingContext {
  /** The origin of the request or base URL, stored in each delivery. */
  readonly origin: string;
  /** The origin URIs are built from, for an activity's generated id. */
  readonly canonicalOrigin: string;
  /**
   * Returns an actor's key pairs, to sign the activity with.
   * @param identifier The actor's identifier.
   * @returns The key pairs.
   */
  getActorKeyPairs(identifier: string): Promise<ActorKeyPair[]>;
  /**
   * Returns an actor's followers collection URI, for `syncCollection`.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @since 0.4.0
   */
  getFollowersUri(identifier: string): URL;
}

/**
 * What {@link sendActivity} and {@link forwardActivity} need from the
 * federation that sends: whether it can sign, the sender's followers, and
 * the queues.  Internal.
 * @typeParam TContext The context activities are sent from.
 * @since 0.3.0
 */
export interface ActivityTransport<TContext extends SendingContext> {
  /**
   * Throws when no delivery could be signed (no key pairs are
   * registered), so that the caller hears it rather than every delivery.
   */
  assertCanSign(): void;
  /**
   * Lists an actor's followers, for the recipients `"followers"`.
   * @param ctx The sending context.
   * @param identifier The actor's identifier.
   * @returns The followers.
   */
  listFollowers(ctx: TContext, identifier: string): Promise<Recipient[]>;
  /** The fanout queue, or `undefined` when there is none. */
  fanoutQueue(): MessageQueue | undefined;
  /**
   * Enqueues a fan-out message.
   * @param queue The fanout queue.
   * @param message The message.
   * @param ctx The sending context.
   * @param options The ordering key, if any.
   */
  enqueueFanout(
    queue: MessageQueue,
    message: FanoutMessage,
    ctx: TContext,
    options: MessageQueueEnqueueOptions,
  ): Promise<void>;
  /**
   * Enqueues deliveries into the outbox queue, or delivers them now
   * without one.
   * @param messages The deliveries.
   * @param ctx The sending context.
   */
  deliverOrEnqueue(messages: OutboxMessage[], ctx: TContext): Promise<void>;
}

/**
 * Implements `Context.sendActivity()`: validates the arguments, serializes
 * the activity, signs it once, before the fan-out, with an Object
 * Integrity Proof and a Linked Data signature when the sender has an
 * Ed25519 and an RSA key (`signActivityObject()`), and enqueues one
 * fan-out message or one delivery per inbox (or delivers now without an
 * outbox queue).  Deliveries carry the sender's identifier, never keys: the
 * worker signs each request when it makes it.
 * @param transport What sends: the federation.
 * @param ctx The sending context.
 * @param sender The sending actor.
 * @param recipients The recipients, or `"followers"`.
 * @param activity The activity.
 * @param options Shared inbox preference, fan-out and ordering.
 * @throws {UnknownOptionError} When `options` holds a name it does not know.
 * @throws {TypeError} When an argument is malformed.
 * @throws What `transport.assertCanSign()` and `listFollowers()` throw
 *         (the federation's `RouteNotRegisteredError`).
 * @since 0.1.0
 */
export async function sendActivity<TContext extends SendingContext>(
  transport: ActivityTransport<TContext>,
  ctx: TContext,
  sender: SenderIdentity,
  recipients: Recipient | readonly Recipient[] | "followers",
  activity: Activity,
  options: SendActivityOptionsForCollection,
): Promise<void> {
  checkSendActivityOptions(options, "sendActivity()", SEND_ACTIVITY_OPTION_NAMES);
  if (options.syncCollection != null && typeof options.syncCollection !== "boolean") {
    throw new TypeError("The syncCollection option of sendActivity() must be true or false.");
  }
  const list = validateSendActivityArguments(
    sender,
    recipients === "followers" ? [] : recipients,
    activity,
  );
  transport.assertCanSign();
  if (recipients === "followers") {
    list.push(...await transport.listFollowers(ctx, sender.identifier));
  }
  if (activity.id == null) {
    // Fedify's shape: an https id on the sender's origin, so that receivers
    // which refuse ids on another origin than the actor's accept it.
    const id = new URL(
      `/#${activity.constructor.name}/${crypto.randomUUID()}`,
      ctx.canonicalOrigin,
    );
    logger.debug("The activity to send has no id; it was given {id}.", { id: id.href });
    activity = activity.clone({ id });
  }
  const jsonLd = await activity.toJsonLd() as Record<string, unknown>;
  const activityType = typeof jsonLd.type === "string" ? jsonLd.type : activity.constructor.name;
  await enqueueDeliveries(transport, ctx, sender, list, {
    activity: await signActivityObject(jsonLd, await ctx.getActorKeyPairs(sender.identifier)),
    activityId: activity.id!.href,
    activityType,
    // FEP-8fcf: the receiver compares its follows of the sender with this.
    ...(recipients === "followers" && options.syncCollection === true
      ? { collectionSync: ctx.getFollowersUri(sender.identifier).href }
      : {}),
  }, options);
}

/**
 * Implements `InboxContext.forwardActivity()`: delivers a received activity
 * as it was received, signed by the forwarder.
 * @param transport What sends: the federation.
 * @param ctx The context.
 * @param forwarder The forwarding actor.
 * @param recipients The recipients, or `"followers"`.
 * @param activity The activity as received (JSON).
 * @param options Shared inbox preference, fan-out and ordering.
 * @throws {UnknownOptionError} When `options` holds a name it does not know.
 * @throws {TypeError} When an argument is malformed.
 * @throws What {@link sendActivity} throws.
 * @since 0.2.0
 */
export async function forwardActivity<TContext extends SendingContext>(
  transport: ActivityTransport<TContext>,
  ctx: TContext,
  forwarder: SenderIdentity,
  recipients: Recipient | readonly Recipient[] | "followers",
  activity: Readonly<Record<string, unknown>>,
  options: SendActivityOptions,
): Promise<void> {
  checkSendActivityOptions(options, "forwardActivity()", FORWARD_ACTIVITY_OPTION_NAMES);
  if (
    typeof forwarder !== "object" || forwarder == null ||
    typeof forwarder.identifier !== "string" || forwarder.identifier === ""
  ) {
    throw new TypeError(
      "The forwarder given to forwardActivity() must be { identifier: string } naming one of " +
        "your actors.",
    );
  }
  transport.assertCanSign();
  const list = recipients === "followers"
    ? await transport.listFollowers(ctx, forwarder.identifier)
    : Array.isArray(recipients)
    ? [...recipients]
    : [recipients as Recipient];
  const id = typeof activity.id === "string" ? activity.id : undefined;
  if (activity.proof == null && activity.signature == null) {
    // As Fedify warns: only the forwarder's HTTP signature vouches for it,
    // and receivers (Fedwork, Fedify, Mastodon) refuse that from a third party.
    logger.warn(
      "Forwarding activity {activityId}, which carries neither a proof nor a Linked Data " +
        "signature: receivers will likely refuse it.",
      { activityId: id, forwarder: forwarder.identifier },
    );
  }
  await enqueueDeliveries(transport, ctx, forwarder, list, {
    activity,
    ...(id == null ? {} : { activityId: id }),
    activityType: typeof activity.type === "string" ? activity.type : "Activity",
  }, options);
}

const FORWARD_ACTIVITY_OPTION_NAMES: readonly (keyof SendActivityOptions)[] = [
  "preferSharedInbox",
  "fanout",
  "orderingKey",
];
const SEND_ACTIVITY_OPTION_NAMES: readonly (keyof SendActivityOptionsForCollection)[] = [
  ...FORWARD_ACTIVITY_OPTION_NAMES,
  "syncCollection",
];

function checkSendActivityOptions(
  options: SendActivityOptions,
  where: string,
  names: readonly string[],
): void {
  assertKnownOptions(options, names, { where });
  const fanout = options.fanout ?? "auto";
  if (fanout !== "auto" && fanout !== "skip" && fanout !== "force") {
    throw new TypeError(
      `The fanout option of ${where} must be "auto", "skip" or "force"; got ${
        JSON.stringify(fanout)
      }.`,
    );
  }
}

async function enqueueDeliveries<TContext extends SendingContext>(
  transport: ActivityTransport<TContext>,
  ctx: TContext,
  sender: SenderIdentity,
  list: readonly Recipient[],
  activity: Pick<DeliveryDraft, "activity" | "activityId" | "activityType" | "collectionSync">,
  options: SendActivityOptions,
): Promise<void> {
  const fanout = options.fanout ?? "auto";
  const inboxes = collectInboxes(list, options.preferSharedInbox ?? false);
  const inboxCount = Object.keys(inboxes).length;
  if (inboxCount === 0) {
    logger.warn("Sent activity {activityId} to no one: no recipient has an inbox.", {
      activityId: activity.activityId,
      activityType: activity.activityType,
    });
    return;
  }
  const draft: DeliveryDraft = {
    baseUrl: ctx.origin,
    ...activity,
    senderIdentifier: sender.identifier,
    ...(options.orderingKey == null ? {} : { orderingKey: options.orderingKey }),
  };
  const enqueueOptions = options.orderingKey == null ? {} : { orderingKey: options.orderingKey };
  const fanoutQueue = transport.fanoutQueue();
  if (
    fanoutQueue != null &&
    (fanout === "force" || (fanout === "auto" && inboxCount > FANOUT_THRESHOLD))
  ) {
    await transport.enqueueFanout(
      fanoutQueue,
      createFanoutMessage(draft, inboxes),
      ctx,
      enqueueOptions,
    );
  } else {
    await transport.deliverOrEnqueue(createOutboxMessages(draft, inboxes), ctx);
  }
  logger.info("Sent activity {activityId} ({activityType}) to {inboxCount} inboxes.", {
    activityId: draft.activityId,
    activityType: draft.activityType,
    inboxCount,
    sender: sender.identifier,
  });
}
