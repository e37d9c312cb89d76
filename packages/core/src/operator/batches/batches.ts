// Task batches: members enqueued together (and added by members while they
// run), counted done in the key–value store with cas(), and one completion
// task enqueued when the last of them is done.
//
// Exactly once, across workers and crashes, rests on three things:
// - a member is counted done by the dispatcher's observer, which runs
//   before the queue is acknowledged: a worker killed before it counted
//   leaves the message to be delivered again, and one killed after it
//   counted leaves a redelivery that finds the member already done (the
//   count is a state per member id, not an increment);
// - the swap that counts the last member also moves the batch to
//   "calling", and whoever sees "calling" (the counter, or a redelivered
//   member after a crash) enqueues the completion task under the batch's
//   deduplication key, which is held until that task finishes;
// - the completion task, when it starts, moves the batch to "called" with
//   its own id; a second completion message (possible only if a
//   redelivered member enqueued one after the first had finished) finds
//   another id there and is dropped before its handler runs.
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import type { MessageObserver } from "../../processing/dispatcher.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import { MalformedMessageError } from "../../processing/errors.ts";
import type { MessageEvent } from "../../processing/events.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../../tasks/definition.ts";
import { type PreparedTaskMessages, prepareTaskMessages } from "../../tasks/enqueue.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import type { InternalTaskPort } from "../internal-tasks/internal-tasks.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { BatchSealedError } from "./errors.ts";
import {
  addMembers,
  batchKvKey,
  type BatchRecord,
  isBatchRecord,
  jsonCopy,
  type MemberState,
  seededUuid,
  statusOf,
  swapBatchRecord,
} from "./record.ts";
import type {
  BatchCompletion,
  BatchEnqueueResult,
  BatchMember,
  BatchStatus,
  BatchStatusOperations,
  EnqueueBatchOptions,
  WatchBatchOptions,
} from "./types.ts";

const logger = getLogger(["fedwork", "batch"]);

/**
 * The pub/sub topic a batch's id is published on whenever its record
 * changes.
 * @since 0.3.0
 */
export const BATCH_UPDATES_TOPIC = "fedwork:batch-updates";

/** How often `watchBatch()` rereads a record when no update arrives. */
const WATCH_RECHECK_MS = 1_000;

/**
 * Where an enqueue into a batch comes from, so that a task run again after
 * a crash adds the same ids rather than new ones.  Internal.
 * @since 0.3.0
 */
export interface BatchEnqueueOrigin {
  /** The base URL of the enqueuing context. */
  readonly baseUrl: URL;
  /**
   * A string unique to this call of this run (the running task's id and
   * the call's number within the run), from which the batch's and the
   * members' ids are derived; absent outside tasks (random ids).
   */
  readonly seed?: string;
  /** Puts prepared task messages into their queue. */
  readonly enqueue: (prepared: PreparedTaskMessages) => Promise<TaskEnqueueResult[]>;
}

/**
 * What {@link FederationBatches} needs from the federation.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.3.0
 */
export interface FederationBatchesOptions<TContextData> {
  /** Where batch records are kept; it must have `cas()`. */
  readonly kv: KvStore;
  /** Where changes are announced. */
  readonly pubsub: PubSub;
  /** The tasks, their routing and the task enqueuer. */
  readonly internalTasks: InternalTaskPort<TContextData>;
  /** Adds an observer of the dispatcher's events. */
  readonly observe: (observer: MessageObserver) => () => void;
  /** How long a record is kept after the completion task started. */
  readonly retentionMs: number;
}

/**
 * Task batches for a federation: creates them, counts their members done,
 * enqueues their completion task and reports their progress.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.3.0
 */
export class FederationBatches<TContextData> implements BatchStatusOperations {
  readonly #options: FederationBatchesOptions<TContextData>;

  /** @param options The store, pub/sub, tasks and dispatcher. */
  constructor(options: FederationBatchesOptions<TContextData>) {
    this.#options = options;
    // Most messages are no batch's members: they return here at once,
    // without a promise.
    options.observe((attempt) => {
      const batch = (attempt.message as Partial<TaskMessage>).batch;
      if (batch?.role !== "member" || typeof batch.id !== "string") return;
      return this.#observed(attempt.event, attempt.message);
    });
  }

  /**
   * Creates a batch and enqueues its members.  The record, listing every
   * member as pending, is written before any member is enqueued, so the
   * batch cannot complete before this call has enqueued them all.
   * @param members The members.
   * @param options The completion task and its data.
   * @param origin Where the call comes from.
   * @returns The batch's id and the members' ids.
   * @throws {TypeError} On a bad member or option.
   */
  async create(
    members: readonly BatchMember<TContextData>[],
    options: EnqueueBatchOptions<TContextData, unknown>,
    origin: BatchEnqueueOrigin,
  ): Promise<BatchEnqueueResult> {
    const kv = this.#requireCas();
    if (options == null || typeof options !== "object") {
      throw new TypeError("enqueueBatch() needs options with onComplete.");
    }
    assertKnownOptions(options, ["onComplete", "data"], { where: "enqueueBatch()" });
    const onComplete = this.#options.internalTasks.tasks.resolve(
      options.onComplete as TaskDefinition<TContextData, unknown, unknown>,
    );
    if (onComplete == null) {
      throw new TypeError(
        "The onComplete option of enqueueBatch() must be a task defined on this federation.",
      );
    }
    const data = jsonCopy(options.data ?? null, "The data option of enqueueBatch()");
    const batchId = origin.seed == null ? crypto.randomUUID() : await seededUuid(origin.seed);
    // The completion task's payload is checked now, with zero counts, so
    // that a schema it does not satisfy fails here rather than at the end.
    await this.#prepareCompletion(onComplete.definition, {
      batchId,
      total: 0,
      completed: 0,
      failed: 0,
      failedIds: [],
      data,
    }, origin.baseUrl.href);
    const prepared = await this.#prepareMembers(members, batchId, origin, "enqueueBatch()");
    const ids = prepared.flatMap((group) => group.messages.map((message) => message.id));
    const now = new Date().toISOString();
    const record = await swapBatchRecord(kv, batchId, (current) => {
      if (current == null) {
        return {
          id: batchId,
          baseUrl: origin.baseUrl.href,
          onComplete: onComplete.name,
          data,
          members: Object.fromEntries(ids.map((id) => [id, "p" as const])),
          state: "open",
          createdAt: now,
          updatedAt: now,
        };
      }
      // The same call of a task run again: add what is missing.
      return addMembers(current, ids, now);
    });
    await this.#enqueuePending(prepared, record!, origin);
    await this.#publish(batchId);
    logger.debug("Created batch {batchId} with {count} member(s).", {
      batchId,
      count: ids.length,
      onComplete: onComplete.name,
    });
    return { batchId, memberIds: ids };
  }

  /**
   * Adds members to the batch of a running member.  The additions are
   * recorded as pending before the adding member can be counted done, so
   * the batch stays open for them.
   * @param batchId The batch.
   * @param memberId The running member that adds.
   * @param members The new members.
   * @param origin Where the call comes from.
   * @returns The batch's id and the new members' ids.
   * @throws {BatchSealedError} When the adding member is already counted
   *         done (a run of a member whose earlier run finished).
   */
  async add(
    batchId: string,
    memberId: string,
    members: readonly BatchMember<TContextData>[],
    origin: BatchEnqueueOrigin,
  ): Promise<BatchEnqueueResult> {
    const kv = this.#requireCas();
    const prepared = await this.#prepareMembers(members, batchId, origin, "addToBatch()");
    const ids = prepared.flatMap((group) => group.messages.map((message) => message.id));
    const now = new Date().toISOString();
    const record = await swapBatchRecord(kv, batchId, (current) => {
      if (current == null) throw new BatchSealedError(batchId, "it does not exist any more");
      const fresh = ids.filter((id) => current.members[id] === undefined);
      if (fresh.length > 0 && current.members[memberId] !== "p") {
        throw new BatchSealedError(
          batchId,
          `its member ${memberId} is already done; only a running member may add members`,
        );
      }
      return addMembers(current, ids, now);
    });
    await this.#enqueuePending(prepared, record!, origin);
    await this.#publish(batchId);
    return { batchId, memberIds: ids };
  }

  /**
   * Called right before a task's handler runs: a batch's completion task
   * marks the batch `completed`, or is dropped when another completion
   * task of the same batch already started.
   * @param message The task message.
   * @throws {MalformedMessageError} For a second completion task.
   */
  async starting(message: TaskMessage): Promise<void> {
    const batch = message.batch;
    if (batch?.role !== "completion" || this.#options.kv.cas == null) return;
    let duplicate = false;
    await swapBatchRecord(this.#options.kv, batch.id, (current) => {
      if (current == null) return undefined;
      if (current.state === "called") {
        duplicate = current.completionTaskId !== message.id;
        return undefined;
      }
      return {
        ...current,
        state: "called",
        completionTaskId: message.id,
        updatedAt: new Date().toISOString(),
      };
    }, { retentionMs: this.#options.retentionMs });
    if (duplicate) {
      throw new MalformedMessageError(
        `another completion task of batch ${batch.id} already started`,
        { level: "warning" },
      );
    }
    await this.#publish(batch.id);
  }

  async getBatchStatus(id: string): Promise<BatchStatus | undefined> {
    const value = await this.#options.kv.get(batchKvKey(id));
    return isBatchRecord(value) ? statusOf(value) : undefined;
  }

  async *watchBatch(id: string, options: WatchBatchOptions = {}): AsyncIterable<BatchStatus> {
    assertKnownOptions(options, ["signal"], { where: "watchBatch()" });
    const { signal } = options;
    if (signal?.aborted) return;
    let wake: (() => void) | undefined;
    const subscription = new AbortController();
    const onAbort = () => {
      subscription.abort();
      wake?.();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await this.#options.pubsub.subscribe(BATCH_UPDATES_TOPIC, (payload) => {
        if (payload === id) wake?.();
      }, { signal: subscription.signal });
      let last = "";
      while (!signal?.aborted) {
        const woken = new Promise<void>((resolve) => wake = resolve);
        const status = await this.getBatchStatus(id);
        if (status == null) return;
        const fingerprint = `${status.state}:${status.completed}:${status.failed}:${status.total}`;
        if (fingerprint !== last) {
          last = fingerprint;
          yield status;
        }
        if (status.state === "completed") return;
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          woken,
          new Promise<void>((resolve) => timer = setTimeout(resolve, WATCH_RECHECK_MS)),
        ]);
        clearTimeout(timer);
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      subscription.abort();
    }
  }

  #requireCas(): KvStore {
    const { kv } = this.#options;
    if (kv.cas == null) {
      throw new TypeError(
        "Task batches need a key–value store with cas() (MemoryKvStore, SqliteKvStore, " +
          "RedisKvStore and PostgresKvStore have it); the federation's kv has none.",
      );
    }
    return kv;
  }

  async #prepareMembers(
    members: readonly BatchMember<TContextData>[],
    batchId: string,
    origin: BatchEnqueueOrigin,
    where: string,
  ): Promise<PreparedTaskMessages[]> {
    if (!Array.isArray(members)) throw new TypeError(`The members of ${where} must be an array.`);
    const { tasks, routing } = this.#options.internalTasks;
    const prepared: PreparedTaskMessages[] = [];
    let index = 0;
    for (const member of members) {
      if (member == null || typeof member !== "object") {
        throw new TypeError(`Member ${index} of ${where} must be an object with task and data.`);
      }
      assertKnownOptions(member, ["task", "data", "options"], { where: `${where}'s member` });
      const memberOptions = member.options ?? {};
      assertKnownOptions(
        memberOptions,
        ["delay", "orderingKey", "priority", "capabilities"],
        { where: `${where}'s member options` },
      );
      const group = await prepareTaskMessages({
        registry: tasks,
        task: member.task as TaskDefinition<TContextData, unknown, unknown>,
        payloads: [member.data],
        options: memberOptions,
        queues: routing,
        baseUrl: origin.baseUrl,
      });
      for (let i = 0; i < group.messages.length; i++) {
        const id = origin.seed == null
          ? group.messages[i].id
          : await seededUuid(`${origin.seed}:${index}`);
        group.messages[i] = {
          ...group.messages[i],
          id,
          batch: { id: batchId, role: "member" },
        };
      }
      prepared.push(group);
      index++;
    }
    return prepared;
  }

  async #enqueuePending(
    prepared: readonly PreparedTaskMessages[],
    record: BatchRecord,
    origin: BatchEnqueueOrigin,
  ): Promise<void> {
    // Messages of the same queue and options go together, in one enqueue.
    const groups: PreparedTaskMessages[] = [];
    for (const group of prepared) {
      const messages = group.messages.filter((message) => record.members[message.id] === "p");
      if (messages.length === 0) continue;
      const last = groups.at(-1);
      if (
        last != null && last.queue === group.queue &&
        JSON.stringify(last.queueOptions) === JSON.stringify(group.queueOptions)
      ) {
        last.messages.push(...messages);
      } else {
        groups.push({ ...group, messages: [...messages] });
      }
    }
    for (const group of groups) await origin.enqueue(group);
  }

  async #prepareCompletion(
    task: TaskDefinition<TContextData, unknown, unknown>,
    completion: BatchCompletion,
    baseUrl: string,
  ): Promise<PreparedTaskMessages> {
    const { tasks, routing } = this.#options.internalTasks;
    const prepared = await prepareTaskMessages({
      registry: tasks,
      task,
      payloads: [completion],
      options: { deduplicationKey: `fedwork:batch:${completion.batchId}` },
      queues: routing,
      baseUrl,
    });
    prepared.messages[0] = {
      ...prepared.messages[0],
      batch: { id: completion.batchId, role: "completion" },
    };
    return prepared;
  }

  async #observed(event: MessageEvent, message: BaseMessage): Promise<void> {
    const batch = (message as Partial<TaskMessage>).batch;
    if (batch?.role !== "member" || typeof batch.id !== "string") return;
    let state: MemberState;
    if (event.type === "completed") state = "c";
    else if (event.type === "retrying" || event.type === "unhandled") return;
    else state = "f";
    const kv = this.#options.kv;
    if (kv.cas == null) return;
    // The count must land before the queue is acknowledged: a store error
    // is tried again a few times rather than left to the observer's log.
    for (let attempt = 0;; attempt++) {
      try {
        await this.#memberDone(kv, batch.id, message.id, state);
        return;
      } catch (error) {
        if (attempt >= 4) {
          logger.error(
            "Could not count member {messageId} of batch {batchId} done; the batch will not " +
              "complete: {error}",
            { batchId: batch.id, messageId: message.id, error },
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
  }

  async #memberDone(
    kv: KvStore,
    batchId: string,
    memberId: string,
    state: MemberState,
  ): Promise<void> {
    const record = await swapBatchRecord(kv, batchId, (current) => {
      if (current == null) return undefined;
      const known = current.members[memberId];
      let next = current;
      if (known === "p") {
        next = {
          ...current,
          members: { ...current.members, [memberId]: state },
          updatedAt: new Date().toISOString(),
        };
      } else if (known === undefined) {
        logger.warn("Member {messageId} is not in batch {batchId}; not counted.", {
          batchId,
          messageId: memberId,
        });
        return undefined;
      }
      if (next.state === "open" && !Object.values(next.members).includes("p")) {
        next = { ...next, state: "calling" };
      }
      return next === current ? undefined : next;
    });
    if (record == null) return;
    // Also when this member had been counted already: its earlier run may
    // have died between counting the last member and enqueueing the
    // completion task.  The deduplication key makes a second enqueue a
    // no-op while the completion task is queued or running.
    if (record.state === "calling") await this.#enqueueCompletion(record);
    await this.#publish(batchId);
  }

  async #enqueueCompletion(record: BatchRecord): Promise<void> {
    const task = this.#options.internalTasks.tasks.get(record.onComplete);
    if (task == null) {
      logger.error(
        "The completion task {taskName} of batch {batchId} is not defined on this federation.",
        { batchId: record.id, taskName: record.onComplete },
      );
      return;
    }
    const failedIds = Object.entries(record.members)
      .filter(([, state]) => state === "f")
      .map(([id]) => id);
    const total = Object.keys(record.members).length;
    const prepared = await this.#prepareCompletion(task.definition, {
      batchId: record.id,
      total,
      completed: total - failedIds.length,
      failed: failedIds.length,
      failedIds,
      data: record.data,
    }, record.baseUrl);
    const [result] = await this.#options.internalTasks.taskEnqueuer.enqueue(prepared);
    logger.info("Batch {batchId} is done: {completed} completed, {failed} failed; {outcome}.", {
      batchId: record.id,
      completed: total - failedIds.length,
      failed: failedIds.length,
      outcome: result?.status === "enqueued"
        ? "its completion task is enqueued"
        : "its completion task was already enqueued",
    });
  }

  async #publish(batchId: string): Promise<void> {
    try {
      await this.#options.pubsub.publish(BATCH_UPDATES_TOPIC, batchId);
    } catch (error) {
      logger.debug("Could not publish an update of batch {batchId}: {error}", { batchId, error });
    }
  }
}
