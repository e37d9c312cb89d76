import type { BaseMessage } from "../processing/envelope.ts";
import type { TaskMessage } from "../tasks/message.ts";

export type { BaseMessage };

/**
 * A queued delivery of one activity to one inbox.  Opaque.
 * @since 0.1.0
 */
export interface OutboxMessage extends BaseMessage {
  /** Always `"outbox"`. */
  readonly type: "outbox";
  /** The inbox URL to POST the activity to. */
  readonly inbox: string;
  /** Whether {@link OutboxMessage.inbox} is a shared inbox. */
  readonly sharedInbox: boolean;
  /** The IDs of the recipients reached through this inbox. */
  readonly actorIds: readonly string[];
  /** The activity as compact JSON-LD. */
  readonly activity: unknown;
  /** The activity's ID, if it has one. */
  readonly activityId?: string;
  /** The activity's type name, e.g. `"Create"`. */
  readonly activityType: string;
  /** The identifier of the sending actor, when sent on behalf of one. */
  readonly senderIdentifier?: string;
}

/**
 * One inbox of a {@link FanoutMessage}.
 * @since 0.1.0
 */
export interface FanoutInbox {
  /** The IDs of the recipients reached through this inbox. */
  readonly actorIds: readonly string[];
  /** Whether the inbox is a shared inbox. */
  readonly sharedInbox: boolean;
}

/**
 * A queued activity to be expanded into one {@link OutboxMessage} per
 * inbox by the fan-out worker, so that `sendActivity()` to many recipients
 * returns after a single enqueue.  Opaque.
 * @since 0.1.0
 */
export interface FanoutMessage extends BaseMessage {
  /** Always `"fanout"`. */
  readonly type: "fanout";
  /** The inboxes to deliver to, keyed by inbox URL. */
  readonly inboxes: Readonly<Record<string, FanoutInbox>>;
  /** The activity as compact JSON-LD. */
  readonly activity: unknown;
  /** The activity's ID, if it has one. */
  readonly activityId?: string;
  /** The activity's type name, e.g. `"Create"`. */
  readonly activityType: string;
  /** The identifier of the sending actor, when sent on behalf of one. */
  readonly senderIdentifier?: string;
}

/**
 * A received activity waiting for the inbox listeners.  Opaque.
 * @since 0.1.0
 */
export interface InboxMessage extends BaseMessage {
  /** Always `"inbox"`. */
  readonly type: "inbox";
  /** The received activity as JSON-LD. */
  readonly activity: unknown;
  /**
   * The identifier of the actor whose inbox received the activity, or
   * `null` for the shared inbox.
   */
  readonly identifier: string | null;
  /**
   * The actor whose signature the inbox verified (its HTTP signature, or
   * an object proof or LD signature of a forwarded activity); absent when
   * signatures were not verified.  The worker checks that the activity,
   * read as JSON-LD, has this actor.
   * @since 0.3.0
   */
  readonly signer?: string;
}

/**
 * Any message Fedwork puts on a queue.  Documented as opaque: the set of
 * variants may grow without a breaking change.
 * @since 0.1.0
 */
export type Message = FanoutMessage | OutboxMessage | InboxMessage | TaskMessage;

/**
 * The `type` discriminator of {@link Message}.
 * @since 0.1.0
 */
export type MessageType = Message["type"];
