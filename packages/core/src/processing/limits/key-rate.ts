// Start times per key on the key–value store's cas(): the entry of a key
// holds the last start time handed out, and each reservation takes the next
// one, `period / limit` later (or now, when that is past).  Callers wait for
// their time instead of asking again, so excess work waits in the order it
// reserved, and nobody polls.
import type { KvKey, KvStore } from "../../kv/kv-store.ts";

/** How many times one reservation re-reads a key other writers changed. */
const MAX_CAS_ROUNDS = 64;

/**
 * Thrown by {@link KeyRate.reserve} when other writers kept changing the
 * key's entry for every one of its rounds, so no start time was reserved.
 * @since 0.4.0
 */
export class KeyRateContendedError extends Error {
  /** The key. */
  readonly key: string;
  /**
   * @param key The key.
   */
  constructor(key: string) {
    super(`Could not reserve a start time under ${JSON.stringify(key)}: the store is too busy.`);
    this.name = "KeyRateContendedError";
    this.key = key;
  }
}

/**
 * A reserved start time, from {@link KeyRate.reserve}.
 * @since 0.4.0
 */
export interface KeyRateReservation {
  /** How long until the reserved start, in milliseconds; 0 means now. */
  readonly waitMs: number;
  /** The reserved start, in epoch milliseconds. */
  readonly startAt: number;
}

/**
 * At most `limit` starts per `periodMs` per key, across every process
 * sharing the store.  Starts are spread evenly, one every
 * `periodMs / limit`, so that no window of `periodMs` holds more than
 * `limit` of them; reservations are ordered (first to reserve, first to
 * start).
 * @since 0.4.0
 */
export interface KeyRate {
  /**
   * Reserves the key's next start time.  The caller must start at that time
   * (after waiting `waitMs`), and not ask again: the time is its own.
   * @param key The key (scoped by the store prefix the rate was made with).
   * @param limit How many starts per period; a positive integer.
   * @param periodMs The period in milliseconds; positive.
   * @returns How long to wait.
   * @throws {KeyRateContendedError} When the store was too busy to swap.
   */
  reserve(key: string, limit: number, periodMs: number): Promise<KeyRateReservation>;
}

/** What the store holds under a key: the last start handed out. */
interface RateEntry {
  readonly last: number;
}

function lastStart(value: unknown): number | undefined {
  if (typeof value !== "object" || value == null) return undefined;
  const last = (value as Partial<RateEntry>).last;
  return typeof last === "number" && Number.isFinite(last) ? last : undefined;
}

/**
 * Makes a {@link KeyRate} on a key–value store's `cas()`: each key is one
 * entry under `prefix` holding its last reserved start; the entry expires
 * once that start is an interval in the past.  The rate holds across every
 * process sharing the store, on every store whose `cas()` is atomic; start
 * times are wall-clock times, so the processes' clocks must agree.
 * @param kv The store; it must have `cas()`.
 * @param prefix The store prefix of the entries, such as
 *               `["fedwork", "task-rate", taskName]`.
 * @param now The clock starts are counted on, in epoch milliseconds;
 *            `Date.now` unless a test drives time by hand.
 * @returns The rate.
 * @throws {TypeError} When the store has no `cas()`.
 * @since 0.4.0
 * @example
 * ```ts
 * import { MemoryKvStore } from "@fedwork/core";
 * import { createKeyRate } from "./key-rate.ts";
 *
 * const rate = createKeyRate(new MemoryKvStore(), ["app", "emails"]);
 * const { waitMs } = await rate.reserve("all", 20, 1000); // 20 a second
 * await new Promise((resolve) => setTimeout(resolve, waitMs));
 * // … start …
 * ```
 */
export function createKeyRate(
  kv: KvStore,
  prefix: KvKey,
  now: () => number = Date.now,
): KeyRate {
  if (typeof kv.cas !== "function") {
    throw new TypeError("Key rates need a KvStore with cas(); this store has none.");
  }
  return {
    async reserve(key, limit, periodMs) {
      const kvKey: KvKey = [...prefix, key];
      const interval = periodMs / limit;
      for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
        const current = await kv.get(kvKey);
        const at = now();
        const last = lastStart(current);
        const startAt = last == null ? at : Math.max(at, last + interval);
        const entry: RateEntry = { last: startAt };
        const ttl = { milliseconds: Math.max(1, Math.ceil(startAt - at + interval)) };
        if (await kv.cas!(kvKey, current, entry, { ttl })) {
          return { waitMs: Math.max(0, Math.ceil(startAt - at)), startAt };
        }
      }
      throw new KeyRateContendedError(key);
    },
  };
}
