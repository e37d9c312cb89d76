// The messages that carry outgoing activities through the outbox and
// fanout queues: interfaces only.
import type { BaseMessage } from "../../processing/envelope.ts";

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
  /**
   * The sender's followers collection, when the delivery carries a
   * `Collection-Synchronization` header (FEP-8fcf).
   * @since 0.4.0
   */
  readonly collectionSync?: string;
  /**
   * What a delivery waiting for its host's limits carries to its next run;
   * absent from the others.
   * @since 0.4.0
   */
  readonly hostLimits?: HostLimitState;
}

/**
 * What a delivery waiting for its host's limits (`hostPolicy.concurrency`
 * and `hostPolicy.rate`) carries to its next run.  Opaque.
 * @since 0.4.0
 */
export interface HostLimitState {
  /** The attempt it waits for: a retry starts afresh. */
  readonly attempt: number;
  /** How many times it found its host's slots all taken. */
  readonly slotWaits: number;
  /** The start time its host's rate gave it, in epoch milliseconds. */
  readonly startAt?: number;
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
  /**
   * The sender's followers collection, for the deliveries'
   * `Collection-Synchronization` headers (FEP-8fcf).
   * @since 0.4.0
   */
  readonly collectionSync?: string;
}
