// The part of the Deno KV API that this package uses, written out so that
// the package type-checks without Deno's global types (tsc, Node.js) and
// accepts any object with the same shape: `Deno.Kv` from `Deno.openKv()`,
// or the `Kv` of the `@deno/kv` npm package on Node.js and Bun.

/**
 * One part of a Deno KV key.  Fedwork only writes strings.
 * @since 0.3.0
 */
export type DenoKvKeyPart = string | number | bigint | boolean | symbol | Uint8Array;

/**
 * A Deno KV key (`Deno.KvKey`).
 * @since 0.3.0
 */
export type DenoKvKey = readonly DenoKvKeyPart[];

/**
 * An entry read from Deno KV (`Deno.KvEntryMaybe`).
 * @since 0.3.0
 */
export interface DenoKvEntry {
  /** The entry's key. */
  readonly key: DenoKvKey;
  /** The entry's value; `null` when absent. */
  readonly value: unknown;
  /** The entry's version; `null` when absent. */
  readonly versionstamp: string | null;
}

/**
 * An atomic operation (`Deno.AtomicOperation`): checks and mutations that
 * commit together or not at all.
 * @since 0.3.0
 */
export interface DenoKvAtomicOperation {
  /** Adds checks that the keys still have these versions. */
  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): DenoKvAtomicOperation;
  /** Adds a write. */
  set(key: DenoKvKey, value: unknown, options?: { expireIn?: number }): DenoKvAtomicOperation;
  /** Adds a deletion. */
  delete(key: DenoKvKey): DenoKvAtomicOperation;
  /** Commits; `ok` is `false` when a check failed. */
  commit(): Promise<{ readonly ok: boolean }>;
}

/**
 * The Deno KV database methods Fedwork's Deno KV engine calls; `Deno.Kv`
 * has them.
 * @since 0.3.0
 */
export interface DenoKv {
  /** Reads one entry. */
  get(key: DenoKvKey, options?: { consistency?: "strong" | "eventual" }): Promise<DenoKvEntry>;
  /** Reads up to 10 entries at once (Deno KV's limit); absent from stand-ins. */
  getMany?(
    keys: readonly DenoKvKey[],
    options?: { consistency?: "strong" | "eventual" },
  ): Promise<DenoKvEntry[]>;
  /** Lists the entries under a prefix, in key order. */
  list(
    selector: { prefix: DenoKvKey },
    options?: { consistency?: "strong" | "eventual"; batchSize?: number },
  ): AsyncIterable<DenoKvEntry>;
  /** Starts an atomic operation. */
  atomic(): DenoKvAtomicOperation;
}

/** Checks the `kv` option: an object with Deno KV's methods. */
export function checkKvOption(kv: unknown, where: string): DenoKv {
  const candidate = kv as Partial<Record<keyof DenoKv, unknown>> | null | undefined;
  if (
    candidate == null || typeof candidate.get !== "function" ||
    typeof candidate.list !== "function" || typeof candidate.atomic !== "function"
  ) {
    throw new TypeError(
      `The kv option of ${where} must be an open Deno KV database (from Deno.openKv()); got ${
        kv === null ? "null" : typeof kv
      }.`,
    );
  }
  return kv as DenoKv;
}

/** Checks a key prefix option: a non-empty array of strings. */
export function checkPrefixOption(
  prefix: unknown,
  fallback: readonly string[],
  where: string,
): readonly string[] {
  if (prefix === undefined) return fallback;
  if (
    !Array.isArray(prefix) || prefix.length === 0 ||
    !prefix.every((part) => typeof part === "string")
  ) {
    throw new TypeError(
      `The prefix option of ${where} must be a non-empty array of strings; got ${
        JSON.stringify(prefix)
      }.`,
    );
  }
  return [...prefix];
}

/** Compares two JSON values structurally (object keys in any order). */
export function jsonValuesEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && jsonValuesEqual(left[key], right[key]));
}
