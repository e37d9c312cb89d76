// The kit's message queue: it keeps what the federation enqueues (tasks,
// their retries, deliveries) and runs nothing by itself.  A test runs what
// is due with runPendingTasks() or by moving the TestClock.  Messages are
// kept as JSON text, as a durable backend keeps them, so that what would not
// survive a real queue does not survive this one either.
import {
  durationToMilliseconds,
  type MessageQueue,
  type MessageQueueDepth,
  type MessageQueueEnqueueOptions,
  type MessageQueueListenOptions,
} from "@fedwork/core";
import type { TestClock } from "./clock.ts";

/**
 * A message waiting in a {@link TestMessageQueue}.
 * @since 0.4.0
 */
export interface PendingMessage {
  /** The message, as a worker would receive it. */
  readonly message: Record<string, unknown>;
  /** When it becomes due, on the kit's clock. */
  readonly readyAt: Date;
  /** Its priority (higher runs first). */
  readonly priority: number;
  /** Its ordering key, if it has one. */
  readonly orderingKey?: string;
}

interface Entry {
  readonly seq: number;
  readonly text: string;
  readonly readyAt: number;
  readonly priority: number;
  readonly orderingKey?: string;
}

/**
 * A {@link MessageQueue} that holds messages until a test runs them.
 * `listen()` only waits for its signal: the kit, not a listener, takes
 * messages out with {@link TestMessageQueue.takeDue}.
 * @since 0.4.0
 */
export class TestMessageQueue implements MessageQueue {
  /** Priorities are honoured: a due message of higher priority is taken first. */
  readonly nativePriority = true;
  readonly #clock: TestClock;
  readonly #entries: Entry[] = [];
  /** The place of each message id taken out, so that its retry keeps it. */
  readonly #places = new Map<string, number>();
  #seq = 0;

  /**
   * Makes an empty queue.
   * @param clock The clock delays run on.
   */
  constructor(clock: TestClock) {
    this.#clock = clock;
  }

  /**
   * Keeps a message until it is due and taken.
   * @param message The message; it must survive JSON.
   * @param options Its delay (on the clock), ordering key and priority.
   * @throws {TypeError} When the message cannot be written as JSON.
   * @throws {RangeError} When the delay is not a duration.
   */
  enqueue(message: unknown, options?: MessageQueueEnqueueOptions): Promise<void> {
    try {
      this.#add(message, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Keeps several messages, as {@link TestMessageQueue.enqueue} each.
   * @param messages The messages.
   * @param options Shared delay, ordering key and priority.
   * @throws {TypeError} When a message cannot be written as JSON; then none
   *         is kept.
   */
  enqueueMany(messages: readonly unknown[], options?: MessageQueueEnqueueOptions): Promise<void> {
    try {
      const texts = messages.map((message) => toText(message));
      for (const text of texts) this.#push(text, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Waits until `signal` aborts: the kit runs messages itself.
   * @param _handler Unused.
   * @param options The signal.
   */
  listen(_handler: unknown, options?: MessageQueueListenOptions): Promise<void> {
    const signal = options?.signal;
    if (signal == null || signal.aborted) return Promise.resolve();
    return new Promise((resolve) =>
      signal.addEventListener("abort", () => resolve(), { once: true })
    );
  }

  /**
   * Counts the messages, ready (due on the clock) and delayed.
   * @returns The depth.
   */
  getDepth(): Promise<MessageQueueDepth> {
    const now = this.#clock.now();
    const ready = this.#entries.filter((entry) => entry.readyAt <= now).length;
    return Promise.resolve({
      queued: this.#entries.length,
      ready,
      delayed: this.#entries.length - ready,
    });
  }

  /**
   * The messages waiting, in the order they fall due (then by priority
   * and by when they were enqueued).
   * @returns A copy of each.
   */
  pending(): PendingMessage[] {
    return [...this.#entries].sort((a, b) => a.readyAt - b.readyAt || byTurn(a, b)).map((
      entry,
    ) => ({
      message: JSON.parse(entry.text),
      readyAt: new Date(entry.readyAt),
      priority: entry.priority,
      ...(entry.orderingKey == null ? {} : { orderingKey: entry.orderingKey }),
    }));
  }

  /**
   * When the earliest message is due, on the clock.
   * @returns Epoch milliseconds, or `undefined` when the queue is empty.
   */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const entry of this.#runnable()) {
      if (next == null || entry.readyAt < next) next = entry.readyAt;
    }
    return next;
  }

  /**
   * Takes out the next due message: the highest priority first, then the
   * earliest enqueued.
   * @returns The message as a worker would receive it, or `undefined`.
   */
  takeDue(): Record<string, unknown> | undefined {
    const now = this.#clock.now();
    let best: Entry | undefined;
    for (const entry of this.#runnable()) {
      if (entry.readyAt > now) continue;
      if (best == null || byTurn(entry, best) < 0) best = entry;
    }
    if (best == null) return undefined;
    this.#entries.splice(this.#entries.indexOf(best), 1);
    const message = JSON.parse(best.text);
    const id = idOf(message);
    if (id != null) {
      // Bounded by what is still around: a place is needed only while the
      // message may come back as its retry.
      if (this.#places.size >= MAX_PLACES) this.#places.clear();
      this.#places.set(id, best.seq);
    }
    return message;
  }

  /**
   * The messages that may run once due: every message without an ordering
   * key, and for each key the one that came first (its retry keeps its
   * place), which holds back the key's later messages.
   */
  #runnable(): Entry[] {
    const firstOfKey = new Map<string, Entry>();
    const runnable: Entry[] = [];
    for (const entry of this.#entries) {
      if (entry.orderingKey == null) {
        runnable.push(entry);
        continue;
      }
      const first = firstOfKey.get(entry.orderingKey);
      if (first == null || entry.seq < first.seq) firstOfKey.set(entry.orderingKey, entry);
    }
    return [...runnable, ...firstOfKey.values()];
  }

  /** Removes every message. */
  clear(): void {
    this.#entries.length = 0;
    this.#places.clear();
  }

  #add(message: unknown, options?: MessageQueueEnqueueOptions): void {
    this.#push(toText(message), options);
  }

  #push(text: string, options?: MessageQueueEnqueueOptions): void {
    const delay = options?.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    const id = idOf(JSON.parse(text));
    const place = id == null ? undefined : this.#places.get(id);
    if (id != null) this.#places.delete(id);
    this.#entries.push({
      seq: place ?? this.#seq++,
      text,
      readyAt: this.#clock.now() + Math.max(0, delay),
      priority: options?.priority ?? 0,
      ...(options?.orderingKey == null ? {} : { orderingKey: options.orderingKey }),
    });
  }
}

const MAX_PLACES = 10_000;

function idOf(message: unknown): string | undefined {
  const id = typeof message === "object" && message != null
    ? (message as { id?: unknown }).id
    : undefined;
  return typeof id === "string" ? id : undefined;
}

function toText(message: unknown): string {
  const text = JSON.stringify(message);
  if (typeof text !== "string") {
    throw new TypeError("A message given to the TestMessageQueue must be a JSON value.");
  }
  return text;
}

function byTurn(a: Entry, b: Entry): number {
  // Among due messages priority decides, then the order of enqueueing.
  return b.priority - a.priority || a.seq - b.seq;
}
