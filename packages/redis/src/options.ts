import type { DurationInput } from "@fedwork/core";
import {
  positiveDurationOption,
  type ResolvedLeaseOptions,
  resolveLeaseOptions,
} from "@fedwork/core/queue-kit";
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
   * How many messages a listener holds beyond `concurrency`: each claim
   * round trip takes up to `concurrency + prefetch` messages, the extra
   * ones wait in memory (leased, their leases renewed like those of
   * running handlers) and start as soon as a handler finishes, without a
   * round trip.  A listener that stops hands the prefetched messages back
   * to the front of the line at once.  Prefetched messages are invisible to
   * other workers meanwhile, so with slow handlers and several workers, a
   * smaller value spreads the work more evenly.  Must be a non-negative
   * integer; `0` takes only as many messages as there are free handlers.
   * 16 by default (see the manual for measurements).
   * @since 0.2.0
   */
  readonly prefetch?: number;
  /**
   * How far a listener's prefetch may grow while it drains a backlog: when
   * a handler slot runs out of work although the last claim came back
   * full, or the next claim is due less than 10 ms after a full one, the
   * listener claims twice as far ahead, up to this many beyond
   * its slots, and returns to `prefetch` at the first claim that comes
   * back short.  Slow handlers and `prefetch: 0` never make it grow.  At
   * least `prefetch`; equal to it to keep the prefetch fixed.  1,024 by
   * default (or `prefetch` if that is larger).
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;
  /**
   * The longest a listener waits without a wake-up before it checks the
   * queue anyway.  Listeners are woken through Redis pub/sub on enqueue and
   * by timers for delayed messages and leases; this only bounds how long a
   * wake-up lost with a dropped connection can delay pickup.  5 seconds by
   * default.
   */
  readonly pollInterval?: DurationInput;
}

/**
 * The `prefetch` a queue uses when the option is not given (see the manual
 * for the measurements behind it).
 */
export const DEFAULT_PREFETCH = 16;

/** How far the prefetch grows while quick handlers drain a backlog. */
const DEFAULT_MAX_PREFETCH = 1_024;

/** The validated, normalised options of a queue. */
export interface ResolvedQueueOptions extends ResolvedLeaseOptions {
  readonly queue: string;
  readonly prefix: string;
  readonly redeliveryDelayMs: number;
}

/**
 * Validates the queue options, naming the offending option in errors.  The
 * options every lease-based queue shares are checked by the queue kit.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveQueueOptions(options: RedisMessageQueueOptions): ResolvedQueueOptions {
  const queue = checkName(options.queue ?? "default", "queue");
  const prefix = checkName(checkPrefix(options.prefix, "new RedisMessageQueue()"), "prefix");
  const lease = resolveLeaseOptions(options, {
    prefetch: DEFAULT_PREFETCH,
    maxPrefetch: DEFAULT_MAX_PREFETCH,
    leaseMs: 30_000,
    pollMs: 5_000,
  });
  // Zero would hand a failing message straight back out: a hot loop.
  const redeliveryDelayMs = positiveDurationOption(
    options.redeliveryDelay,
    "redeliveryDelay",
    lease.leaseMs,
  );
  return { ...lease, queue, prefix, redeliveryDelayMs };
}

/**
 * Checks the `prefix` option of a queue, a KV store or a pub/sub transport:
 * the same rule for all three, so one value works for each.  Fedwork puts
 * the `:` between the prefix and the rest itself, so a trailing colon
 * (which would double it) is refused rather than guessed at.
 * @param value The option's value, `undefined` for the default.
 * @param where Which constructor, for the message: `"new RedisPubSub()"`.
 * @returns The prefix, `"fedwork"` by default.
 * @throws {TypeError} When it is not a non-empty string.
 * @throws {RangeError} When it ends with a colon.
 */
export function checkPrefix(value: unknown, where: string): string {
  const prefix = value ?? "fedwork";
  if (typeof prefix !== "string" || prefix === "") {
    throw new TypeError(`The prefix option of ${where} must be a non-empty string.`);
  }
  if (prefix.endsWith(":")) {
    throw new RangeError(
      `The prefix option of ${where} must not end with ":": Fedwork puts the colon between ` +
        `the prefix and the rest of each name itself (prefix "myapp" gives ` +
        `"myapp:task-updates"); got ${JSON.stringify(prefix)}.`,
    );
  }
  return prefix;
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
