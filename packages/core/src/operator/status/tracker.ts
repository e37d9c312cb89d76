import type { TaskStepsStatus } from "../../tasks/steps/types.ts";
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import type { ObservedAttempt } from "../../processing/observed-attempt.ts";
import { RunPostponedError } from "../../processing/run-postponed.ts";
import { hasInProcessSubscriber, InProcessPubSub } from "../../pubsub/in-process-pubsub.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import type { TaskDefinition } from "../../tasks/definition.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import { taskResultOf } from "../../tasks/result.ts";
import {
  decodeTaskUpdate,
  encodeTaskUpdate,
  isTerminalTaskState,
  type TaskState,
  type TaskStatus,
  TaskStatusStore,
  type TaskUpdate,
} from "./store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { describeError } from "../../processing/error-description.ts";
import type { MessageRunner, MessageRunners } from "../../processing/message-runners.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * The pub/sub topic every task update is published on; the payload is the
 * update as JSON, carrying the task's id.
 * @since 0.2.0
 */
export const TASK_UPDATES_TOPIC = "fedwork:task-updates";

/**
 * How long `watchTask()` waits for an update before it reads the task's
 * record, in case an update was lost (pub/sub is best effort).
 */
const WATCH_RECHECK_MS = 5_000;

/**
 * How long the `running` record of a started task waits before it is
 * written.  A task that ends (or reports progress) sooner never has it
 * written: its next record replaces it.  Most tasks take less, so this
 * saves one of the three writes a task costs (`queued`, `running`, how it
 * ended) and takes the write off the path between a claim and the handler.
 * Watchers still hear of the start at once.
 */
const RUNNING_RECORD_DELAY_MS = 50;

/**
 * How many record writes may be in flight before the end of another task
 * waits for some of them: how far the records may fall behind the tasks
 * when the store is slower than the workers.
 */
const MAX_WRITES_IN_FLIGHT = 1_000;

/** How many empty slots the tracker keeps before it removes them. */
const EMPTY_SLOTS_SWEPT = 256;

/** A settled promise, for the paths that have nothing to wait for. */
const RESOLVED: Promise<void> = Promise.resolve();

/** How long stopping workers wait for the records still being written. */
const FLUSH_TIMEOUT_MS = 10_000;

/**
 * Options for `watchTask()` and `watchTasks()`.
 * @since 0.2.0
 */
export interface WatchTaskOptions {
  /** Ends the iteration (and the subscription) when it aborts. */
  readonly signal?: AbortSignal;
}

/**
 * Task status and progress for the federation: `getTaskStatus()`,
 * `watchTask()` and `watchTasks()`.  `Federation` has these methods.
 * @since 0.2.0
 */
export interface TaskStatusOperations {
  /**
   * Reads a task's status record: its state, attempt, last progress and
   * last error.  Records are kept in the key–value store for
   * `taskStatusRetention` (1 day by default) after their last change.
   * A started task's `running` record reaches the store 50 ms after the
   * start, and only if the task still runs (a quicker task goes from
   * `queued` to how it ended), so other processes may read `queued` for
   * that long; the worker's own process sees it at once.
   * @param id The task's id (`enqueueTask()`'s `messageId`).
   * @returns The status, or `undefined` when there is none.
   * @example
   * ```ts
   * const result = await ctx.enqueueTask(resizeImages, { album: "a1" });
   * if (result.status === "enqueued") {
   *   const status = await federation.getTaskStatus(result.messageId);
   *   console.log(status?.state, status?.progress?.percent);
   * }
   * ```
   */
  getTaskStatus(id: string): Promise<TaskStatus | undefined>;

  /**
   * Reads the status record of a task of `task`, typed with its handler's
   * result: the same as `getTaskStatus(id)`, but `status.result` has the
   * type the handler returns.  The record's task name is not checked
   * against `task`.
   * @param task The task's handle, as `defineTask()` returned it.
   * @param id The task's id (`enqueueTask()`'s `messageId`).
   * @returns The status, or `undefined` when there is none.
   * @example
   * ```ts ignore
   * const status = await federation.getTaskStatus(resizeImages, result.messageId);
   * status?.result?.sizes; // typed from resizeImages' handler
   * ```
   * @since 0.3.0
   */
  getTaskStatus<TResult>(
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, unknown, TResult>,
    id: string,
  ): Promise<TaskStatus<TResult> | undefined>;

  /**
   * Watches one task: yields its current status first (when it has one),
   * then each change of state and each progress report, live, from any
   * process sharing the federation's `pubsub`; ends after a terminal state
   * (`completed`, `failed`, `dropped`, `cancelled`) or when
   * `options.signal` aborts.
   * Subscribes on the first `next()` and unsubscribes when the iteration
   * ends, breaks or aborts.  After 5 seconds without an update it reads
   * the task's record, so an update lost by the transport (pub/sub is
   * best effort) cannot leave it waiting forever.
   * @param id The task's id.
   * @param options The signal that stops watching.
   * @returns The updates.
   * @example
   * ```ts
   * for await (const update of federation.watchTask(id)) {
   *   console.log(update.status.state, update.status.progress?.percent);
   * }
   * ```
   */
  watchTask(id: string, options?: WatchTaskOptions): AsyncIterable<TaskUpdate>;

  /**
   * Watches one task of `task`, as `watchTask(id, options)` does, with the
   * updates' `status.result` typed as the handler returns it.
   * @param task The task's handle, as `defineTask()` returned it.
   * @param id The task's id.
   * @param options The signal that stops watching.
   * @returns The updates.
   * @since 0.3.0
   */
  watchTask<TResult>(
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, unknown, TResult>,
    id: string,
    options?: WatchTaskOptions,
  ): AsyncIterable<TaskUpdate<TResult>>;

  /**
   * Watches every task until `options.signal` aborts (or the loop breaks):
   * each change of state and each progress report, live.
   * @param options The signal that stops watching.
   * @returns The updates.
   */
  watchTasks(options?: WatchTaskOptions): AsyncIterable<TaskUpdate>;
}

/**
 * Keeps task status records and publishes their changes: called when tasks
 * are enqueued, start and report progress, and observing the dispatcher for
 * how each attempt ended.  A failure to store or publish is logged and
 * never changes what happens to the task.  Internal.
 * @since 0.2.0
 */
export class TaskStatusTracker implements TaskStatusOperations {
  readonly #records: TaskStatusStore;
  readonly #pubsub: PubSub;
  readonly #retentionMs: number;
  readonly #runners: MessageRunners | undefined;
  /**
   * What this process keeps of each task it runs or writes a record of,
   * by task id, in the order they were first seen: one map for the three
   * things a task may have (a status while it runs, a `running` record
   * not written yet, a write in flight), so that a task costs one entry
   * set and one deleted rather than six map writes.
   */
  readonly #tasks = new Map<string, TaskSlot>();
  /** How many tasks have a write in flight. */
  #writesInFlight = 0;
  /** How many slots were left empty since the last sweep (see #emptied()). */
  #empty = 0;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param kv Where records are kept.
   * @param pubsub Where changes are published.
   * @param retentionMs How long a record is kept after its last change;
   *                    `0` keeps none and publishes nothing.
   * @param runners Which worker of this process runs each task, for the
   *                records' `workerId` and `machineId` (since 0.4.0).
   */
  constructor(kv: KvStore, pubsub: PubSub, retentionMs: number, runners?: MessageRunners) {
    this.#records = new TaskStatusStore(kv);
    this.#pubsub = pubsub;
    this.#retentionMs = retentionMs;
    this.#runners = runners;
  }

  /** Whether records are kept at all. */
  get enabled(): boolean {
    return this.#retentionMs > 0;
  }

  /**
   * Records freshly enqueued tasks as `queued`.
   * @param messages The task messages.
   * @param delayMs Their delay, which lengthens the record's TTL.
   */
  async queued(messages: readonly TaskMessage[], delayMs: number): Promise<void> {
    if (!this.enabled) return;
    const now = new Date();
    await Promise.all(messages.map((message) =>
      this.#write(
        {
          id: message.id,
          name: message.taskName,
          state: "queued",
          attempt: message.attempt,
          updatedAt: now,
        },
        "state",
        delayMs,
      )
    ));
  }

  /**
   * Forgets the `queued` records of messages that were not enqueued after
   * all (a failed enqueue, a deduplicated one).
   * @param ids The messages' ids.
   */
  async forget(ids: readonly string[]): Promise<void> {
    if (!this.enabled) return;
    await Promise.all(ids.map((id) => this.#records.delete(id).catch(() => {})));
  }

  /**
   * Records that a task started an attempt, keeping the progress of an
   * earlier attempt.
   * @param message The task message.
   * @returns Settles once published (never rejects), or `undefined` when
   *          there is nothing to wait for (the usual case).
   */
  started(message: TaskMessage): Promise<void> | undefined {
    if (!this.enabled) return undefined;
    // Not async: on every task run, the usual first attempt needs no
    // promise of its own.
    const previous = this.#tasks.get(message.id)?.running;
    if (previous == null && message.attempt > 0) {
      return this.#read(message.id).catch(() => undefined).then((read) =>
        this.#start(message, read)
      );
    }
    return this.#start(message, previous);
  }

  /**
   * Keeps a started task's `running` record (written later, see
   * {@link RUNNING_RECORD_DELAY_MS}) and publishes it.
   * @param message The task message.
   * @param previous The task's record before this attempt, if known.
   * @returns Settles once published (never rejects), or `undefined` when
   *          nothing was published.
   */
  #start(message: TaskMessage, previous: TaskStatus | undefined): Promise<void> | undefined {
    const status: { -readonly [K in keyof TaskStatus]: TaskStatus[K] } = {
      id: message.id,
      name: message.taskName,
      state: "running",
      attempt: message.attempt,
      updatedAt: new Date(),
    };
    if (previous?.progress != null) status.progress = previous.progress;
    if (previous?.steps != null) status.steps = previous.steps;
    setRunner(status, this.#runners?.of(message.id));
    const slot = this.#slot(message.id);
    slot.running = status;
    slot.unwritten = status;
    this.#flushTimer ??= setTimeout(() => this.#writeRunning(), RUNNING_RECORD_DELAY_MS);
    return this.#publish(status, "state");
  }

  /**
   * Starts writing the `running` records still waiting (the started tasks
   * that have neither ended nor reported progress): a timer calls it
   * {@link RUNNING_RECORD_DELAY_MS} after a start.
   */
  #writeRunning(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    for (const slot of this.#tasks.values()) {
      const status = slot.unwritten;
      if (status == null) continue;
      slot.unwritten = undefined;
      void this.#storeInOrder(slot, status);
    }
  }

  /**
   * Writes every record this process has not written yet: the waiting
   * `running` ones and those being written in the background.  Workers
   * call it when they stop.
   * @param timeoutMs How long to wait for the store; what is still not
   *                  written then is logged and left.
   */
  async flush(timeoutMs = FLUSH_TIMEOUT_MS): Promise<void> {
    this.#writeRunning();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    try {
      while (this.#writesInFlight > 0) {
        const writes: Promise<void>[] = [];
        for (const slot of this.#tasks.values()) {
          if (slot.writing != null) writes.push(slot.writing.done);
        }
        if (await Promise.race([Promise.all(writes), timedOut]) === true) {
          logger.warn(
            "Gave up waiting for the key–value store to write the status records of " +
              "{count} tasks.",
            { count: this.#writesInFlight },
          );
          return;
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Records that a task not running was cancelled (`cancelTask()`): its
   * record says `cancelled` at once, before a worker takes it off its
   * queue.
   * @param status The task's record as read.
   * @param reason The reason given, if any.
   * @since 0.3.0
   */
  async cancelled(status: TaskStatus, reason: string | undefined): Promise<void> {
    if (!this.enabled) return;
    const { error: _error, ...rest } = status;
    await this.#write({
      ...rest,
      state: "cancelled",
      ...(reason == null ? {} : { reason }),
      updatedAt: new Date(),
    }, "state");
  }

  /** How long records are kept after their last change, in milliseconds. */
  get retentionMs(): number {
    return this.#retentionMs;
  }

  /**
   * Records and publishes a checked progress report.
   * @param message The task message.
   * @param progress The percent and data.
   */
  async progress(
    message: TaskMessage,
    progress: { readonly percent?: number; readonly data?: unknown },
  ): Promise<void> {
    if (!this.enabled) return;
    const now = new Date();
    const slot = this.#tasks.get(message.id);
    const status: TaskStatus = {
      id: message.id,
      name: message.taskName,
      state: "running",
      attempt: message.attempt,
      progress: { ...progress, at: now },
      ...(slot?.running?.steps == null ? {} : { steps: slot.running.steps }),
      ...runnerFields(this.#runners?.of(message.id) ?? slot?.running),
      updatedAt: now,
    };
    if (slot?.running != null) slot.running = status;
    await this.#write(status, "progress");
  }

  /**
   * Records where a task's durable steps are: written (and published as a
   * `"step"` update) when `write`, else kept for the next record of the
   * run (its end).
   * @param message The task's message.
   * @param steps The steps' status.
   * @param write Whether to write it now.
   * @since 0.4.0
   */
  async step(message: TaskMessage, steps: TaskStepsStatus, write: boolean): Promise<void> {
    if (!this.enabled) return;
    const slot = this.#tasks.get(message.id);
    const running = slot?.running;
    const status: TaskStatus = {
      id: message.id,
      name: message.taskName,
      state: "running",
      attempt: message.attempt,
      ...(running?.progress == null ? {} : { progress: running.progress }),
      steps,
      ...runnerFields(this.#runners?.of(message.id) ?? running),
      updatedAt: new Date(),
    };
    if (running != null) slot!.running = status;
    if (write) await this.#write(status, "step");
  }

  /**
   * The dispatcher observer: records how each task attempt ended.  It reads
   * the message and its outcome, never the event: it runs for every task,
   * and no event need be built for it.
   * @param attempt The attempt.
   */
  // Not async: it returns at once for every message that is not a task, and
  // waits for the store only when it falls far behind.
  readonly observe = (attempt: ObservedAttempt): Promise<void> | undefined => {
    const { message, outcome, taskName } = attempt;
    if (!this.enabled || message.type !== "task" || taskName == null) return;
    // A task message always has its handler; only inbox messages go unhandled.
    if (outcome.type === "unhandled") return;
    // A run waiting for its concurrency key or rate waits often, by design:
    // it stays as it was (enqueued), and costs no store write per wait.
    if (
      outcome.type === "retrying" && outcome.error instanceof RunPostponedError &&
      (outcome.error.waitFor === "concurrency" || outcome.error.waitFor === "rate")
    ) return;
    const slot = this.#tasks.get(message.id);
    const previous = slot?.running;
    if (slot != null && outcome.type !== "retrying") slot.running = undefined;
    const error = "error" in outcome && outcome.error !== undefined
      ? describeError(outcome.error)
      : undefined;
    const state: TaskState = outcome.type;
    const result = state === "completed" ? taskResultOf(message) : undefined;
    // Written in the background: the message is acknowledged without
    // waiting for the store, which would otherwise cost every task a round
    // trip to it (see flush() for stopping workers).  Only when the store
    // falls far behind does a task wait for it.
    // Field by field: a spread per optional field built an object each, for
    // every task.
    const status: { -readonly [K in keyof TaskStatus]: TaskStatus[K] } = {
      id: message.id,
      name: taskName,
      state,
      attempt: message.attempt,
      updatedAt: new Date(),
    };
    if (previous?.progress != null) status.progress = previous.progress;
    if (previous?.steps != null) status.steps = previous.steps;
    if (error != null) status.error = error;
    if (result?.result !== undefined) status.result = result.result;
    if (result?.omitted != null) status.resultOmitted = result.omitted;
    if ((outcome.type === "cancelled" || outcome.type === "dropped") && outcome.reason != null) {
      status.reason = outcome.reason;
    }
    setRunner(status, this.#runners?.of(message.id) ?? previous);
    const written = this.#write(status, "state", 0, slot);
    return this.#writesInFlight > MAX_WRITES_IN_FLIGHT ? written : undefined;
  };

  /**
   * Stores and publishes a record.
   * @param slot The task's slot, when the caller has it at hand.
   */
  #write(
    status: TaskStatus,
    kind: TaskUpdate["kind"],
    extraTtlMs = 0,
    slot = this.#slot(status.id),
  ): Promise<void> {
    // This record replaces a `running` one not written yet.
    slot.unwritten = undefined;
    // Stored and published at once: a watcher that gets the update before
    // the record lands reads an older record first and keeps the update.
    const stored = this.#storeInOrder(slot, status, extraTtlMs);
    const published = this.#publish(status, kind);
    return published === undefined ? stored : Promise.all([stored, published]).then(() => {});
  }

  /**
   * Counts a slot left with nothing in it, and removes the empty ones once
   * there are {@link EMPTY_SLOTS_SWEPT} of them: deleting each from the map
   * as it emptied, one per task, made the map rebuild its table every few
   * tasks.  An empty slot found again (a task retried here) is as good as
   * a new one.
   */
  #emptied(): void {
    if (++this.#empty < EMPTY_SLOTS_SWEPT) return;
    this.#empty = 0;
    for (const [id, slot] of this.#tasks) {
      if (slot.running == null && slot.unwritten == null && slot.writing == null) {
        this.#tasks.delete(id);
      }
    }
  }

  /** The task's slot, added when it has none. */
  #slot(id: string): TaskSlot {
    let slot = this.#tasks.get(id);
    if (slot == null) {
      slot = { id, running: undefined, unwritten: undefined, writing: undefined };
      this.#tasks.set(id, slot);
    }
    return slot;
  }

  /**
   * Stores a record once the task's earlier writes have landed, so that
   * an older record never overwrites a newer one (a store may run two
   * writes at once on two connections).
   * @param slot The task's slot, which is in `#tasks`.
   */
  #storeInOrder(slot: TaskSlot, status: TaskStatus, extraTtlMs = 0): Promise<void> {
    const before = slot.writing?.done;
    if (before === undefined) {
      // Most records have no earlier write in flight (a task's `queued`
      // record was written at the enqueue): store at once, and with a
      // store that writes at once (a MemoryKvStore), be done.
      let stored: Promise<void> | undefined;
      try {
        stored = this.#store(status, extraTtlMs);
      } catch (error) {
        stored = Promise.reject(error);
      }
      if (stored === undefined) {
        if (slot.running == null && slot.unwritten == null) this.#emptied();
        return RESOLVED;
      }
      return this.#track(slot, status, stored);
    }
    return this.#track(slot, status, before.then(() => this.#store(status, extraTtlMs)));
  }

  /**
   * Keeps a write in flight as the task's last one until it lands, so that
   * a later write waits for it and reads see it.
   * @param slot The task's slot, which is in `#tasks`.
   * @param status The status being written.
   * @param stored Settles once written.
   * @returns Settles once written (never rejects).
   */
  #track(slot: TaskSlot, status: TaskStatus, stored: Promise<void>): Promise<void> {
    const write: { readonly status: TaskStatus; done: Promise<void> } = { status, done: RESOLVED };
    // One then() that both logs a failure and forgets the write: this runs
    // for every record.  Never rejects.
    const forget = () => {
      if (slot.writing !== write) return;
      slot.writing = undefined;
      this.#writesInFlight--;
      if (slot.running == null && slot.unwritten == null) this.#emptied();
    };
    const failed = (error: unknown) => {
      logger.warn("Could not store the status of task {messageId}: {error}", {
        messageId: slot.id,
        error,
      });
      forget();
    };
    write.done = stored.then(forget, failed);
    if (slot.writing === undefined) this.#writesInFlight++;
    slot.writing = write;
    return write.done;
  }

  /**
   * Stores a record.
   * @returns Settles once written, or `undefined` when written already.
   */
  #store(status: TaskStatus, extraTtlMs = 0): Promise<void> | undefined {
    return this.#records.write(status, this.#retentionMs + extraTtlMs);
  }

  /**
   * Publishes an update; a failure is logged.
   * @returns Settles once published (never rejects), or `undefined` when
   *          nobody could receive the update and nothing was published.
   */
  #publish(status: TaskStatus, kind: TaskUpdate["kind"]): Promise<void> | undefined {
    // Nobody in this process can receive an in-process update that nobody
    // subscribed to: skip encoding it (the default transport, on every
    // task run).  By topic: the workers' own subscription to cancellation
    // requests on the same transport is no reader of status updates.
    const pubsub = this.#pubsub;
    if (pubsub instanceof InProcessPubSub && !hasInProcessSubscriber(pubsub, TASK_UPDATES_TOPIC)) {
      return undefined;
    }
    return pubsub.publish(TASK_UPDATES_TOPIC, encodeTaskUpdate({ id: status.id, status, kind }))
      .catch((error) => {
        logger.warn("Could not publish the status of task {messageId}: {error}", {
          messageId: status.id,
          error,
        });
      });
  }

  getTaskStatus(id: string): Promise<TaskStatus | undefined>;
  getTaskStatus<TResult>(
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, unknown, TResult>,
    id: string,
  ): Promise<TaskStatus<TResult> | undefined>;
  getTaskStatus(
    taskOrId: string | TaskDefinition<unknown, unknown, unknown>,
    maybeId?: string,
  ): Promise<TaskStatus | undefined> {
    const id = typeof taskOrId === "string" ? taskOrId : maybeId;
    if (typeof id !== "string") {
      return Promise.reject(new TypeError("getTaskStatus() needs a task id (a string)."));
    }
    return this.#read(id);
  }

  /** A task's record, including one this process has not written yet. */
  #read(id: string): Promise<TaskStatus | undefined> {
    const slot = this.#tasks.get(id);
    const known = slot?.unwritten ?? slot?.writing?.status;
    return known == null ? this.#records.get(id) : Promise.resolve(known);
  }

  watchTask(id: string, options?: WatchTaskOptions): AsyncIterable<TaskUpdate>;
  watchTask<TResult>(
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, unknown, TResult>,
    id: string,
    options?: WatchTaskOptions,
  ): AsyncIterable<TaskUpdate<TResult>>;
  watchTask(
    taskOrId: string | TaskDefinition<unknown, unknown, unknown>,
    idOrOptions?: string | WatchTaskOptions,
    maybeOptions?: WatchTaskOptions,
  ): AsyncIterable<TaskUpdate> {
    const byTask = typeof taskOrId !== "string";
    const id = byTask ? idOrOptions : taskOrId;
    const options = (byTask ? maybeOptions : idOrOptions as WatchTaskOptions | undefined) ?? {};
    if (typeof id !== "string" || id === "") {
      throw new TypeError("watchTask() needs a task id (a non-empty string).");
    }
    checkSignal(options, "watchTask");
    return this.#watch(id, options.signal);
  }

  watchTasks(options: WatchTaskOptions = {}): AsyncIterable<TaskUpdate> {
    checkSignal(options, "watchTasks");
    return this.#watch(undefined, options.signal);
  }

  async *#watch(
    id: string | undefined,
    outer: AbortSignal | undefined,
  ): AsyncGenerator<TaskUpdate> {
    if (outer?.aborted) return;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    outer?.addEventListener("abort", onAbort, { once: true });
    const buffer: TaskUpdate[] = [];
    let wake: (() => void) | undefined;
    controller.signal.addEventListener("abort", () => wake?.(), { once: true });
    try {
      await this.#pubsub.subscribe(TASK_UPDATES_TOPIC, (payload) => {
        const update = decodeTaskUpdate(payload);
        if (update == null || (id != null && update.id !== id)) return;
        buffer.push(update);
        wake?.();
      }, { signal: controller.signal });
      let since = -Infinity;
      /** The last status yielded, as {@link statusVersion} puts it. */
      let last: string | undefined;
      if (id != null) {
        const current = await this.#read(id);
        if (current != null) {
          since = current.updatedAt.getTime();
          last = statusVersion(current);
          yield { id, status: current, kind: "state" };
          if (isTerminalTaskState(current.state)) return;
        }
      }
      while (!controller.signal.aborted) {
        const update = buffer.shift();
        if (update == null) {
          // Pub/sub is best effort: when one task is watched and nothing
          // came for a while, read its record in case an update was lost.
          let timer: ReturnType<typeof setTimeout> | undefined;
          let timedOut = false;
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (id != null) {
              timer = setTimeout(() => {
                timedOut = true;
                resolve();
              }, WATCH_RECHECK_MS);
            }
          });
          clearTimeout(timer);
          wake = undefined;
          if (timedOut && id != null && buffer.length === 0) {
            const current = await this.#read(id).catch(() => undefined);
            if (current != null && statusVersion(current) !== last) {
              last = statusVersion(current);
              yield { id, status: current, kind: "state" };
              if (isTerminalTaskState(current.state)) return;
            }
          }
          continue;
        }
        // Published before the snapshot was read: already reflected in it.
        if (update.status.updatedAt.getTime() < since) continue;
        last = statusVersion(update.status);
        yield update;
        if (id != null && isTerminalTaskState(update.status.state)) return;
      }
    } finally {
      outer?.removeEventListener("abort", onAbort);
      controller.abort();
    }
  }
}

/** Sets a status's worker and machine, when there is a runner. */
function setRunner(
  status: { workerId?: string; machineId?: string },
  runner: Partial<MessageRunner> | undefined,
): void {
  if (runner?.workerId == null || runner.machineId == null) return;
  status.workerId = runner.workerId;
  status.machineId = runner.machineId;
}

/** A status's worker and machine fields, for a spread. */
function runnerFields(
  runner: Partial<MessageRunner> | undefined,
): { workerId?: string; machineId?: string } {
  return runner?.workerId == null || runner.machineId == null
    ? {}
    : { workerId: runner.workerId, machineId: runner.machineId };
}

/** What the tracker keeps of one task (see `TaskStatusTracker.#tasks`). */
interface TaskSlot {
  readonly id: string;
  /** Its status while this process runs it. */
  running: TaskStatus | undefined;
  /** Its `running` record, not written yet (see {@link RUNNING_RECORD_DELAY_MS}). */
  unwritten: TaskStatus | undefined;
  /** The last write started for it, and the status it writes. */
  writing: { readonly status: TaskStatus; readonly done: Promise<void> } | undefined;
}

/**
 * What tells two versions of a task's record apart.  Not the time alone:
 * a task that is enqueued, runs and completes within one millisecond has
 * `queued` and `completed` records written at the same time.
 */
function statusVersion(status: TaskStatus): string {
  return `${status.state}/${status.attempt}/${status.updatedAt.getTime()}/${
    status.progress?.at.getTime() ?? ""
  }`;
}

function checkSignal(options: WatchTaskOptions, method: string): void {
  if (options == null || typeof options !== "object") {
    throw new TypeError(`The options of ${method}() must be an object.`);
  }
  assertKnownOptions(options, ["signal"], { where: `${method}()` });
  if (options.signal != null && !(options.signal instanceof AbortSignal)) {
    throw new TypeError(`The signal option of ${method}() must be an AbortSignal.`);
  }
}
