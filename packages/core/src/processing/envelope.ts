/**
 * The fields every Fedwork queue message carries, whatever its kind.
 * Documented as opaque: applications never build or read messages
 * themselves.
 * @since 0.1.0
 */
export interface BaseMessage {
  /** The message kind, e.g. `"task"` or `"outbox"`. */
  readonly type: string;
  /** A UUID identifying this message (kept across retries). */
  readonly id: ReturnType<typeof crypto.randomUUID>;
  /** The base URL of the context that enqueued the message. */
  readonly baseUrl: string;
  /** When the first attempt was enqueued, as an ISO 8601 timestamp. */
  readonly started: string;
  /** The attempt number, starting at 0. */
  readonly attempt: number;
  /** The ordering key the message was enqueued with, if any. */
  readonly orderingKey?: string;
  /**
   * The priority the message was enqueued with, when not 0, so that a
   * retry enqueued again keeps it.
   * @since 0.3.0
   */
  readonly priority?: number;
  /** The W3C trace context (`traceparent`, `tracestate`) of the enqueuing span. */
  readonly traceContext: Readonly<Record<string, string>>;
  /**
   * When this attempt became due (enqueued, plus its delay), as an ISO 8601
   * timestamp; what queue-wait metrics are measured from.  Absent from
   * messages enqueued by Fedwork 0.1, and (since 0.4.0) from a task's first
   * attempt enqueued without a delay, which is due at its `started`.
   * @since 0.2.0
   */
  readonly dueAt?: string;
  /**
   * How many times the message was put back to wait without an attempt
   * (a host's `Retry-After`); absent when never.
   * @since 0.4.0
   */
  readonly waits?: number;
}

/**
 * Tells whether a queue message has the fields of a {@link BaseMessage}:
 * enough for the dispatcher to find its handler, retry it and report it.
 * The handler of its kind checks the rest.
 * @param value A message as received from a queue.
 * @returns `true` when it is an object with a string `type` and `id`, a
 *          non-negative integer `attempt`, and string `baseUrl` and
 *          `started`.
 * @since 0.2.0
 */
export function isBaseMessage(value: unknown): value is BaseMessage {
  if (typeof value !== "object" || value == null) return false;
  const message = value as Record<string, unknown>;
  return typeof message.type === "string" && typeof message.id === "string" &&
    typeof message.attempt === "number" && Number.isInteger(message.attempt) &&
    message.attempt >= 0 && typeof message.baseUrl === "string" &&
    typeof message.started === "string" &&
    (message.orderingKey == null || typeof message.orderingKey === "string");
}
