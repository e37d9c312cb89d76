// Whether any cancellation was ever requested in the federation: one entry
// in the key–value store, written by every cancellation before its marker
// and kept longer than any marker.  While it is absent there is no marker
// to read, so a worker reads none; it reads the flag instead, at most once
// per `maxAgeMs` per process, not once per run.
//
// Why a cached "absent" cannot let a queued task that was cancelled run:
// a worker's cached answer is used for `maxAgeMs` after its read was SENT,
// and a process that writes the flag for the first time waits `maxAgeMs`
// after the write before it writes the marker and publishes the request.
// A read sent before the write was cached until before the wait ended; a
// read sent after it finds the flag.  So once the marker exists, no worker
// anywhere still trusts an "absent" read from before the flag existed, and
// every run that starts from then on reads the marker, as before.  A run
// that starts during the wait has been registered before the request is
// published, and the request reaches it.  Only the clock of each process is
// used (intervals, not timestamps): clocks need not agree.
import { getLogger } from "@logtape/logtape";
import type { Temporal } from "@js-temporal/polyfill";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import {
  isInMemoryKvStore,
  type MemoryKvStore,
  readInMemoryNow,
} from "../../kv/memory-kv-store.ts";
import { CachedKvRead } from "../../kv/cached-read.ts";
import { toTemporalDuration } from "../../time/duration.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * How long a worker trusts its read of the cancellation flag, in
 * milliseconds: the first cancellation a process requests waits this long.
 * @since 0.4.0
 */
export const CANCELLATION_FLAG_MAX_AGE_MS = 1000;

/** How much longer than the markers written with it the flag is kept. */
const FLAG_MARGIN_MS = 24 * 60 * 60 * 1000;

/**
 * The clock and bound of a {@link CancellationFlag}; tests pass their own.
 * Internal.
 * @since 0.4.0
 */
export interface CancellationFlagOptions {
  /** Monotonic milliseconds; `performance.now()` by default. */
  readonly now?: () => number;
  /** Waits this many milliseconds; a timer by default. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** {@link CANCELLATION_FLAG_MAX_AGE_MS} by default. */
  readonly maxAgeMs?: number;
}

/**
 * The federation-wide "some cancellation was requested" flag, as one
 * process sees it.  Internal.
 * @since 0.4.0
 */
export class CancellationFlag {
  readonly #kv: KvStore;
  /** The store when it is a `MemoryKvStore`: read at once, never cached. */
  readonly #memory: MemoryKvStore | undefined;
  /** Whether the flag is stored, as last read; a reading that found it wins a tie. */
  readonly #read: CachedKvRead<boolean>;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #maxAgeMs: number;
  /** Since when this process knows the flag is stored, and until when. */
  #writtenSince: number | undefined;
  #writtenUntil = Number.NEGATIVE_INFINITY;

  /**
   * @param kv Where the flag is kept.
   * @param options The clock and bound.
   */
  constructor(kv: KvStore, options: CancellationFlagOptions = {}) {
    this.#kv = kv;
    this.#memory = isInMemoryKvStore(kv) ? kv : undefined;
    this.#maxAgeMs = options.maxAgeMs ?? CANCELLATION_FLAG_MAX_AGE_MS;
    this.#read = new CachedKvRead(kv, FLAG_KEY, (value) => value != null, {
      maxAgeMs: this.#maxAgeMs,
      ...(options.now == null ? {} : { now: options.now }),
      replacesOnTie: (kept, incoming) => incoming || !kept,
      onError: (error) =>
        logger.warn("Could not read whether any task was cancelled; reading markers: {error}", {
          error,
        }),
    });
    this.#sleep = options.sleep ??
      ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /**
   * Whether some cancellation was requested, so that runs must read their
   * markers: at once when a read of the flag is recent enough (or the store
   * is a `MemoryKvStore`), else a promise of it.  A failed read says `true`
   * (the markers are read, as if the flag were there).
   * @returns Whether the flag is raised, or a promise of it; never rejects.
   */
  raised(): boolean | Promise<boolean> {
    if (this.#memory != null) {
      try {
        return readInMemoryNow(this.#memory, FLAG_KEY) != null;
      } catch {
        return true;
      }
    }
    const raised = this.#read.get();
    return typeof raised === "boolean" ? raised : raised.catch(() => true);
  }

  /** Another process requested a cancellation (its request reached this one). */
  heard(): void {
    this.#read.note(true);
  }

  /**
   * Writes the flag, kept past markers written now with `ttl`, and, the
   * first time this process writes it, waits until no worker can still
   * trust a read that did not find it (see the top of this file).
   * @param ttl The markers' TTL.
   * @returns Settles once markers may be written.
   * @throws When the store fails.
   */
  async raise(ttl: Temporal.Duration): Promise<void> {
    const ttlMs = ttl.total({ unit: "milliseconds" }) + FLAG_MARGIN_MS;
    await this.#kv.set(FLAG_KEY, { at: new Date().toISOString() }, {
      ttl: toTemporalDuration({ milliseconds: ttlMs }, "ttl"),
    });
    const now = this.#read.now();
    this.#read.note(true, now);
    // A MemoryKvStore is read at every run, never cached.
    if (this.#memory != null) return;
    if (this.#writtenSince == null || now > this.#writtenUntil) this.#writtenSince = now;
    this.#writtenUntil = now + ttlMs - FLAG_MARGIN_MS;
    const wait = this.#writtenSince + this.#maxAgeMs - now;
    if (wait > 0) {
      await this.#sleep(wait);
      // Written by this process: still there.
      this.#read.note(true);
    }
  }
}

const FLAG_KEY: KvKey = ["fedwork", "task-cancel-requested"];
