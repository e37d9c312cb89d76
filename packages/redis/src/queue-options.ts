import { type DurationInput, durationToMilliseconds } from "@fedwork/core";
import type { RedisConnectionOptions } from "./connection.ts";

/**
 * Options for {@link RedisMessageQueue}.  Besides these, exactly one way to
 * connect is required (see {@link RedisConnectionOptions}).
 * @since 0.1.0
 */
export interface RedisMessageQueueOptions extends RedisConnectionOptions {
  /**
   * The queue's name.  Instances with the same `prefix` and `queue` share
   * one queue and compete for its messages.  `"default"` by default.
   */
  readonly queue?: string;
  /**
   * The first part of every key of the queue; keys look like
   * `{<prefix>:<queue>}:ready`.  The braces are a Redis Cluster hash tag,
   * so all keys of a queue live in one slot.  `"fedwork"` by default.
   */
  readonly prefix?: string;
  /**
   * How long a message handed to a worker stays invisible to the others.
   * A live worker extends the lease of every running handler (see
   * `heartbeatInterval`); when a worker dies, its messages are handed out
   * again after at most this long.  30 seconds by default.
   */
  readonly leaseTime?: DurationInput;
  /**
   * How long a message whose handler threw waits before it is handed out
   * again.  It is not acknowledged meanwhile, and a keyed message keeps its
   * ordering key held.  Defaults to `leaseTime`, the same wait as for a
   * message whose worker died.
   * @since 0.2.0
   */
  readonly redeliveryDelay?: DurationInput;
  /**
   * How often a listener extends the leases of its running handlers.  Must
   * be shorter than `leaseTime`.  A third of `leaseTime` by default.
   */
  readonly heartbeatInterval?: DurationInput;
  /**
   * How many handlers one `listen()` call runs at once.  Messages sharing
   * an ordering key still run one at a time.  1 by default.
   */
  readonly concurrency?: number;
  /**
   * The longest a listener waits without a wake-up before it checks the
   * queue anyway.  Listeners are woken through Redis pub/sub on enqueue and
   * by timers for delayed messages and leases; this only bounds how long a
   * wake-up lost with a dropped connection can delay pickup.  5 seconds by
   * default.
   */
  readonly pollInterval?: DurationInput;
}

/** The validated, normalised options of a queue. */
export interface ResolvedQueueOptions {
  readonly queue: string;
  readonly prefix: string;
  readonly leaseMs: number;
  readonly redeliveryDelayMs: number;
  readonly heartbeatMs: number;
  readonly concurrency: number;
  readonly pollMs: number;
}

/**
 * Validates the queue options, naming the offending option in errors.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveQueueOptions(options: RedisMessageQueueOptions): ResolvedQueueOptions {
  const queue = checkName(options.queue ?? "default", "queue");
  const prefix = checkName(options.prefix ?? "fedwork", "prefix");
  const leaseMs = positiveDuration(options.leaseTime ?? { seconds: 30 }, "leaseTime");
  // Zero would hand a failing message straight back out: a hot loop.
  const redeliveryDelayMs = options.redeliveryDelay == null
    ? leaseMs
    : positiveDuration(options.redeliveryDelay, "redeliveryDelay");
  const heartbeatMs = options.heartbeatInterval == null
    ? Math.max(1, Math.floor(leaseMs / 3))
    : positiveDuration(options.heartbeatInterval, "heartbeatInterval");
  if (heartbeatMs >= leaseMs) {
    throw new RangeError(
      `The heartbeatInterval option (${heartbeatMs} ms) must be shorter than the leaseTime ` +
        `option (${leaseMs} ms), or leases would run out between heartbeats.`,
    );
  }
  const concurrency = options.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`The concurrency option must be a positive integer; got ${concurrency}.`);
  }
  const pollMs = positiveDuration(options.pollInterval ?? { seconds: 5 }, "pollInterval");
  return { queue, prefix, leaseMs, redeliveryDelayMs, heartbeatMs, concurrency, pollMs };
}

function checkName(value: unknown, optionName: string): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`The ${optionName} option must be a non-empty string.`);
  }
  // A brace would end or nest the hash tag and scatter the keys over slots.
  if (/[{}]/.test(value)) {
    throw new RangeError(
      `The ${optionName} option must not contain { or } (they delimit the Redis Cluster ` +
        `hash tag); got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

function positiveDuration(value: DurationInput, optionName: string): number {
  const ms = durationToMilliseconds(value, optionName);
  if (ms <= 0) {
    throw new RangeError(`The ${optionName} option must be a positive duration.`);
  }
  return ms;
}
