// What the batch-handler suite and its worker process share: how a backend
// module is opened and closed, and the federation of one process with its
// handleMany task.  Internal to @fedwork/testing.
import {
  createFederation,
  type Federation,
  type KvStore,
  type MessageQueue,
  millisecondsToDuration,
  type RetryPolicy,
  type TaskDefinition,
  type TaskItem,
  type TaskItemResults,
} from "@fedwork/core";
import { numberSchema } from "./backend-set.ts";

/**
 * What a backend module of {@link testBatchHandlers} opens for one process.
 * @since 0.4.0
 */
export interface BatchHandlerBackend {
  /**
   * The message queue, for every role.  It must run at least 8 handlers at
   * once (its `concurrency`): a run of `size` items holds `size` of them.
   */
  readonly queue: MessageQueue;
  /** The key–value store. */
  readonly kv: KvStore;
}

/** A process's federation and its task. */
export interface BatchHandlerApp {
  readonly federation: Federation<void>;
  readonly task: TaskDefinition<void, { n: number }>;
}

/** Retries a failed item after 50 ms, up to four times. */
const retryQuickly: RetryPolicy = ({ attempts }) =>
  attempts >= 5 ? null : millisecondsToDuration(50);

/**
 * Builds a process's federation with one `handleMany` task named `name`.
 * @param backend The process's engines.
 * @param name The task's name.
 * @param handleMany The task's `handleMany` option.
 * @param handler The task's handler.
 * @returns The federation and the task.
 */
export function buildBatchHandlerApp(
  backend: BatchHandlerBackend,
  name: string,
  handleMany: { readonly size: number; readonly waitMs: number },
  handler: (
    items: readonly TaskItem<{ n: number }>[],
  ) => Promise<TaskItemResults<void> | void> | TaskItemResults<void> | void,
): BatchHandlerApp {
  const federation = createFederation<void>({
    kv: backend.kv,
    queue: backend.queue,
    manuallyStartQueue: true,
    taskRetryPolicy: retryQuickly,
  });
  const task = federation.defineTask(name, {
    schema: numberSchema,
    handleMany: { size: handleMany.size, wait: { milliseconds: handleMany.waitMs } },
    handler: (_ctx, items) => handler(items),
  });
  return { federation, task };
}

/**
 * Closes a process's engines.
 * @param backend The engines.
 */
export async function closeBatchHandlerBackend(backend: BatchHandlerBackend): Promise<void> {
  for (const engine of [backend.kv, backend.queue]) {
    await (engine as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
  }
}
