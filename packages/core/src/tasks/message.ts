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
}
