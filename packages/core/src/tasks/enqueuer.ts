// The one way task messages reach a queue: prepared (or rebuilt from a
// record or a schedule) → deduplicated → recorded as "queued" → the
// producer.  Contexts, retries of failed tasks, schedules and Fedwork's own
// tasks all come through here, so that they are counted and recorded alike.
import type { KvStore } from "../kv/kv-store.ts";
import type { MessageProducer } from "../processing/producer.ts";
import type { MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { durationToMilliseconds } from "../time/duration.ts";
import type { EpochClock } from "../time/clock-seam.ts";
import { enqueueTaskMessages } from "./dedup.ts";
import { enqueueFlowControlled } from "./flow-enqueue.ts";
import type { TaskEnqueueResult } from "./definition.ts";
import {
  type EnqueueTasksOptions,
  type PreparedTaskMessages,
  prepareTaskMessages,
} from "./enqueue.ts";
import type { TaskMessage } from "./message.ts";

/**
 * Where a {@link TaskEnqueuer} records that tasks are queued (the task
 * status records have it).  Internal.
 * @since 0.2.0
 */
export interface TaskQueuedRecorder {
  /**
   * Records messages as queued, before they go into the queue (so that a
   * fast worker's `running` is never overwritten).
   * @param messages The stamped messages.
   * @param delayMs Their delay, in milliseconds.
   */
  queued(messages: readonly TaskMessage[], delayMs: number): Promise<void>;
  /**
   * Forgets the records of messages the queue did not take.
   * @param ids Their ids.
   */
  forget(ids: readonly string[]): Promise<void>;
}

/**
 * What a {@link TaskEnqueuer} needs.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @since 0.2.0
 */
export interface TaskEnqueuerOptions<TContextData> {
  /** Holds deduplication reservations for queues without native support. */
  readonly kv: KvStore;
  /** How long a deduplication key is held at most, in milliseconds. */
  readonly deduplicationTtlMs: number;
  /** Puts the messages into their queue. */
  readonly producer: MessageProducer<TContextData>;
  /** Records tasks as queued. */
  readonly status: TaskQueuedRecorder;
  /** Counts the enqueues deduplication (and, since 0.4.0, throttle) turned into no-ops. */
  readonly metrics: {
    recordDeduplicated(taskName: string, count: number): void;
    recordThrottled(taskName: string, count: number): void;
  };
  /** The clock of enqueue times, debounce bursts, throttle periods; `Date.now`. */
  readonly now?: EpochClock;
}

/**
 * Sees task messages that reached their queue.  Internal.
 * @param messages The messages, as prepared (before the producer stamped
 *                 their trace context).
 * @since 0.3.0
 */
export type TaskEnqueuedObserver = (messages: readonly TaskMessage[]) => void | Promise<void>;

/**
 * Enqueues task messages.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @since 0.2.0
 */
export class TaskEnqueuer<TContextData> {
  readonly #options: TaskEnqueuerOptions<TContextData>;
  readonly #enqueuedObservers = new Set<TaskEnqueuedObserver>();

  /**
   * Adds an internal observer of the task messages that reached their
   * queue (not those deduplication turned into no-ops).  It runs in the
   * enqueuer's async context, after the queue took them; an observer that
   * throws fails the enqueue, so observers catch their own errors.
   * @param observer The observer.
   * @returns A function that removes it.
   * @since 0.3.0
   */
  observeEnqueued(observer: TaskEnqueuedObserver): () => void {
    this.#enqueuedObservers.add(observer);
    return () => this.#enqueuedObservers.delete(observer);
  }

  /**
   * @param options The store, the producer, the status records and the
   *                metrics.
   */
  constructor(options: TaskEnqueuerOptions<TContextData>) {
    this.#options = options;
  }

  /**
   * The clock the enqueuer stamps with: `Date.now`, or the app-testing
   * kit's.
   * @since 0.4.0
   */
  get now(): EpochClock {
    return this.#options.now ?? Date.now;
  }

  /**
   * Enqueues prepared task messages, holding their deduplication keys.
   * @param prepared The messages, their queue and options.
   * @param start The context data to start the workers with, when the
   *              enqueue may start them.
   * @returns One result per message, in order.
   * @throws {TaskDeduplicationNotSupportedError} When a deduplication key
   *         can be held neither by the queue nor by the store.
   */
  async enqueue(
    prepared: PreparedTaskMessages,
    start?: { readonly contextData: TContextData },
  ): Promise<TaskEnqueueResult[]> {
    const { queue } = prepared;
    const { producer, status } = this.#options;
    const hooks = (options: MessageQueueEnqueueOptions) => ({
      ...(start == null ? {} : { start }),
      before: (stamped: readonly TaskMessage[]) => status.queued(stamped, delayOf(options)),
      notSent: (stamped: readonly TaskMessage[]) =>
        status.forget(stamped.map((message) => message.id)),
    });
    const results = prepared.flow != null
      ? await enqueueFlowControlled(
        { ...prepared, flow: prepared.flow },
        this.#options.kv,
        this.#options.deduplicationTtlMs,
        (messages, options) => producer.produce(queue, messages, options, hooks(options)),
        this.#options.now,
      )
      : await enqueueTaskMessages(prepared, {
        kv: this.#options.kv,
        ttlMs: this.#options.deduplicationTtlMs,
        sink: {
          enqueue: (messages, options) =>
            producer.produce(queue, messages, options, hooks(options)),
          enqueueDeduplicated: (message, options) =>
            producer.produceDeduplicated(queue, message, options, hooks(options)),
        },
      });
    const deduplicated = results.filter((result) => result.status === "deduplicated").length;
    if (prepared.messages.length > 0) {
      this.#options.metrics.recordDeduplicated(prepared.messages[0].taskName, deduplicated);
      if (prepared.flow?.kind === "throttle") {
        this.#options.metrics.recordThrottled(
          prepared.messages[0].taskName,
          results.filter((result) => result.status === "throttled").length,
        );
      }
    }
    if (this.#enqueuedObservers.size > 0) {
      const enqueued = prepared.messages.filter((_, index) =>
        results[index]?.status === "enqueued" || results[index]?.status === "debounced"
      );
      if (enqueued.length > 0) {
        for (const observer of [...this.#enqueuedObservers]) await observer(enqueued);
      }
    }
    return results;
  }

  /**
   * Prepares task messages from payloads (validated, encoded, routed) and
   * enqueues them: what `ctx.enqueueTask()` and `ctx.enqueueTaskMany()` do.
   * @param request The task, the payloads, the options and the routing.
   * @param start The context data to start the workers with.
   * @returns One result per payload, in order.
   * @throws What `prepareTaskMessages()` and {@link enqueue} throw.
   * @since 0.4.0
   */
  async enqueuePayloads<TTaskContextData>(
    request: EnqueueTasksOptions<TTaskContextData>,
    start?: { readonly contextData: TContextData },
  ): Promise<TaskEnqueueResult[]> {
    const now = this.#options.now;
    return await this.enqueue(
      await prepareTaskMessages(now == null ? request : { ...request, now }),
      start,
    );
  }
}

function delayOf(options: MessageQueueEnqueueOptions): number {
  return options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
}
