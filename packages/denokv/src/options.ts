import type { DurationInput } from "@fedwork/core";
import { assertKnownOptions, resolveLeaseOptions } from "@fedwork/core/queue-kit";
import { checkKvOption, checkPrefixOption, type DenoKv } from "./deno-kv.ts";
import { withLockRetries } from "./lock-retries.ts";

/**
 * Options for {@link DenoKvMessageQueue}.
 * @since 0.3.0
 */
export interface DenoKvMessageQueueOptions {
  /**
   * An open Deno KV database, e.g. `await Deno.openKv()`.  Every process
   * that shares the queue opens the same database.  The queue never closes
   * it.  Required.
   */
  readonly kv: DenoKv;

  /**
   * The Deno KV key prefix under which the queue keeps its messages.
   * `["fedwork", "queue"]` by default.
   */
  readonly prefix?: readonly string[];

  /**
   * How long a claimed message stays invisible to other workers.  A live
   * listener extends the lease of every running handler every third of
   * this time; when a worker dies, its messages are handed out again once
   * the lease runs out.  30 seconds by default.
   */
  readonly leaseTime?: DurationInput;

  /**
   * How often an idle listener looks for messages enqueued by other
   * processes.  Enqueues made in the same process, delays running out and
   * expired leases wake the listener without waiting for this.  One second
   * by default.
   */
  readonly pollInterval?: DurationInput;

  /**
   * How many handlers one `listen()` call runs at once.  Messages that
   * share an ordering key still never run at the same time.  1 by default.
   */
  readonly concurrency?: number;

  /**
   * How many messages a listener claims beyond its free handler slots;
   * they stay leased to it and are released when it stops.  4 by default.
   */
  readonly prefetch?: number;
}

/** The options after validation, in milliseconds. */
export interface ResolvedQueueOptions {
  readonly kv: DenoKv;
  readonly prefix: readonly string[];
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly concurrency: number;
  readonly prefetch: number;
  readonly heartbeatMs: number;
}

/** The constructor, as error messages name it. */
export const WHERE = "new DenoKvMessageQueue()";

/**
 * Validates {@link DenoKvMessageQueueOptions} and fills in the defaults.
 * @throws {TypeError} When an option is unknown or has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveQueueOptions(options: DenoKvMessageQueueOptions): ResolvedQueueOptions {
  if (options == null || typeof options !== "object") {
    throw new TypeError(`${WHERE} needs an options object with a kv database.`);
  }
  assertKnownOptions(
    options,
    ["kv", "prefix", "leaseTime", "pollInterval", "concurrency", "prefetch"],
    {
      where: WHERE,
      hints: {
        orderingLockPrefix: "Fedwork's Deno KV queue keeps messages that share an ordering " +
          "key in order without a lock of its own; remove the option (the queue's keys are " +
          "under the prefix option).",
      },
    },
  );
  const lease = resolveLeaseOptions(options, { prefetch: 4, leaseMs: 30_000, pollMs: 1_000 });
  return {
    kv: withLockRetries(checkKvOption(options.kv, WHERE)),
    prefix: checkPrefixOption(options.prefix, ["fedwork", "queue"], WHERE),
    leaseMs: lease.leaseMs,
    pollMs: lease.pollMs,
    concurrency: lease.concurrency,
    prefetch: lease.prefetch,
    heartbeatMs: lease.heartbeatMs,
  };
}
