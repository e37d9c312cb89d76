// Deno KV's local engine is an SQLite file, which several processes may
// open at once (workers beside an app).  SQLite lets one of them write at a
// time, and a transaction that reads before it writes (every atomic
// operation with a check) can fail at once with "database is locked"
// rather than wait: its busy timeout does not apply when two readers both
// want to write.  Such a failure means nothing was written, so the
// operation is simply tried again, a little later.
import type { DenoKv, DenoKvAtomicOperation, DenoKvEntry, DenoKvKey } from "./deno-kv.ts";

/** How many times an operation is tried in all before its error stands. */
const MAX_TRIES = 12;
/** The first wait between tries, doubled each time up to `MAX_WAIT_MS`. */
const FIRST_WAIT_MS = 2;
const MAX_WAIT_MS = 200;

/**
 * Whether an error is SQLite's "database is locked" (`SQLITE_BUSY`), as
 * `Deno.openKv()` and the `@deno/kv` npm package report it.
 * @param error What an operation threw.
 * @returns `true` for a lock conflict, which wrote nothing.
 * @since 0.3.0
 */
export function isDatabaseLocked(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return /database is locked|SQLITE_BUSY/i.test(error.message);
}

/**
 * Runs `operation`, again after a short, growing, jittered wait each time
 * it fails with "database is locked", up to 12 tries (about 1.3 seconds of
 * waiting in all).  Any other error, or the last lock error, is thrown.
 * @param operation Starts the operation afresh each time.
 * @returns What the operation resolved to.
 * @since 0.3.0
 */
export async function retryWhileLocked<T>(operation: () => Promise<T>): Promise<T> {
  for (let tries = 1;; tries++) {
    try {
      return await operation();
    } catch (error) {
      if (tries >= MAX_TRIES || !isDatabaseLocked(error)) throw error;
      const waitMs = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (tries - 1));
      await new Promise((resolve) => setTimeout(resolve, waitMs * (0.5 + Math.random())));
    }
  }
}

/** One call made on an atomic operation, to replay on a fresh one. */
type AtomicStep = (operation: DenoKvAtomicOperation) => DenoKvAtomicOperation;

/**
 * An atomic operation that records its steps and, on commit, replays them
 * on a fresh operation of the database for each try: an operation that
 * failed is not committed twice.
 */
class RetriedAtomicOperation implements DenoKvAtomicOperation {
  readonly #kv: DenoKv;
  readonly #steps: AtomicStep[] = [];

  constructor(kv: DenoKv) {
    this.#kv = kv;
  }

  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): DenoKvAtomicOperation {
    this.#steps.push((operation) => operation.check(...checks));
    return this;
  }

  set(key: DenoKvKey, value: unknown, options?: { expireIn?: number }): DenoKvAtomicOperation {
    this.#steps.push((operation) =>
      options == null ? operation.set(key, value) : operation.set(key, value, options)
    );
    return this;
  }

  delete(key: DenoKvKey): DenoKvAtomicOperation {
    this.#steps.push((operation) => operation.delete(key));
    return this;
  }

  commit(): Promise<{ readonly ok: boolean }> {
    return retryWhileLocked(() => {
      let operation = this.#kv.atomic();
      for (const step of this.#steps) operation = step(operation);
      return operation.commit();
    });
  }
}

/**
 * Wraps a Deno KV database so that its reads and atomic commits are tried
 * again when another process holds SQLite's write lock (see
 * {@link retryWhileLocked}).  A listing is tried again only until it has
 * yielded its first entry.  Internal.
 * @param kv The database, as the user passed it.
 * @returns A database of the same shape.
 * @since 0.3.0
 */
export function withLockRetries(kv: DenoKv): DenoKv {
  const wrapped: DenoKv = {
    get: (key, options) => retryWhileLocked(() => kv.get(key, options)),
    list: (selector, options) => listWithRetries(kv, selector, options),
    atomic: () => new RetriedAtomicOperation(kv),
  };
  const getMany = kv.getMany;
  if (typeof getMany === "function") {
    wrapped.getMany = (keys, options) => retryWhileLocked(() => getMany.call(kv, keys, options));
  }
  return wrapped;
}

async function* listWithRetries(
  kv: DenoKv,
  selector: { prefix: DenoKvKey },
  options: { consistency?: "strong" | "eventual"; batchSize?: number } | undefined,
): AsyncIterable<DenoKvEntry> {
  let iterator!: AsyncIterator<DenoKvEntry>;
  const first = await retryWhileLocked(() => {
    iterator = kv.list(selector, options)[Symbol.asyncIterator]();
    return iterator.next();
  });
  if (first.done) return;
  let done = false;
  try {
    yield first.value;
    while (true) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // A caller that stops early ends the listing underneath too.
    if (!done) await iterator.return?.();
  }
}
