import { Activity, type Recipient } from "@fedify/vocab";
import type { FanoutInbox, FanoutMessage, OutboxMessage } from "./message.ts";

/**
 * Who sends an activity: the identifier of one of your actors.
 * @since 0.1.0
 */
export interface SenderIdentity {
  /** The actor's identifier, as in the actor dispatcher's path. */
  readonly identifier: string;
}

/**
 * Options for `Context.sendActivity()`.
 * @since 0.1.0
 */
export interface SendActivityOptions {
  /**
   * Deliver to a recipient's shared inbox instead of its personal inbox
   * when it has one, so that one request reaches every recipient on a
   * server.  `false` by default.
   */
  readonly preferSharedInbox?: boolean;

  /**
   * Whether to enqueue one fan-out message that a worker expands into
   * deliveries (`"force"`), one delivery message per inbox (`"skip"`), or
   * the former only above {@link FANOUT_THRESHOLD} inboxes (`"auto"`, the
   * default).  Fan-out needs a fanout queue; without one it is skipped.
   */
  readonly fanout?: "auto" | "skip" | "force";

  /**
   * Deliveries sharing an ordering key are delivered one at a time, in
   * order (e.g. the activity's object ID, so a `Delete` never overtakes its
   * `Create`).
   */
  readonly orderingKey?: string;
}

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
  const inboxes: Record<string, { actorIds: string[]; sharedInbox: boolean }> = {};
  for (const recipient of recipients) {
    const shared = preferSharedInbox ? recipient.endpoints?.sharedInbox ?? null : null;
    const inbox = shared ?? recipient.inboxId;
    if (inbox == null) continue;
    const entry = inboxes[inbox.href] ??= { actorIds: [], sharedInbox: shared != null };
    if (recipient.id != null && !entry.actorIds.includes(recipient.id.href)) {
      entry.actorIds.push(recipient.id.href);
    }
  }
  return inboxes;
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
  for (const [index, recipient] of list.entries()) {
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
    actorIds: [...actorIds],
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
