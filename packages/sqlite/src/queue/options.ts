import { type DurationInput, durationToMilliseconds } from "@fedwork/core";
import { quoteIdentifier } from "../database/identifier.ts";

/**
 * Options for {@link SqliteMessageQueue}.
 * @since 0.1.0
 */
export interface SqliteMessageQueueOptions {
  /**
   * The SQLite database file; created when it does not exist.  Every
   * process that shares the queue opens the same file.  Required.
   */
  readonly path: string;

  /**
   * The table holding the messages; created on first use.  Letters, digits
   * and underscores only.  `"fedwork_messages"` by default.
   */
  readonly tableName?: string;

  /**
   * How long a claimed message stays invisible to other workers.  A live
   * listener extends the lease of every running handler every third of
   * this time; when a worker dies, its messages are handed out again once
   * the lease runs out.  30 seconds by default.
   */
  readonly leaseTime?: DurationInput;

  /**
   * How often an idle listener looks for messages enqueued by *other
   * processes* (SQLite cannot notify across processes).  Enqueues made in
   * the same process, delays running out and expired leases wake the
   * listener without waiting for this.  One second by default.
   */
  readonly pollInterval?: DurationInput;

  /**
   * How many handlers one {@link SqliteMessageQueue.listen} call runs at
   * once.  Messages that share an ordering key still never run at the same
   * time.  1 by default.
   */
  readonly concurrency?: number;

  /**
   * How long a statement waits for another connection's write lock before
   * failing with `SQLITE_BUSY` (SQLite's `busy_timeout`).  The wait blocks
   * the event loop, since the runtimes' SQLite modules are synchronous.
   * Five seconds by default.
   */
  readonly busyTimeout?: DurationInput;
}

/** The options after validation, in milliseconds. */
export interface ResolvedQueueOptions {
  readonly path: string;
  readonly table: string;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly concurrency: number;
  readonly busyTimeoutMs: number;
}

// setTimeout() takes a signed 32-bit delay.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Validates {@link SqliteMessageQueueOptions} and fills in the defaults.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveQueueOptions(options: SqliteMessageQueueOptions): ResolvedQueueOptions {
  if (options == null || typeof options !== "object") {
    throw new TypeError("SqliteMessageQueue needs an options object with a path.");
  }
  if (typeof options.path !== "string" || options.path === "" || options.path === ":memory:") {
    throw new TypeError(
      "The path option must be the path of a SQLite database file (not empty and not " +
        `":memory:", which could not be shared between connections); got ${
          JSON.stringify(options.path)
        }.`,
    );
  }
  const table = options.tableName ?? "fedwork_messages";
  quoteIdentifier(table, "tableName");
  const concurrency = options.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`The concurrency option must be a positive integer; got ${concurrency}.`);
  }
  return {
    path: options.path,
    table,
    leaseMs: positiveDuration(options.leaseTime, 30_000, "leaseTime"),
    pollMs: positiveDuration(options.pollInterval, 1_000, "pollInterval"),
    concurrency,
    busyTimeoutMs: positiveDuration(options.busyTimeout, 5_000, "busyTimeout"),
  };
}

function positiveDuration(
  value: DurationInput | undefined,
  fallback: number,
  optionName: string,
): number {
  if (value === undefined) return fallback;
  const ms = durationToMilliseconds(value, optionName);
  if (ms <= 0 || ms > MAX_TIMER_MS) {
    throw new RangeError(
      `${optionName} must be a positive duration of at most about 24 days; got ${ms} ms.`,
    );
  }
  return ms;
}
