import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../kv/kv-store.ts";
import { unrefTimer } from "../time/timer-ref.ts";
import type { ObservedAttempt } from "./observed-attempt.ts";
import { assertKnownOptions } from "../options/known-options.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * How many messages finished each way during one minute, summed over every
 * worker process that shares the federation's key–value store.
 * @since 0.2.0
 */
export interface ThroughputBucket {
  /** The start of the minute (UTC, seconds and milliseconds zero). */
  readonly minute: Date;
  /** Attempts whose handler returned. */
  readonly completed: number;
  /** Messages that failed for good (permanent, exhausted or timed out). */
  readonly failed: number;
  /** Attempts that failed and were scheduled again. */
  readonly retried: number;
  /** Messages discarded because they could not be processed. */
  readonly dropped: number;
  /**
   * Messages nothing was registered to handle (an activity no inbox
   * listener handles).
   * @since 0.3.0
   */
  readonly unhandled: number;
}

/**
 * Options for `Federation.getThroughput()`.
 * @since 0.2.0
 */
export interface GetThroughputOptions {
  /**
   * How many minutes back, the current one included: an integer from 1 to
   * {@link THROUGHPUT_MAX_MINUTES}; 60 by default.
   */
  readonly minutes?: number;
}

/**
 * The longest window `getThroughput()` answers for, in minutes: the
 * counters' time to live in the key–value store.
 * @since 0.2.0
 */
export const THROUGHPUT_MAX_MINUTES = 120;

type Counts = {
  completed: number;
  failed: number;
  retried: number;
  dropped: number;
  unhandled: number;
};
const COUNTED = ["completed", "failed", "retried", "dropped", "unhandled"] as const;
const zeros = (): Counts => ({ completed: 0, failed: 0, retried: 0, dropped: 0, unhandled: 0 });

const MINUTE_MS = 60_000;
const PREFIX: KvKey = ["fedwork", "throughput"];

/**
 * Per-minute counts of finished messages, kept in the key–value store so
 * that any process can read them for every worker.  Each recorder counts
 * the events of its own process in memory (a `MessageObserver`) and writes
 * its totals every few seconds to one key per worker and minute
 * (`["fedwork", "throughput", <minute>, <worker id>]`) with a time to live
 * of two hours: only one writer per key, so no contention and no
 * compare-and-swap; readers list the prefix and sum.
 * @since 0.2.0
 */
export class ThroughputRecorder {
  readonly #kv: KvStore;
  readonly #workerId: string;
  readonly #flushIntervalMs: number;
  /** This process's counts by minute (epoch minute number), the last two hours. */
  readonly #counts = new Map<number, Counts>();
  readonly #dirty = new Set<number>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();

  /**
   * @param kv The key–value store the counts go to.
   * @param options How often to write them, in milliseconds (5 seconds by
   *                default), and this process's id (random by default).
   */
  constructor(
    kv: KvStore,
    options: { readonly flushIntervalMs?: number; readonly workerId?: string } = {},
  ) {
    this.#kv = kv;
    this.#workerId = options.workerId ?? crypto.randomUUID();
    this.#flushIntervalMs = options.flushIntervalMs ?? 5_000;
  }

  /**
   * Counts one attempt: a `MessageObserver`.
   * @param attempt The attempt; only its outcome's type is read.
   */
  readonly observe = (attempt: Pick<ObservedAttempt, "outcome">): void => {
    const type = attempt.outcome.type;
    // A cancellation is neither work done nor a failure.
    if (type === "cancelled") return;
    const minute = Math.floor(Date.now() / MINUTE_MS);
    let counts = this.#counts.get(minute);
    if (counts == null) {
      counts = zeros();
      this.#counts.set(minute, counts);
      this.#prune(minute);
    }
    if (type === "retrying") counts.retried++;
    else counts[type]++;
    this.#dirty.add(minute);
    if (this.#timer == null) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush().catch(() => {});
      }, this.#flushIntervalMs);
      unrefTimer(this.#timer);
    }
  };

  #prune(now: number): void {
    for (const minute of this.#counts.keys()) {
      if (minute <= now - THROUGHPUT_MAX_MINUTES) this.#counts.delete(minute);
    }
  }

  /**
   * Writes the counts that changed since the last write.  A failed write
   * is logged and retried at the next flush.
   * @returns Resolves once written.
   */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing = this.#flushing.then(async () => {
      const minutes = [...this.#dirty];
      this.#dirty.clear();
      for (const minute of minutes) {
        const counts = this.#counts.get(minute);
        if (counts == null) continue;
        try {
          await this.#kv.set([...PREFIX, String(minute), this.#workerId], { ...counts }, {
            ttl: { minutes: THROUGHPUT_MAX_MINUTES },
          });
        } catch (error) {
          this.#dirty.add(minute);
          logger.warn("Could not store the throughput counters: {error}", { error });
        }
      }
    });
    return this.#flushing;
  }

  /**
   * Reads the counts of every worker for the last minutes, oldest first,
   * one bucket per minute (zeros included).  This process's own counts are
   * taken from memory, so they are current even before they are written.
   * @param options The window.
   * @returns The buckets.
   * @throws {RangeError} When `minutes` is not an integer from 1 to
   *         {@link THROUGHPUT_MAX_MINUTES}.
   */
  async read(options: GetThroughputOptions = {}): Promise<ThroughputBucket[]> {
    assertKnownOptions(options, ["minutes"], { where: "getThroughput()" });
    const minutes = options.minutes ?? 60;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > THROUGHPUT_MAX_MINUTES) {
      throw new RangeError(
        `The minutes option of getThroughput() must be an integer from 1 to ` +
          `${THROUGHPUT_MAX_MINUTES}; got ${String(minutes)}.`,
      );
    }
    const last = Math.floor(Date.now() / MINUTE_MS);
    const first = last - minutes + 1;
    const sums = new Map<number, Counts>();
    for (let minute = first; minute <= last; minute++) {
      sums.set(minute, zeros());
    }
    const add = (minute: number, counts: Partial<Counts>) => {
      const sum = sums.get(minute);
      if (sum == null) return;
      for (const field of COUNTED) {
        const value = counts[field];
        if (typeof value === "number" && Number.isFinite(value)) sum[field] += value;
      }
    };
    for await (const entry of this.#kv.list(PREFIX)) {
      const [minuteKey, workerId] = entry.key.slice(PREFIX.length);
      if (workerId === this.#workerId || typeof entry.value !== "object") continue;
      add(Number(minuteKey), (entry.value ?? {}) as Partial<Counts>);
    }
    for (const [minute, counts] of this.#counts) add(minute, counts);
    return [...sums].map(([minute, counts]) => ({
      minute: new Date(minute * MINUTE_MS),
      ...counts,
    }));
  }
}
