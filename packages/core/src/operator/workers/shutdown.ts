// Closing a federation's workers: every startQueue() of the process stops
// taking messages at once, its running handlers get a grace to finish,
// and then their signals abort so that their messages go back to their
// queues.  A second close() may only shorten the grace.
import { getLogger } from "@logtape/logtape";
import { assertKnownOptions } from "../../options/known-options.ts";
import { gracePeriodToMilliseconds } from "../../processing/time-limit.ts";
import type { DurationInput } from "../../time/duration.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * How long {@link Federation.close} lets running handlers finish by
 * default: 20 seconds, which leaves the aborted ones and the engines' own
 * closing 10 seconds of the 30 that Kubernetes waits after `SIGTERM`.
 * @since 0.4.0
 */
export const DEFAULT_CLOSE_GRACE_MS = 20_000;

/**
 * Options for {@link Federation.close}.
 * @since 0.4.0
 */
export interface FederationCloseOptions {
  /**
   * How long running handlers may go on after the workers stopped taking
   * messages.  Then their signals (`ctx.task.signal`, `ctx.signal`) abort,
   * and each message whose handler ends so goes back to its queue
   * unchanged, with no attempt spent (durable queues keep it for another
   * worker; `InProcessMessageQueue` loses it with the process).  A later
   * call with a shorter grace (a second `SIGTERM`) cuts a running one
   * short; a longer one changes nothing.  A duration, zero or more.
   * @default `{ seconds: 20 }`
   */
  readonly grace?: DurationInput;
}

/**
 * The shutdown of one federation's workers in this process: the signals
 * its `startQueue()` calls stop on, and the calls still running.
 * Internal.
 * @since 0.4.0
 */
export class WorkerShutdown {
  readonly #stop = new AbortController();
  readonly #abortHandlers = new AbortController();
  readonly #running = new Set<Promise<void>>();
  #deadline = Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Aborts when {@link WorkerShutdown.close} is first called: take no more messages. */
  get stop(): AbortSignal {
    return this.#stop.signal;
  }

  /** Aborts when the grace is over: the running handlers' signals abort. */
  get abortHandlers(): AbortSignal {
    return this.#abortHandlers.signal;
  }

  /** Whether {@link WorkerShutdown.close} was called. */
  get closed(): boolean {
    return this.#stop.signal.aborted;
  }

  /**
   * Remembers a running `startQueue()` until it settles.
   * @param workers Its promise.
   * @returns The same promise.
   */
  track(workers: Promise<void>): Promise<void> {
    this.#running.add(workers);
    const forget = () => this.#running.delete(workers);
    workers.then(forget, forget);
    return workers;
  }

  /**
   * Stops every tracked `startQueue()`: see {@link Federation.close}.
   * @param options The grace.
   * @returns Resolves once every tracked call has settled.
   * @throws {UnknownOptionError} When an option's name is unknown.
   * @throws {TypeError} When `grace` is not a duration.
   * @throws {RangeError} When `grace` is negative or too long.
   */
  async close(options: FederationCloseOptions = {}): Promise<void> {
    assertKnownOptions(options, ["grace"], { where: "close()" });
    const graceMs = options.grace == null
      ? DEFAULT_CLOSE_GRACE_MS
      : gracePeriodToMilliseconds(options.grace, "grace");
    const deadline = performance.now() + graceMs;
    const first = !this.#stop.signal.aborted;
    if (first) this.#stop.abort();
    if (deadline < this.#deadline && !this.#abortHandlers.signal.aborted) {
      this.#deadline = deadline;
      clearTimeout(this.#timer);
      if (first && this.#running.size > 0) {
        logger.info(
          "Closing: the workers take no more messages; running handlers have {graceMs} ms " +
            "to finish.",
          { graceMs },
        );
      }
      const end = () => {
        if (this.#running.size > 0) {
          logger.info(
            "The grace of the workers is over: aborting the running handlers; their " +
              "messages go back to their queues.",
          );
        }
        this.#abortHandlers.abort();
      };
      if (graceMs === 0) end();
      else this.#timer = setTimeout(end, graceMs);
    }
    try {
      await Promise.allSettled([...this.#running]);
    } finally {
      // Nothing left to abort: a pending grace timer must not keep the
      // process alive.
      if (this.#running.size === 0) clearTimeout(this.#timer);
    }
  }
}
