import type { BaseMessage } from "../processing/envelope.ts";

/**
 * The queue message that carries one typed task to a worker.  Documented as
 * opaque: applications never build or read it themselves.
 * @since 0.1.0
 */
export interface TaskMessage extends BaseMessage {
  /** Always `"task"`. */
  readonly type: "task";
  /** A UUID identifying this message (kept across retries). */
  readonly id: ReturnType<typeof crypto.randomUUID>;
  /** The base URL of the context that enqueued the task. */
  readonly baseUrl: string;
  /** The name the task was defined with. */
  readonly taskName: string;
  /**
   * The payload encoded with devalue (vocabulary objects as JSON-LD).  A
   * string, because every queue backend serializes messages its own way and
   * a pre-encoded string survives them all unchanged.
   */
  readonly data: string;
  /** When the first attempt was enqueued, as an ISO 8601 timestamp. */
  readonly started: string;
  /** The attempt number, starting at 0. */
  readonly attempt: number;
  /** The ordering key the task was enqueued with, if any. */
  readonly orderingKey?: string;
  /** The W3C trace context of the span that enqueued the task. */
  readonly traceContext: Readonly<Record<string, string>>;
  /**
   * The deduplication key the task was enqueued with, and where it is held:
   * by the queue itself (`"queue"`) or as a reservation in the key–value
   * store (`"kv"`), which the worker releases when the task finishes.
   * @since 0.2.0
   */
  readonly deduplication?: TaskMessageDeduplication;
  /**
   * The debounce key the task was enqueued with: the worker drops the
   * message, without an attempt, when a later enqueue with the key
   * superseded it.
   * @since 0.4.0
   */
  readonly debounce?: TaskMessageDebounce;
  /**
   * The start time a task with a `rateLimit` reserved for this attempt
   * before it waited for it: the attempt runs then without reserving
   * again.
   * @since 0.4.0
   */
  readonly rateSlot?: TaskMessageRateSlot;
  /**
   * For a run of a recurring task: the schedule's id and the tick, as an
   * ISO 8601 timestamp.
   * @since 0.2.0
   */
  readonly schedule?: { readonly id: string; readonly tick: string };
  /**
   * The batch the task belongs to: as one of its members, or as the
   * completion task enqueued when every member is done.
   * @since 0.3.0
   */
  readonly batch?: { readonly id: string; readonly role: "member" | "completion" };
  /**
   * For a task that continues its durable steps after a sleep or wait: the
   * generation of its step records this message is for (an older one is
   * dropped), and the event that woke it, if one did.
   * @since 0.4.0
   */
  readonly steps?: TaskMessageSteps;
  /**
   * For a child task that `ctx.step.invoke()` enqueued: the parent's id,
   * which hears how the child ended.
   * @since 0.4.0
   */
  readonly invokedBy?: { readonly id: string };
}

/**
 * The durable-steps state a continuing {@link TaskMessage} carries.
 * @since 0.4.0
 */
export interface TaskMessageSteps {
  /** The generation of the task's step records this message is for. */
  readonly gen: number;
  /** The id of the waiting step an event woke, and the event's encoded data. */
  readonly woken?: { readonly step: string; readonly data: string };
}

/**
 * The deduplication key a {@link TaskMessage} carries.
 * @since 0.2.0
 */
export interface TaskMessageDeduplication {
  /** The caller's key. */
  readonly key: string;
  /** Who holds the key: the queue, or a key–value store reservation. */
  readonly via: "queue" | "kv";
}

/**
 * The debounce key a {@link TaskMessage} carries (the message's id is its
 * generation).
 * @since 0.4.0
 */
export interface TaskMessageDebounce {
  /** The caller's key. */
  readonly key: string;
}

/**
 * The start time a {@link TaskMessage} reserved under its task's rate limit.
 * @since 0.4.0
 */
export interface TaskMessageRateSlot {
  /** The attempt it was reserved for: a retry reserves anew. */
  readonly attempt: number;
  /** The reserved start, in epoch milliseconds. */
  readonly at: number;
}
