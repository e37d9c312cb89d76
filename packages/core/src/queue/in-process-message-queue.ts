import { getLogger } from "@logtape/logtape";
import { assertKnownOptions } from "../options/known-options.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import { setTimerRef } from "../time/timer-ref.ts";
import { listenBatchSize } from "./listen-options.ts";
import { isHandedOver, keepsMessageObjects } from "./message-ownership.ts";
import { checkMessagePriority, MAX_MESSAGE_PRIORITY, MIN_MESSAGE_PRIORITY } from "./priority.ts";
import type {
  MessageQueue,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueHandler,
  MessageQueueListenOptions,
} from "./message-queue.ts";

const logger = getLogger(["fedwork", "queue"]);

// setTimeout() takes a signed 32-bit delay; longer delays are re-armed.
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

// While messages are ready, handlers run back to back on microtasks only;
// after this many in a row the listener yields a macrotask so that timers
// and I/O (an HTTP server in the same process, say) are not starved.
const MESSAGES_BETWEEN_YIELDS = 100;

// The most handlers of one listen() call that may have given their slot up
// (yieldSlot()) at once, each with a lane of its own running beside it.
const MAX_YIELDED_SLOTS = 1000;

/** One listen() call: its handler, signal, and the lanes yielded slots opened. */
interface Listener {
  readonly handler: MessageQueueHandler;
  readonly signal: AbortSignal | undefined;
  /** How many of its handlers gave their slot up and have not taken it back. */
  yielded: number;
  /** The lanes still running. */
  readonly lanes: Set<Promise<void>>;
}

/** A lane a yielded slot opened: it ends once `closed` (after its handler). */
interface Lane {
  closed: boolean;
  /** Whether it waits for a message to come. */
  waiting: boolean;
}

// How long a message whose handler threw waits before it is handed out
// again, when the options do not say.
const DEFAULT_REDELIVERY_DELAY_MS = 1000;

/**
 * Options for {@link InProcessMessageQueue}.
 * @since 0.1.0
 */
export interface InProcessMessageQueueOptions {
  /**
   * How long a message whose handler threw waits before it is handed out
   * again.  It keeps its ordering key held meanwhile.
   * @default `{ seconds: 1 }`
   * @since 0.2.0
   */
  readonly redeliveryDelay?: DurationInput;
}

interface QueueEntry {
  /** Enqueue order, used to break ties between equal ready times. */
  readonly sequence: number;
  readonly message: unknown;
  readonly orderingKey?: string;
  /** The priority it was enqueued with; higher runs first. */
  readonly priority: number;
  /** When the entry becomes ready, on the `performance.now()` clock. */
  readonly readyAt: number;
  /**
   * A redelivery of a message whose ordering key stayed held while it
   * waited: when ready, it goes to the front of its key's line.
   */
  readonly redelivered: boolean;
  /** How many times it was handed out without an outcome (see deliveryCount). */
  readonly deliveries: number;
}

/**
 * A first-in, first-out list with O(1) `push` and `shift` (an array whose
 * consumed head is cut off in batches: `Array.prototype.shift` is O(n) on
 * large arrays in some engines).
 */
class Fifo<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  unshift(item: T): void {
    if (this.#head > 0) this.#items[--this.#head] = item;
    else this.#items.unshift(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined as T;
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

/** A binary min-heap of entries by `readyAt`, then `sequence`. */
class DelayHeap {
  readonly #items: QueueEntry[] = [];

  get length(): number {
    return this.#items.length;
  }

  peek(): QueueEntry | undefined {
    return this.#items[0];
  }

  push(entry: QueueEntry): void {
    const items = this.#items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >>> 1;
      if (!before(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): QueueEntry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && before(items[left], items[smallest])) smallest = left;
      if (right < items.length && before(items[right], items[smallest])) smallest = right;
      if (smallest === i) break;
      [items[i], items[smallest]] = [items[smallest], items[i]];
      i = smallest;
    }
    return top;
  }
}

function before(a: QueueEntry, b: QueueEntry): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.sequence < b.sequence);
}

/**
 * A {@link MessageQueue} that keeps messages in the memory of the current
 * process.  Good for development, tests and single-process deployments;
 * messages are lost when the process exits.
 *
 * Listeners are woken as soon as a message becomes available: there is no
 * polling interval.  Delayed messages wait on a single timer armed for the
 * earliest one; that timer keeps the process alive only while a `listen()`
 * call is running.  Taking a message costs O(1) whatever the backlog.
 *
 * Priorities: a ready message is handed out before every ready message of
 * lower priority; equal priorities keep the order below.  A key's messages
 * keep their order whatever their priorities: the key takes the priority
 * of the message at the front of its line.
 *
 * Ordering keys: messages that share an `orderingKey` are handed out one at
 * a time, in the order they became *ready*.  For messages without a delay
 * (or with equal delays) that is the enqueue order.  A message delayed at
 * enqueue time does not hold back anything while it waits: messages
 * enqueued after it with the same key and a shorter delay may run before
 * it.  A message being *redelivered* (its handler threw, or asked for a
 * `MessageRedelivery`) does hold its key: later messages with that key
 * wait until it has been handled.
 *
 * A handler that throws does not lose its message: it is handed out again
 * after {@link InProcessMessageQueueOptions.redeliveryDelay}.  Handlers get
 * a `MessageRedelivery` as their second argument; its `deliveryCount`
 * counts the hand-outs since the message was enqueued or last redelivered
 * in place, so a message whose handler keeps throwing counts up (since
 * 0.4.0).
 *
 * Each {@link InProcessMessageQueue.listen} call processes one message at a
 * time (but for handlers that give their slot up while they wait, as the
 * items of a `handleMany` task's run do, since 0.4.0); several `listen()`
 * calls on one queue compete for messages, each message going to exactly
 * one of them.  Wrap the queue in a
 * {@link ParallelMessageQueue} to run handlers concurrently.
 *
 * Messages are copied with `structuredClone()` when enqueued, so changing
 * an object after enqueueing it does not change the queued message (as with
 * any queue that serializes its messages), and a handler may change the
 * message it gets.  The one exception is the messages the federation builds
 * itself for the queue (tasks, activities, deliveries, retries): nothing
 * else holds them, so they are queued as they are, without the copy.  A
 * message an application passes to `enqueue()` is always copied.
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
   * Always `false`: Fedwork's retry policy decides about failed messages
   * (the queue only hands out again a message whose handler threw).
   * @since 0.1.0
   */
  readonly nativeRetrial = false;

  /**
   * Always `true`: ready messages are handed out highest priority first.
   * @since 0.3.0
   */
  readonly nativePriority = true;

  /** Internal: it keeps the messages the federation hands over uncopied. */
  readonly [keepsMessageObjects] = true;

  readonly #redeliveryDelayMs: number;
  #sequence = 0;
  /**
   * What a listener may take next, in the order it became ready: an entry
   * without an ordering key, or the ordering key whose line has a ready
   * entry at its front and no entry in flight.
   */
  #runnable = new Fifo<QueueEntry | string>();
  /**
   * Like {@link #runnable}, for priorities other than 0, indexed by
   * `priority - MIN_MESSAGE_PRIORITY`; created on first use.
   */
  #prioritized: (Fifo<QueueEntry | string> | undefined)[] = [];
  /** How many items the {@link #prioritized} lists hold together. */
  #prioritizedCount = 0;
  /** The ready entries of each ordering key, in order. */
  #lines = new Map<string, Fifo<QueueEntry>>();
  /**
   * Ordering keys that may not run now: an entry is in flight, or is
   * waiting to be redelivered.
   */
  #heldKeys = new Set<string>();
  #readyCount = 0;
  /** Entries waiting for their delay. */
  #delayed = new DelayHeap();
  #inFlight = 0;
  /** Listeners waiting for something to change. */
  #waiters = new Set<() => void>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  /** How many `listen()` calls are running. */
  #listeners = 0;

  /**
   * Creates an empty queue.
   * @param options The redelivery delay.
   * @throws {UnknownOptionError} When `options` holds another name (e.g.
   *         Fedify's `pollInterval`, which this queue does not need).
   * @throws {TypeError} When `redeliveryDelay` is not a duration.
   * @throws {RangeError} When `redeliveryDelay` is negative.
   * @since 0.1.0
   */
  constructor(options: InProcessMessageQueueOptions = {}) {
    assertKnownOptions(options, ["redeliveryDelay"], { where: "new InProcessMessageQueue()" });
    this.#redeliveryDelayMs = options.redeliveryDelay == null
      ? DEFAULT_REDELIVERY_DELAY_MS
      : durationToMilliseconds(options.redeliveryDelay, "redeliveryDelay");
  }

  /**
   * Adds a message.
   * @param message The message.  It is copied with `structuredClone()`
   *                (unless the federation built it; see the class).
   * @param options The delay, ordering key and priority.
   * @returns Resolves once the message is in the queue.
   * @throws {TypeError} When `delay` is not a duration, or the message
   *                     cannot be cloned.
   * @throws {RangeError} When `delay` is negative or `priority` is not an
   *                     integer from -5 to 5.
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
   * @param messages The messages.  Each is copied with `structuredClone()`
   *                 (unless the federation built it; see the class).
   * @param options The delay, ordering key and priority, applied to every
   *                message.
   * @returns Resolves once the messages are in the queue.
   * @throws {TypeError} When `delay` is not a duration, or a message cannot
   *                     be cloned.
   * @throws {RangeError} When `delay` is negative or `priority` is not an
   *                     integer from -5 to 5.
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
    const ready = this.#readyCount;
    const delayed = this.#delayed.length;
    return Promise.resolve({ queued: ready + delayed + this.#inFlight, ready, delayed });
  }

  /**
   * Hands messages to `handler`, one at a time, until `options.signal`
   * aborts.  A handler that throws (or rejects) is logged under the
   * `["fedwork", "queue"]` category, its message is handed out again after
   * the redelivery delay, and the loop goes on.  A handler that gives its
   * slot up (`MessageRedelivery.yieldSlot()`, since 0.4.0: a `handleMany`
   * item waiting for its run) lets the listener start the next message
   * beside it, until it takes the slot back or settles, for at most 1,000
   * such handlers at once.
   * @param handler Processes one message.
   * @param options The abort signal (without one, listens forever); a
   *                `batchSize` is checked, and otherwise changes nothing.
   * @returns Resolves after the signal aborts and the running handlers
   *          have finished.
   * @throws {RangeError} When `options.batchSize` is not a positive integer.
   * @since 0.1.0
   */
  async listen(
    handler: MessageQueueHandler,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    const { signal } = options;
    // Checked like every queue's, though one message at a time is all
    // this queue hands out: there are no round trips to save.
    listenBatchSize(options);
    this.#listeners++;
    this.#updateTimerRef();
    const listener: Listener = { handler, signal, yielded: 0, lanes: new Set() };
    try {
      await this.#serve(listener, undefined);
    } finally {
      // The lanes of yielded slots stop with the signal, after their
      // handlers.
      while (listener.lanes.size > 0) await Promise.all(listener.lanes);
      this.#listeners--;
      this.#updateTimerRef();
    }
  }

  /**
   * One lane of a listener: takes a message, runs its handler, and again,
   * until the signal aborts or, for a lane a yielded slot opened, until
   * that slot is taken back (after the lane's running handler).
   */
  async #serve(listener: Listener, lane: Lane | undefined): Promise<void> {
    const { handler, signal } = listener;
    // A lane opens inside a handler's yieldSlot() call: it starts once
    // that call has returned.
    if (lane != null) await Promise.resolve();
    let inARow = 0;
    while (!signal?.aborted && lane?.closed !== true) {
      const entry = this.#take();
      if (entry == null) {
        inARow = 0;
        if (lane != null) lane.waiting = true;
        await this.#waitForChange(signal);
        if (lane != null) lane.waiting = false;
        continue;
      }
      let redelivery: { message: unknown; delayMs: number; deliveries: number } | undefined;
      const deliveryCount = entry.deliveries + 1;
      /** The lane this handler's yielded slot opened, while it is open. */
      let opened: Lane | undefined;
      let settled = false;
      try {
        await handler(entry.message, {
          deliveryCount,
          redeliver: (message, { delay }) => {
            try {
              if (redelivery != null) {
                throw new TypeError("redeliver() was already called for this message.");
              }
              const delayMs = durationToMilliseconds(delay, "delay");
              // A retry in place records an outcome: the count starts again.
              redelivery = { message: copyUnlessHandedOver(message), delayMs, deliveries: 0 };
              return Promise.resolve();
            } catch (error) {
              return Promise.reject(error);
            }
          },
          yieldSlot: () => {
            if (settled || opened != null || listener.yielded >= MAX_YIELDED_SLOTS) {
              return () => {};
            }
            listener.yielded++;
            const lane: Lane = opened = { closed: false, waiting: false };
            const serving = this.#serve(listener, lane);
            listener.lanes.add(serving);
            void serving.then(() => listener.lanes.delete(serving));
            return () => {
              if (opened !== lane) return;
              opened = undefined;
              this.#closeLane(listener, lane);
            };
          },
        });
      } catch (error) {
        logger.error(
          "A message handler failed; the message will be handed out again in " +
            "{redeliveryDelayMs} ms: {error}",
          { error, orderingKey: entry.orderingKey, redeliveryDelayMs: this.#redeliveryDelayMs },
        );
        // A redelivery the handler already asked for stands, as it does on
        // durable queues where it is stored at once.
        redelivery ??= {
          message: entry.message,
          delayMs: this.#redeliveryDelayMs,
          deliveries: deliveryCount,
        };
      } finally {
        settled = true;
        if (opened != null) {
          this.#closeLane(listener, opened);
          opened = undefined;
        }
        this.#inFlight--;
        this.#settle(entry, redelivery);
      }
      if (++inARow >= MESSAGES_BETWEEN_YIELDS) {
        inARow = 0;
        await yieldMacrotask();
      }
    }
  }

  /** Closes a yielded slot's lane: it ends after its running handler. */
  #closeLane(listener: Listener, lane: Lane): void {
    lane.closed = true;
    listener.yielded--;
    // A lane waiting for a message must see that it is closed.
    if (lane.waiting) this.#notify();
  }

  /**
   * Stops the timer that waits for delayed messages.  Nothing else needs
   * closing; a disposed queue should not be used again.
   * @since 0.1.0
   */
  [Symbol.asyncDispose](): Promise<void> {
    this.#disposed = true;
    this.#clearTimer();
    for (const sibling of this.#siblings.values()) void sibling[Symbol.asyncDispose]();
    return Promise.resolve();
  }

  readonly #siblings = new Map<string, InProcessMessageQueue>();
  /**
   * Set by disposal: no delay timer is armed after it, so that a retry
   * stored by a handler still finishing (or a late enqueue) cannot keep
   * the process alive.
   */
  #disposed = false;

  /**
   * Returns a sibling queue with the same redelivery delay and its own
   * messages, for capability routing.  The same channel gives the same
   * sibling; it is disposed of with this queue.
   * @param channel The channel: lowercase letters, digits and underscores.
   * @returns The sibling.
   * @throws {TypeError} When the channel is malformed.
   * @since 0.2.0
   */
  derive(channel: string): InProcessMessageQueue {
    checkQueueChannel(channel);
    let sibling = this.#siblings.get(channel);
    if (sibling == null) {
      sibling = new InProcessMessageQueue({
        redeliveryDelay: { milliseconds: this.#redeliveryDelayMs },
      });
      this.#siblings.set(channel, sibling);
    }
    return sibling;
  }

  #add(messages: readonly unknown[], options: MessageQueueEnqueueOptions): void {
    const delay = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    // Clone everything before adding anything, so that an uncloneable
    // message leaves the queue unchanged.
    const priority = checkMessagePriority(options.priority);
    const clones = isHandedOver(messages) ? messages : messages.map(copyUnlessHandedOver);
    const readyAt = performance.now() + delay;
    for (const message of clones) {
      const entry: QueueEntry = {
        sequence: this.#sequence++,
        message,
        orderingKey: options.orderingKey,
        priority,
        readyAt,
        redelivered: false,
        deliveries: 0,
      };
      if (delay <= 0) this.#makeReady(entry);
      else this.#delayed.push(entry);
    }
    if (delay <= 0) this.#notify();
    else this.#armTimer();
  }

  /** Puts an entry where a listener can take it (or its key's line). */
  #makeReady(entry: QueueEntry): void {
    this.#readyCount++;
    const key = entry.orderingKey;
    if (key == null) {
      this.#pushRunnable(entry, entry.priority);
      return;
    }
    let line = this.#lines.get(key);
    if (line == null) this.#lines.set(key, line = new Fifo());
    if (entry.redelivered) {
      // Its key was held while it waited; it runs before anything queued
      // behind it meanwhile.
      line.unshift(entry);
      this.#heldKeys.delete(key);
      this.#pushRunnable(key, entry.priority);
      return;
    }
    line.push(entry);
    // The key goes on the runnable list once per free line: when it is not
    // held and this entry is the only one in it.
    if (line.length === 1 && !this.#heldKeys.has(key)) this.#pushRunnable(key, entry.priority);
  }

  /**
   * Puts an entry, or an ordering key at the priority of the entry at the
   * front of its line, on the runnable list of that priority.
   */
  #pushRunnable(item: QueueEntry | string, priority: number): void {
    if (priority === 0) {
      this.#runnable.push(item);
      return;
    }
    const index = priority - MIN_MESSAGE_PRIORITY;
    (this.#prioritized[index] ??= new Fifo()).push(item);
    this.#prioritizedCount++;
  }

  /** The next runnable item: from the highest priority that has one. */
  #shiftRunnable(): QueueEntry | string | undefined {
    // Most queues never see a priority: one list, no scan.
    if (this.#prioritizedCount === 0) return this.#runnable.shift();
    for (let priority = MAX_MESSAGE_PRIORITY; priority > 0; priority--) {
      const item = this.#prioritized[priority - MIN_MESSAGE_PRIORITY]?.shift();
      if (item !== undefined) {
        this.#prioritizedCount--;
        return item;
      }
    }
    if (this.#runnable.length > 0) return this.#runnable.shift();
    for (let priority = -1; priority >= MIN_MESSAGE_PRIORITY; priority--) {
      const item = this.#prioritized[priority - MIN_MESSAGE_PRIORITY]?.shift();
      if (item !== undefined) {
        this.#prioritizedCount--;
        return item;
      }
    }
    return undefined;
  }

  #take(): QueueEntry | undefined {
    const next = this.#shiftRunnable();
    if (next === undefined) return undefined;
    this.#readyCount--;
    this.#inFlight++;
    if (typeof next !== "string") return next;
    const line = this.#lines.get(next)!;
    const entry = line.shift()!;
    if (line.length === 0) this.#lines.delete(next);
    this.#heldKeys.add(next);
    return entry;
  }

  /** Releases (or keeps holding) a handled entry's key; schedules a redelivery. */
  #settle(
    entry: QueueEntry,
    redelivery: { message: unknown; delayMs: number; deliveries: number } | undefined,
  ) {
    const key = entry.orderingKey;
    if (redelivery != null) {
      const again: QueueEntry = {
        sequence: entry.sequence,
        message: redelivery.message,
        orderingKey: key,
        priority: entry.priority,
        readyAt: performance.now() + redelivery.delayMs,
        redelivered: key != null,
        deliveries: redelivery.deliveries,
      };
      if (redelivery.delayMs <= 0) {
        this.#makeReady(again);
        this.#notify();
      } else {
        this.#delayed.push(again);
        this.#armTimer();
      }
      return;
    }
    if (key == null) return;
    this.#heldKeys.delete(key);
    const front = this.#lines.get(key)?.peek();
    if (front != null) {
      this.#pushRunnable(key, front.priority);
      // Other listeners may be waiting for this ordering key to free up.
      this.#notify();
    }
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
    if (this.#disposed) return;
    const next = this.#delayed.peek();
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
    let moved = false;
    while ((this.#delayed.peek()?.readyAt ?? Infinity) <= now) {
      this.#makeReady(this.#delayed.pop()!);
      moved = true;
    }
    if (moved) this.#notify();
    this.#armTimer();
  }
}

/**
 * The message to keep: a copy, so that the enqueuer cannot change the queued
 * message afterwards, except for a message the federation handed over.
 */
function copyUnlessHandedOver<T>(message: T): T {
  return isHandedOver(message) ? message : structuredClone(message);
}

/**
 * Lets I/O and timers run.  With `setImmediate`, which costs microseconds
 * where `setTimeout(0)` costs about a millisecond (a 100k-message drain
 * spent a tenth of its time asleep in those).  Node.js runs due timers on
 * every turn of its event loop, before the immediates of the next one, so
 * `setImmediate` alone never starves them there; Bun and a busy Deno run
 * immediates first, so on them every few yields go through `setTimeout(0)`.
 */
function yieldMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    if (immediate != null && (immediateLetsTimersRun || ++yields % TIMER_YIELD_EVERY !== 0)) {
      immediate(resolve);
    } else {
      setTimeout(resolve, 0);
    }
  });
}

const TIMER_YIELD_EVERY = 4;
let yields = 0;
const immediate = (globalThis as {
  setImmediate?: (callback: () => void) => unknown;
}).setImmediate;
const immediateLetsTimersRun = (() => {
  const versions = (globalThis as {
    process?: { versions?: Record<string, string | undefined> };
  }).process?.versions;
  return versions?.node != null && versions.bun == null && versions.deno == null;
})();

/**
 * Checks a channel given to `MessageQueue.derive()`.
 * @param channel The channel.
 * @throws {TypeError} When it is not 1 to 40 lowercase letters, digits and
 *         underscores.
 * @since 0.2.0
 */
export function checkQueueChannel(channel: unknown): asserts channel is string {
  if (typeof channel !== "string" || !/^[a-z0-9_]{1,40}$/.test(channel)) {
    throw new TypeError(
      "The channel given to derive() must be 1 to 40 lowercase letters, digits and " +
        `underscores; got ${JSON.stringify(channel)}.`,
    );
  }
}
