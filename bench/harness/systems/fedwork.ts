// Fedwork on any MessageQueue, through the raw queue API (enqueueMany /
// listen) or through typed tasks (defineTask / enqueueTaskMany /
// startQueue).  The engine-specific part is a QueueSource.
import {
  createFederation,
  type Federation,
  type FederationOptions,
  type KvStore,
  MemoryKvStore,
  type MessageQueue,
  type TaskDefinition,
  type TaskHandleManyOptions,
} from "@fedwork/core";
import process from "node:process";
import type { Driver, Payload, Workers } from "../driver.ts";

/** Where a Fedwork driver gets its queues from. */
export interface QueueSource {
  /** Empties the store (drops the schema, flushes the database...). */
  reset(): Promise<void>;
  /** The queue enqueues go through (created once per reset). */
  producer(): MessageQueue;
  /** A queue whose `listen()` runs up to `concurrency` handlers. */
  consumer(concurrency: number): MessageQueue;
  /** Closes every queue and connection it opened. */
  close(): Promise<void>;
  /**
   * The key–value store a federation on this source keeps its records in
   * (closed by `close()`); a `MemoryKvStore` per federation when absent.
   */
  kv?(): KvStore;
}

// A Standard Schema by hand, so that the measurement is of Fedwork rather
// than of a schema library.
const payloadSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) =>
      typeof value === "object" && value != null && typeof (value as Payload).i === "number"
        ? { value: value as Payload }
        : { issues: [{ message: "Expected { i: number }." }] },
    types: undefined as unknown as { input: Payload; output: Payload },
  },
};

/**
 * With `FEDWORK_BENCH_PRIORITY=1`, typed tasks are enqueued with priorities
 * -1, 0 and 1 in turn (per chunk in bulk, per message one at a time), to
 * measure what priorities cost against a run without the variable.
 */
const PRIORITIES = process.env.FEDWORK_BENCH_PRIORITY === "1";

/** The priority of the `n`th chunk or message, when measuring priorities. */
function priorityOf(n: number): { priority?: number } {
  return PRIORITIES ? { priority: (n % 3) - 1 } : {};
}

/** Fedwork's raw `MessageQueue` API. */
export function rawQueueDriver(source: QueueSource): Driver {
  return {
    reset: () => source.reset(),
    async enqueueBulk(payloads, chunk) {
      const queue = source.producer();
      for (let i = 0; i < payloads.length; i += chunk) {
        const slice = payloads.slice(i, i + chunk);
        if (queue.enqueueMany != null) await queue.enqueueMany(slice);
        else await Promise.all(slice.map((p) => queue.enqueue(p)));
      }
    },
    enqueueOne: (payload) => source.producer().enqueue(payload),
    work(concurrency, handler) {
      const controller = new AbortController();
      const listening = source.consumer(concurrency).listen(
        (message) => handler(message as Payload),
        { signal: controller.signal },
      );
      return Promise.resolve<Workers>({
        async stop() {
          controller.abort();
          await listening;
        },
      });
    },
    close: () => source.close(),
  };
}

interface Side {
  federation: Federation<void>;
  task: TaskDefinition<void, Payload, Payload>;
}

/** Federation options a typed-task system changes from the defaults. */
export type FederationVariant = Pick<FederationOptions<void>, "taskStatusRetention">;

/**
 * Task options a typed-task system changes from the defaults: `handleMany`
 * for the batch-handler systems.
 */
export interface TaskVariant {
  readonly handleMany?: TaskHandleManyOptions;
}

/** Defines the bench task on a new federation over `queue`. */
function side(
  queue: MessageQueue,
  handler: (payload: Payload) => void,
  variant: FederationVariant,
  kv: KvStore = new MemoryKvStore(),
  taskVariant: TaskVariant = {},
): Side {
  const federation = createFederation<void>({
    ...variant,
    kv,
    queue: { task: queue },
    manuallyStartQueue: true,
  });
  const task = taskVariant.handleMany == null
    ? federation.defineTask("bench", {
      schema: payloadSchema,
      handler: (_, p) => handler(p),
    })
    : federation.defineTask("bench", {
      schema: payloadSchema,
      handleMany: taskVariant.handleMany,
      handler(_, items) {
        for (const item of items) handler(item.data);
      },
    });
  return { federation, task };
}

/**
 * Fedwork's typed tasks: `defineTask()`, `enqueueTaskMany()`, `startQueue()`.
 * `variant`: federation options other than the defaults, on both sides.
 */
export function typedTaskDriver(
  source: QueueSource,
  variant: FederationVariant = {},
  taskVariant: TaskVariant = {},
): Driver {
  // The sending side: a federation whose task handler is never run.
  let sender: Side | undefined;
  const senderFor = () => sender ??= side(source.producer(), () => {}, variant, source.kv?.());
  const context = () =>
    senderFor().federation.createContext(new URL("https://bench.example/"), undefined);
  return {
    async reset() {
      sender = undefined;
      await source.reset();
    },
    async enqueueBulk(payloads, chunk) {
      const ctx = context();
      const { task } = senderFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        await ctx.enqueueTaskMany(task, payloads.slice(i, i + chunk), priorityOf(i / chunk));
      }
    },
    async enqueueOne(payload) {
      await context().enqueueTask(senderFor().task, payload, priorityOf(payload.i));
    },
    work(concurrency, handler) {
      const { federation } = side(
        source.consumer(concurrency),
        handler,
        variant,
        source.kv?.(),
        taskVariant,
      );
      const controller = new AbortController();
      const running = federation.startQueue(undefined, { signal: controller.signal });
      return Promise.resolve<Workers>({
        async stop() {
          controller.abort();
          await running;
        },
      });
    },
    close: () => source.close(),
  };
}
