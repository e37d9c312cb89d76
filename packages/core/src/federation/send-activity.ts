// The federation's side of sending: the registry and queues that the
// generic sending code (activitypub/outbox/send-activity.ts) works through.
import type { Activity, Recipient } from "@fedify/vocab";
import type { OutboxMessage } from "../activitypub/outbox/messages.ts";
import {
  type ActivityTransport as DeliveryTransport,
  forwardActivity as forwardThrough,
  sendActivity as sendThrough,
} from "../activitypub/outbox/send-activity.ts";
import type { SendActivityOptions, SenderIdentity } from "../activitypub/outbox/send-options.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { Context } from "./context-api.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import type { Message } from "./message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { FederationRegistry } from "./registry-api.ts";

/**
 * What {@link sendActivity} needs from the federation.  Internal.
 * @since 0.1.0
 */
export interface ActivityTransport<TContextData> {
  readonly registry: FederationRegistry<TContextData>;
  readonly options: ResolvedFederationOptions;
  enqueue(
    queue: MessageQueue,
    messages: readonly Message[],
    contextData: TContextData,
    options?: MessageQueueEnqueueOptions,
  ): Promise<void>;
  deliverOrEnqueue(messages: OutboxMessage[], contextData: TContextData): Promise<void>;
}

/**
 * Implements `Context.sendActivity()` for a federation; see the function
 * of the same name in activitypub/outbox/send-activity.ts.
 * @param transport The federation.
 * @param ctx The sending context.
 * @param sender The sending actor.
 * @param recipients The recipients, or `"followers"`.
 * @param activity The activity.
 * @param options Shared inbox preference, fan-out and ordering.
 * @returns Resolves once enqueued (or delivered, without an outbox queue).
 * @throws {TypeError} When an argument is malformed.
 * @throws {RouteNotRegisteredError} With `"followers"` but no followers
 *         dispatcher, or without a key pairs dispatcher to sign with.
 * @since 0.1.0
 */
export function sendActivity<TContextData>(
  transport: ActivityTransport<TContextData>,
  ctx: Context<TContextData>,
  sender: SenderIdentity,
  recipients: Recipient | readonly Recipient[] | "followers",
  activity: Activity,
  options: SendActivityOptions,
): Promise<void> {
  return sendThrough(deliveryTransport(transport), ctx, sender, recipients, activity, options);
}

/**
 * Implements `InboxContext.forwardActivity()` for a federation; see the
 * function of the same name in activitypub/outbox/send-activity.ts.
 * @param transport The federation.
 * @param ctx The context.
 * @param forwarder The forwarding actor.
 * @param recipients The recipients, or `"followers"`.
 * @param activity The activity as received (JSON).
 * @param options Shared inbox preference, fan-out and ordering.
 * @returns Resolves once enqueued (or delivered, without an outbox queue).
 * @throws {TypeError} When an argument is malformed.
 * @throws {RouteNotRegisteredError} As {@link sendActivity}.
 * @since 0.2.0
 */
export function forwardActivity<TContextData>(
  transport: ActivityTransport<TContextData>,
  ctx: Context<TContextData>,
  forwarder: SenderIdentity,
  recipients: Recipient | readonly Recipient[] | "followers",
  activity: Readonly<Record<string, unknown>>,
  options: SendActivityOptions,
): Promise<void> {
  return forwardThrough(
    deliveryTransport(transport),
    ctx,
    forwarder,
    recipients,
    activity,
    options,
  );
}

function deliveryTransport<TContextData>(
  transport: ActivityTransport<TContextData>,
): DeliveryTransport<Context<TContextData>> {
  return {
    assertCanSign: () => checkKeyPairsDispatcher(transport.registry),
    listFollowers: (ctx, identifier) => listFollowers(transport.registry, ctx, identifier),
    fanoutQueue: () => transport.options.queues.fanout,
    enqueueFanout: (queue, message, ctx, options) =>
      transport.enqueue(queue, [message], ctx.data, options),
    deliverOrEnqueue: (messages, ctx) => transport.deliverOrEnqueue(messages, ctx.data),
  };
}

function checkKeyPairsDispatcher<TContextData>(registry: FederationRegistry<TContextData>): void {
  // Fail in the caller rather than in every delivery: nothing can be
  // delivered unsigned.
  if (registry.actor?.keyPairsDispatcher == null) {
    throw new RouteNotRegisteredError(
      "key pairs dispatcher (deliveries are signed with the sender's keys)",
      "setActorDispatcher(…).setKeyPairsDispatcher",
    );
  }
}

async function listFollowers<TContextData>(
  registry: FederationRegistry<TContextData>,
  ctx: Context<TContextData>,
  identifier: string,
): Promise<Recipient[]> {
  const route = registry.followers;
  if (route == null) {
    throw new RouteNotRegisteredError("followers dispatcher", "setFollowersDispatcher");
  }
  const followers: Recipient[] = [];
  // First the whole collection at once (cursor null); a paged collection
  // answers null there, and is then read page by page from its first cursor.
  let cursor: string | null = null;
  let page = await route.dispatcher(ctx, identifier, null);
  if (page == null) {
    cursor = await route.firstCursor?.(ctx, identifier) ?? null;
    if (cursor == null) return followers;
    page = await route.dispatcher(ctx, identifier, cursor);
  }
  // Guard against a dispatcher that hands out the same cursor forever.
  const seen = new Set<string | null>([cursor]);
  while (page != null) {
    followers.push(...page.items);
    const next: string | null = page.nextCursor ?? null;
    if (next == null || seen.has(next)) break;
    seen.add(next);
    page = await route.dispatcher(ctx, identifier, next);
  }
  return followers;
}
