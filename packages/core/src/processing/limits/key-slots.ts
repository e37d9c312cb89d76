// Counted slots per key on the key–value store's cas(): the entry of a key
// lists its holders with the time each one's lease runs out, so a holder
// that crashed stops counting once its lease has passed, without anyone
// having to notice the crash.
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * How many times one call re-reads a key whose entry another process
 * changed between its read and its swap, before it gives up for this turn.
 */
const MAX_CAS_ROUNDS = 32;

/** How long an entry without holders stays, in milliseconds. */
const EMPTY_ENTRY_TTL_MS = 1000;

/** How long a caller waits after losing every round to other writers. */
const CONTENDED_RETRY_MS = 50;

/**
 * A slot held under a key, from {@link KeySlots.acquire}.
 * @since 0.4.0
 */
export interface HeldKeySlot {
  readonly acquired: true;
  /**
   * Extends the lease by the `leaseMs` it was acquired with, counted from
   * now.  Call it well before the lease runs out (every third of it, say).
   * @returns `true` while the slot is held; `false` when the lease had run
   *          out and the key's slots were all taken meanwhile (the slot is
   *          lost: the holder now runs over the limit).
   */
  renew(): Promise<boolean>;
  /**
   * Gives the slot back, so that another holder can take it at once.
   * Releasing twice does nothing.
   */
  release(): Promise<void>;
}

/**
 * A refused {@link KeySlots.acquire}: every slot of the key is held.
 * @since 0.4.0
 */
export interface RefusedKeySlot {
  readonly acquired: false;
  /**
   * How long until the earliest lease of the key runs out, in
   * milliseconds, at least 1: no slot can be free later than that unless
   * its holder renews.  A slot released earlier is free at once.
   */
  readonly retryAfterMs: number;
}

/**
 * At most `limit` holders per key at once, across every process sharing
 * the store; a holder's slot runs out after `leaseMs` unless renewed.
 * @since 0.4.0
 */
export interface KeySlots {
  /**
   * Takes one of the key's slots for `holderId`, if one is free.  A holder
   * that already holds a slot of the key gets it back, renewed.
   * @param key The key (scoped by the store prefix the slots were made with).
   * @param holderId Who holds it: unique per run (a message id).
   * @param limit How many holders the key may have at once; a positive
   *              integer.  Callers should use one limit per key.
   * @param leaseMs How long the slot is held unless renewed; positive.
   * @returns The held slot, or how long until one may be free.
   */
  acquire(
    key: string,
    holderId: string,
    limit: number,
    leaseMs: number,
  ): Promise<HeldKeySlot | RefusedKeySlot>;
}

/** One holder: its id and when its lease runs out (epoch milliseconds). */
type Holder = readonly [holderId: string, expiresAt: number];

/** What the store holds under a key: the live holders, oldest first. */
interface SlotsEntry {
  readonly holders: readonly Holder[];
}

function liveHolders(value: unknown, now: number): Holder[] {
  if (typeof value !== "object" || value == null) return [];
  const holders = (value as Partial<SlotsEntry>).holders;
  if (!Array.isArray(holders)) return [];
  return holders.filter((holder): holder is Holder =>
    Array.isArray(holder) && typeof holder[0] === "string" && typeof holder[1] === "number" &&
    holder[1] > now
  );
}

/**
 * Writes the holders of a key, the entry expiring with its last lease.
 * @returns Whether the swap won.
 */
async function swapHolders(
  kv: KvStore,
  kvKey: KvKey,
  current: unknown,
  holders: readonly Holder[],
  now: number,
): Promise<boolean> {
  // An empty entry rather than none: not every store's cas() can delete.
  const last = holders.length === 0
    ? now + EMPTY_ENTRY_TTL_MS
    : Math.max(...holders.map(([, expiresAt]) => expiresAt));
  const entry: SlotsEntry = { holders };
  return await kv.cas!(kvKey, current, entry, {
    ttl: { milliseconds: Math.max(1, Math.ceil(last - now)) },
  });
}

/**
 * Makes {@link KeySlots} on a key–value store's `cas()`: each key is one
 * entry under `prefix` listing its holders and their leases.  The limit
 * holds across every process sharing the store, on every store whose
 * `cas()` is atomic; the leases are wall-clock times, so the processes'
 * clocks must agree to well within a lease.
 * @param kv The store; it must have `cas()`.
 * @param prefix The store prefix of the entries, such as
 *               `["fedwork", "task-concurrency", taskName]`.
 * @param now The clock leases are counted on, in epoch milliseconds;
 *            `Date.now` unless a test drives time by hand.
 * @returns The slots.
 * @throws {TypeError} When the store has no `cas()`.
 * @since 0.4.0
 * @example
 * ```ts
 * import { MemoryKvStore } from "@fedwork/core";
 * import { createKeySlots } from "./key-slots.ts";
 *
 * const slots = createKeySlots(new MemoryKvStore(), ["app", "imports"]);
 * const slot = await slots.acquire("account:1", "run-1", 2, 30_000);
 * if (slot.acquired) {
 *   try {
 *     // … at most two of these per account at once …
 *   } finally {
 *     await slot.release();
 *   }
 * }
 * ```
 */
export function createKeySlots(
  kv: KvStore,
  prefix: KvKey,
  now: () => number = Date.now,
): KeySlots {
  if (typeof kv.cas !== "function") {
    throw new TypeError("Key slots need a KvStore with cas(); this store has none.");
  }
  const kvKeyOf = (key: string): KvKey => [...prefix, key];

  async function update(
    kvKey: KvKey,
    change: (holders: Holder[], now: number) => Holder[] | undefined,
  ): Promise<"swapped" | "unchanged" | "contended"> {
    for (let round = 0; round < MAX_CAS_ROUNDS; round++) {
      const current = await kv.get(kvKey);
      const at = now();
      const next = change(liveHolders(current, at), at);
      if (next == null) return "unchanged";
      if (await swapHolders(kv, kvKey, current, next, at)) return "swapped";
    }
    return "contended";
  }

  function held(key: string, holderId: string, limit: number, leaseMs: number): HeldKeySlot {
    const kvKey = kvKeyOf(key);
    let released = false;
    return {
      acquired: true,
      async renew() {
        if (released) return false;
        let kept = true;
        const result = await update(kvKey, (holders, at) => {
          // Released while this renewal went on: it must not come back.
          if (released) return undefined;
          const others = holders.filter(([id]) => id !== holderId);
          kept = others.length < holders.length || others.length < limit;
          return kept ? [...others, [holderId, at + leaseMs]] : undefined;
        });
        if (result === "contended") {
          logger.warn("Could not renew the slot of {holderId} under {key}: the store is busy.", {
            key,
            holderId,
          });
        }
        return kept;
      },
      async release() {
        if (released) return;
        released = true;
        const result = await update(kvKey, (holders) => {
          const others = holders.filter(([id]) => id !== holderId);
          return others.length < holders.length ? others : undefined;
        });
        if (result === "contended") {
          // Not lost: the lease runs out on its own.
          logger.warn(
            "Could not release the slot of {holderId} under {key}: the store is busy; it frees " +
              "itself when its lease runs out.",
            { key, holderId },
          );
        }
      },
    };
  }

  return {
    async acquire(key, holderId, limit, leaseMs) {
      let retryAfterMs = CONTENDED_RETRY_MS;
      const result = await update(kvKeyOf(key), (holders, at) => {
        const others = holders.filter(([id]) => id !== holderId);
        if (others.length >= limit) {
          const earliest = Math.min(...others.map(([, expiresAt]) => expiresAt));
          retryAfterMs = Math.max(1, Math.ceil(earliest - at));
          return undefined;
        }
        return [...others, [holderId, at + leaseMs]];
      });
      if (result === "swapped") return held(key, holderId, limit, leaseMs);
      // "contended": others keep changing the key, so it is busy; try later.
      return { acquired: false, retryAfterMs };
    },
  };
}
