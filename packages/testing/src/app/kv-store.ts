// The kit's key–value store: in memory, with times to live measured on the
// TestClock, so that what the federation keeps for a while (throttle
// periods, debounce bursts, idempotency keys, status records) expires when
// a test moves the clock, not when the wall clock does.
import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import type { TestClock } from "./clock.ts";

interface Entry {
  readonly key: KvKey;
  readonly value: unknown;
  /** On the clock, in epoch milliseconds. */
  readonly expiresAt: number;
}

/**
 * An in-memory {@link KvStore} whose times to live run on a
 * {@link TestClock}.  Values are copied in and out (structured clone), as a
 * store that serializes them would.
 * @since 0.4.0
 */
export class TestKvStore implements KvStore {
  readonly #clock: TestClock;
  readonly #entries = new Map<string, Entry>();

  /**
   * Makes an empty store.
   * @param clock The clock its times to live run on.
   */
  constructor(clock: TestClock) {
    this.#clock = clock;
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   */
  get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const entry = this.#live(key);
    return Promise.resolve(entry == null ? undefined : structuredClone(entry.value) as T);
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live, on the clock.
   * @throws {RangeError} When the time to live is not a duration.
   */
  set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    this.#write(key, value, options);
    return Promise.resolve();
  }

  /**
   * Removes a value.
   * @param key The key.
   */
  delete(key: KvKey): Promise<void> {
    this.#entries.delete(encodeKey(key));
    return Promise.resolve();
  }

  /**
   * Lists the live entries under a prefix, in key order.
   * @param prefix The key prefix; every entry when omitted.
   * @returns The entries.
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const now = this.#clock.now();
    const matches = [...this.#entries.values()].filter((entry) =>
      entry.expiresAt > now &&
      (prefix == null || prefix.every((part, index) => entry.key[index] === part))
    ).sort((a, b) => compareKeys(a.key, b.key));
    for (const entry of matches) {
      yield { key: entry.key, value: structuredClone(entry.value) };
    }
  }

  /**
   * Replaces a value if it deeply equals `expectedValue`.
   * @param key The key.
   * @param expectedValue The value expected now; `undefined` for absent.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns Whether it was swapped.
   */
  cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options?: KvStoreSetOptions,
  ): Promise<boolean> {
    const current = this.#live(key)?.value;
    if (canonicalJson(current) !== canonicalJson(expectedValue)) return Promise.resolve(false);
    this.#write(key, newValue, options);
    return Promise.resolve(true);
  }

  #live(key: KvKey): Entry | undefined {
    const encoded = encodeKey(key);
    const entry = this.#entries.get(encoded);
    if (entry == null) return undefined;
    if (entry.expiresAt <= this.#clock.now()) {
      this.#entries.delete(encoded);
      return undefined;
    }
    return entry;
  }

  #write(key: KvKey, value: unknown, options?: KvStoreSetOptions): void {
    const ttl = options?.ttl == null ? Infinity : durationToMilliseconds(options.ttl, "ttl");
    this.#entries.set(encodeKey(key), {
      key: [...key] as unknown as KvKey,
      value: structuredClone(value),
      expiresAt: this.#clock.now() + ttl,
    });
  }
}

function encodeKey(key: KvKey): string {
  return JSON.stringify(key);
}

function compareKeys(a: KvKey, b: KvKey): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** JSON with sorted object keys, so that deep equality is string equality. */
function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(
    value,
    (_key, v: unknown) =>
      v != null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
        : v,
  );
}
