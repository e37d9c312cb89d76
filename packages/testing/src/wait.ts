// Waiting on events with generous timeouts: the suites never assert that
// something happens *quickly*, only that it happens at all (or, for delays,
// not too early), so a slow, shared machine cannot make them fail.

/** A promise with its resolve function exposed. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** Creates a {@link Deferred}. */
export function createDeferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Thrown when an awaited event does not happen within its timeout.
 */
export class ConformanceTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConformanceTimeoutError";
  }
}

/**
 * Races `promise` against a timer.
 * @param promise What to wait for.
 * @param ms The timeout.
 * @param what Describes the awaited event, for the error message.
 * @returns The promise's value.
 * @throws {ConformanceTimeoutError} When the timer fires first.
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  what: string | (() => string),
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const description = typeof what === "function" ? what() : what;
      reject(new ConformanceTimeoutError(`Timed out after ${ms} ms waiting for ${description}.`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls `check` every `intervalMs` until it returns `true`.
 * @param check The condition; may be async.
 * @param options.timeoutMs How long to keep trying.
 * @param options.intervalMs The pause between attempts; 100 by default.
 * @param options.what Describes the condition, for the error message.
 * @throws {ConformanceTimeoutError} When the condition never held.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; what: string | (() => string) },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 100;
  while (!(await check())) {
    if (Date.now() >= deadline) {
      const description = typeof options.what === "function" ? options.what() : options.what;
      throw new ConformanceTimeoutError(
        `Timed out after ${options.timeoutMs} ms waiting for ${description}.`,
      );
    }
    await delay(intervalMs);
  }
}
