// One key of a key–value store, read by a process at most once per
// `maxAgeMs` instead of at every use: a reading is trusted for `maxAgeMs`
// from when its read was SENT (so a write that lands after the read was sent
// is seen within `maxAgeMs` of it, which is what the callers' safety
// arguments count on), the uses that come while a read is under way share it,
// and a newer reading never gives way to an older one that arrives late.
// Only the process's own interval clock is used: clocks need not agree.
import type { KvKey, KvStore } from "./kv-store.ts";

/**
 * The clock and bound of a {@link CachedKvRead}.  Internal.
 * @since 0.4.0
 */
export interface CachedKvReadOptions<T> {
  /** How long a reading is trusted, in milliseconds from when it was sent. */
  readonly maxAgeMs: number;
  /** Monotonic milliseconds; `performance.now()` by default. */
  readonly now?: () => number;
  /**
   * Whether a reading replaces a kept one sent at the same instant; by
   * default it does.
   */
  readonly replacesOnTie?: (kept: T, incoming: T) => boolean;
  /**
   * Called once for each read that fails, with its error; the uses that
   * shared the read then reject with it.
   */
  readonly onError?: (error: unknown) => void;
}

/** A reading and when its read was sent. */
interface Reading<T> {
  readonly value: T;
  readonly sentAt: number;
}

/**
 * A cached, single-flight read of one key.  Internal.
 * @typeParam T What the key's value is parsed into.
 * @since 0.4.0
 */
export class CachedKvRead<T> {
  readonly #kv: KvStore;
  readonly #key: KvKey;
  readonly #parse: (value: unknown) => T;
  readonly #maxAgeMs: number;
  readonly #replacesOnTie: ((kept: T, incoming: T) => boolean) | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;
  /** The process's interval clock, in milliseconds. */
  readonly now: () => number;
  #reading: Reading<T> | undefined;
  #pending: Promise<T> | undefined;

  /**
   * @param kv The store.
   * @param key The key read.
   * @param parse Turns what the store holds (`undefined` when absent) into
   *              a value.
   * @param options The clock and bound.
   */
  constructor(
    kv: KvStore,
    key: KvKey,
    parse: (value: unknown) => T,
    options: CachedKvReadOptions<T>,
  ) {
    this.#kv = kv;
    this.#key = key;
    this.#parse = parse;
    this.#maxAgeMs = options.maxAgeMs;
    this.#replacesOnTie = options.replacesOnTie;
    this.#onError = options.onError;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The value: at once when the kept reading is recent enough, else a
   * promise of a read shared with the other uses meanwhile.
   * @returns The value, or a promise of it that rejects when the store
   *          fails.
   */
  get(): T | Promise<T> {
    const reading = this.#reading;
    const now = this.now();
    if (reading != null && now - reading.sentAt < this.#maxAgeMs) return reading.value;
    return this.#pending ??= this.#read(now);
  }

  #read(sentAt: number): Promise<T> {
    let read: Promise<unknown>;
    try {
      read = this.#kv.get(this.#key);
    } catch (error) {
      read = Promise.reject(error);
    }
    return read.then((stored) => {
      this.#pending = undefined;
      const value = this.#parse(stored);
      this.note(value, sentAt);
      return value;
    }, (error) => {
      this.#pending = undefined;
      this.#onError?.(error);
      throw error;
    });
  }

  /**
   * Keeps what this process learnt otherwise (it wrote the key, or heard of
   * a write), unless a reading sent later is kept.
   * @param value The value.
   * @param sentAt When it held, on {@link now}'s clock; now by default.
   */
  note(value: T, sentAt: number = this.now()): void {
    const kept = this.#reading;
    if (kept != null) {
      if (kept.sentAt > sentAt) return;
      if (kept.sentAt === sentAt && this.#replacesOnTie?.(kept.value, value) === false) return;
    }
    this.#reading = { value, sentAt };
  }
}
