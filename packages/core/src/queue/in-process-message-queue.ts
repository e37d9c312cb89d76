import { getLogger } from "@logtape/logtape";
import { durationToMilliseconds } from "../time/duration.ts";
import type {
  MessageQueue,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueListenOptions,
} from "./message-queue.ts";

const logger = getLogger(["fedwork", "queue"]);

// setTimeout() takes a signed 32-bit delay; longer delays are re-armed.
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

// While messages are ready, handlers run back to back on microtasks only;
// after this many in a row the listener yields a macrotask so that timers
// and I/O (an HTTP server in the same process, say) are not starved.
const MESSAGES_BETWEEN_YIELDS = 100;

/**
 * Options for {@link InProcessMessageQueue}.  There are none yet; the
 * object exists so that options can be added without changing the
 * constructor's signature.
 * @since 0.1.0
 */
// deno-lint-ignore no-empty-interface
export interface InProcessMessageQueueOptions {}

interface QueueEntry {
  /** Enqueue order, used to break ties between equal ready times. */
  readonly sequence: number;
  readonly message: unknown;
  readonly orderingKey?: string;
  /** When the entry becomes ready, on the `performance.now()` clock. */
  readonly readyAt: number;
}

/**
 * A {@link MessageQueue} that keeps messages in the memory of the current
 * process.  Good for development, tests and single-process deployments;
 * messages are lost when the process exits.
 *
 * Listeners are woken as soon as a message becomes available: there is no
 * polling interval.  Delayed messages wait on a single timer armed for the
 * earliest one; that timer keeps the process alive only while a `listen()`
 * call is running.
 *
 * Ordering keys: messages that share an `orderingKey` are handed out one at
 * a time, in the order they became *ready*.  For messages without a delay
 * (or with equal delays) that is the enqueue order.  A delayed message does
 * not hold back anything while it waits: messages enqueued after it with
 * the same key and a shorter delay may run before it, and messages with
 * other keys are never blocked by it.
 *
 * Each {@link InProcessMessageQueue.listen} call processes one message at a
 * time; several `listen()` calls on one queue compete for messages, each
 * message going to exactly one of them.  Wrap the queue in a
 * {@link ParallelMessageQueue} to run handlers concurrently.
 *
 * Messages are copied with `structuredClone()` when enqueued, so changing
 * an object after enqueueing it does not change the queued message (as with
 * any queue that serializes its messages).
 *
 * @example
 * ```ts
 * import { InProcessMessageQueue } from "@fedwork/core";
 *
 * const queue = new InProcessMessageQueue();
 * const controller = new AbortController();
 * const listening = queue.listen((message) => {
 *   console.log(message);
 * }, { signal: controller.signal });
 * await queue.enqueue({ hello: "world" });
 * controller.abort();
 * await listening;
 * ```
 * @since 0.1.0
 */
export class InProcessMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Always `false`: a failed message is not retried by the queue itself.
   * @since 0.1.0
   */
  readonly nativeRetrial = false;

  #sequence = 0;
  /** Entries a listener may take, in the order they became ready. */
  #ready: QueueEntry[] = [];
  /** Entries waiting for their delay, sorted by `readyAt` then `sequence`. */
  #delayed: QueueEntry[] = [];
  #inFlight = 0;
  /** Ordering keys with a message being handled right now. */
  #activeKeys = new Set<string>();
  /** Listeners waiting for something to change. */
  #waiters = new Set<() => void>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  /** How many `listen()` calls are running. */
  #listeners = 0;

  /**
   * Creates an empty queue.
   * @param _options Reserved for future options; none are defined yet.
   * @since 0.1.0
   */
  constructor(_options: InProcessMessageQueueOptions = {}) {}

  /**
   * Adds a message.
   * @param message The message.  It is copied with `structuredClone()`.
   * @param options The delay and ordering key.
   * @returns Resolves once the message is in the queue.
   * @throws {TypeError} When `delay` is not a duration, or the message
   *                     cannot be cloned.
   * @throws {RangeError} When `delay` is negative.
   * @since 0.1.0
   */
  enqueue(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    try {
      this.#add([message], options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Adds several messages, in order.  Either all of them are added or,
   * when the options or a message are invalid, none.
   * @param messages The messages.  Each is copied with `structuredClone()`.
   * @param options The delay and ordering key, applied to every message.
   * @returns Resolves once the messages are in the queue.
   * @throws {TypeError} When `delay` is not a duration, or a message cannot
   *                     be cloned.
   * @throws {RangeError} When `delay` is negative.
   * @since 0.1.0
   */
  enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    try {
      this.#add(messages, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Reports how many messages the queue holds.  `queued` counts the ready
   * and delayed messages plus those whose handlers are running.
   * @returns The depth.
   * @since 0.1.0
   */
  getDepth(): Promise<MessageQueueDepth> {
    const ready = this.#ready.length;
    const delayed = this.#delayed.length;
    return Promise.resolve({ queued: ready + delayed + this.#inFlight, ready, delayed });
  }

  /**
   * Hands messages to `handler`, one at a time, until `options.signal`
   * aborts.  A handler that throws (or rejects) is logged under the
   * `["fedwork", "queue"]` category and the loop goes on; the message is
   * not retried.
   * @param handler Processes one message.
   * @param options The abort signal; without one, listens forever.
   * @returns Resolves after the signal aborts and the running handler has
   *          finished.
   * @since 0.1.0
   */
  async listen(
    // deno-lint-ignore no-explicit-any
    handler: (message: any) => Promise<void> | void,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    const { signal } = options;
    this.#listeners++;
    this.#updateTimerRef();
    try {
      let inARow = 0;
      while (!signal?.aborted) {
        const entry = this.#take();
        if (entry == null) {
          inARow = 0;
          await this.#waitForChange(signal);
          continue;
        }
        try {
          await handler(entry.message);
        } catch (error) {
          logger.error(
            "A message handler failed; the message is dropped and the listener continues: {error}",
            { error, orderingKey: entry.orderingKey },
          );
        } finally {
          this.#inFlight--;
          if (entry.orderingKey != null) {
            this.#activeKeys.delete(entry.orderingKey);
            // Other listeners may be waiting for this ordering key to free up.
            this.#notify();
          }
        }
        if (++inARow >= MESSAGES_BETWEEN_YIELDS) {
          inARow = 0;
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }
    } finally {
      this.#listeners--;
      this.#updateTimerRef();
    }
  }

  /**
   * Stops the timer that waits for delayed messages.  Nothing else needs
   * closing; a disposed queue should not be used again.
   * @since 0.1.0
   */
  [Symbol.asyncDispose](): Promise<void> {
    this.#clearTimer();
    return Promise.resolve();
  }

  #add(messages: readonly unknown[], options: MessageQueueEnqueueOptions): void {
    const delay = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    // Clone everything before adding anything, so that an uncloneable
    // message leaves the queue unchanged.
    const clones = messages.map((message) => structuredClone(message));
    const readyAt = performance.now() + delay;
    for (const message of clones) {
      const entry: QueueEntry = {
        sequence: this.#sequence++,
        message,
        orderingKey: options.orderingKey,
        readyAt,
      };
      if (delay <= 0) this.#ready.push(entry);
      else this.#insertDelayed(entry);
    }
    if (delay <= 0) this.#notify();
    else this.#armTimer();
  }

  #insertDelayed(entry: QueueEntry): void {
    // Binary search for the first entry that becomes ready strictly later;
    // equal ready times keep enqueue order.
    let low = 0;
    let high = this.#delayed.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#delayed[middle].readyAt <= entry.readyAt) low = middle + 1;
      else high = middle;
    }
    this.#delayed.splice(low, 0, entry);
  }

  #take(): QueueEntry | undefined {
    const index = this.#ready.findIndex((entry) =>
      entry.orderingKey == null || !this.#activeKeys.has(entry.orderingKey)
    );
    if (index < 0) return undefined;
    const [entry] = this.#ready.splice(index, 1);
    this.#inFlight++;
    if (entry.orderingKey != null) this.#activeKeys.add(entry.orderingKey);
    return entry;
  }

  #waitForChange(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.#waiters.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal?.addEventListener("abort", wake, { once: true });
    });
  }

  #notify(): void {
    // Every waiting listener re-checks; those that find nothing wait again.
    for (const wake of [...this.#waiters]) wake();
  }

  #armTimer(): void {
    const next = this.#delayed[0];
    if (next == null) {
      this.#clearTimer();
      return;
    }
    if (this.#timer != null && this.#timerAt <= next.readyAt) return;
    this.#clearTimer();
    const wait = Math.min(
      Math.max(0, Math.ceil(next.readyAt - performance.now())),
      MAX_TIMER_DELAY_MS,
    );
    this.#timerAt = next.readyAt;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#promoteDueEntries();
    }, wait);
    this.#updateTimerRef();
  }

  /**
   * The delay timer keeps the process alive only while someone listens:
   * a queue left with delayed messages and no listener (a test that did
   * not dispose of it, say) must not hold the process open until they are
   * due, but a worker waiting for a delayed message must not exit either.
   */
  #updateTimerRef(): void {
    if (this.#timer == null) return;
    setTimerRef(this.#timer, this.#listeners > 0);
  }

  #clearTimer(): void {
    if (this.#timer != null) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #promoteDueEntries(): void {
    // Timers may fire a little early (or, for very long delays, be re-armed
    // in steps), so only entries that are really due move over.
    const now = performance.now();
    let due = 0;
    while (due < this.#delayed.length && this.#delayed[due].readyAt <= now) due++;
    if (due > 0) {
      this.#ready.push(...this.#delayed.splice(0, due));
      this.#notify();
    }
    this.#armTimer();
  }
}

interface RefCountedTimer {
  ref(): unknown;
  unref(): unknown;
}

interface DenoTimerApi {
  refTimer(id: number): void;
  unrefTimer(id: number): void;
}

function setTimerRef(timer: unknown, ref: boolean): void {
  // Node.js and Bun return timer objects with ref()/unref(); Deno returns a
  // number and offers Deno.refTimer()/Deno.unrefTimer() instead.
  if (typeof timer === "object" && timer !== null && "unref" in timer) {
    const refCounted = timer as RefCountedTimer;
    if (ref) refCounted.ref();
    else refCounted.unref();
  } else if (typeof timer === "number") {
    const deno = (globalThis as { Deno?: DenoTimerApi }).Deno;
    if (ref) deno?.refTimer(timer);
    else deno?.unrefTimer(timer);
  }
}
