import { getLogger } from "@logtape/logtape";
import { DeliveryError } from "./errors.ts";
import type { FanoutMessage, OutboxMessage } from "./message.ts";
import { assertPublicUrl } from "./private-address.ts";

const logger = getLogger(["fedwork", "federation", "outbox"]);

/**
 * Options for {@link deliverOutboxMessage}.
 * @since 0.1.0
 */
export interface DeliveryOptions {
  /** The `User-Agent` header. */
  readonly userAgent: string;
  /** Whether loopback and private inboxes may be contacted. */
  readonly allowPrivateAddress: boolean;
}

/**
 * Delivers one outbox message: POSTs its activity to its inbox as
 * `application/activity+json`.
 *
 * Requests are not signed yet (HTTP Signatures and Linked Data Signatures
 * come with the activitypub module), so inboxes that require signatures
 * will refuse them with a 401, which is retried like any failure.
 * @param message The message.
 * @param options The user agent and address policy.
 * @throws {DeliveryError} When the inbox answers with a non-2xx status.
 * @throws {PrivateAddressError} When the inbox is not public and
 *         `allowPrivateAddress` is `false`.
 * @since 0.1.0
 */
export async function deliverOutboxMessage(
  message: OutboxMessage,
  options: DeliveryOptions,
): Promise<void> {
  const inbox = new URL(message.inbox);
  if (!options.allowPrivateAddress) await assertPublicUrl(inbox);
  const response = await fetch(inbox, {
    method: "POST",
    headers: {
      "Content-Type": "application/activity+json",
      Accept: "application/activity+json, application/ld+json",
      "User-Agent": options.userAgent,
    },
    body: JSON.stringify(message.activity),
    // A redirect of a POST would silently drop or re-send the body, and
    // could point at a private address: treat it as a failure instead.
    redirect: "manual",
  });
  if (response.status < 200 || response.status > 299) {
    let body = "";
    try {
      body = (await response.text()).slice(0, 512);
    } catch {
      // The status alone is enough to report the failure.
    }
    throw new DeliveryError(inbox.href, response.status, body);
  }
  await response.body?.cancel();
  logger.debug("Delivered activity {activityId} to {inbox} (HTTP {status}).", {
    activityId: message.activityId,
    inbox: inbox.href,
    status: response.status,
    messageId: message.id,
  });
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
  return Object.entries(message.inboxes).map(([inbox, { actorIds, sharedInbox }]) => ({
    type: "outbox",
    id: crypto.randomUUID(),
    baseUrl: message.baseUrl,
    started: new Date().toISOString(),
    attempt: 0,
    ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
    traceContext: {},
    inbox,
    sharedInbox,
    actorIds: [...actorIds],
    activity: message.activity,
    ...(message.activityId == null ? {} : { activityId: message.activityId }),
    activityType: message.activityType,
    ...(message.senderIdentifier == null ? {} : { senderIdentifier: message.senderIdentifier }),
  }));
}
