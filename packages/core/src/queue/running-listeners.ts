/**
 * The `listen()` calls of one queue instance that are still running, and
 * the signal that stops all of them when the instance is disposed.  A
 * backend's `listen()` runs its loop on {@link RunningListeners.signal} and
 * hands the loop's promise to {@link RunningListeners.track}; its
 * `[Symbol.asyncDispose]()` awaits {@link RunningListeners.close}, which
 * returns once every running handler has finished.
 *
 * ```ts
 * import { RunningListeners } from "@fedwork/core/queue-kit";
 *
 * const listeners = new RunningListeners();
 * const stop = new AbortController();
 * const loop = (signal: AbortSignal) =>
 *   new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
 * const listening = listeners.track(loop(listeners.signal(stop.signal)));
 * await listeners.close(); // aborts the loop and waits for it
 * await listening;
 * ```
 * @since 0.3.0
 */
export class RunningListeners {
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<void>>();

  /**
   * `true` once {@link RunningListeners.close} was called.
   * @since 0.3.0
   */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /**
   * The signal one `listen()` call stops on.
   * @param signal The caller's signal, if any.
   * @returns A signal aborted when `signal` aborts or the instance closes.
   * @since 0.3.0
   */
  signal(signal?: AbortSignal): AbortSignal {
    const closing = this.#closing.signal;
    if (signal == null) return closing;
    if (signal.aborted) return signal;
    if (closing.aborted) return closing;
    // A controller of its own rather than AbortSignal.any(): a listener
    // reads `aborted` on every message, and Node.js recomputes a combined
    // signal's `aborted` from its sources on every read.
    const combined = new AbortController();
    const abort = (event: Event) => {
      signal.removeEventListener("abort", abort);
      closing.removeEventListener("abort", abort);
      combined.abort((event.target as AbortSignal).reason);
    };
    signal.addEventListener("abort", abort);
    closing.addEventListener("abort", abort);
    return combined.signal;
  }

  /**
   * Remembers a running `listen()` until it settles.
   * @param listening The promise the loop returned.
   * @returns The same promise.
   * @since 0.3.0
   */
  track(listening: Promise<void>): Promise<void> {
    this.#running.add(listening);
    const forget = () => this.#running.delete(listening);
    listening.then(forget, forget);
    return listening;
  }

  /**
   * Aborts every signal handed out and waits for the tracked calls to
   * settle; their rejections are left to their callers.
   * @returns Resolves once no tracked call is running.
   * @since 0.3.0
   */
  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled([...this.#running]);
  }
}
