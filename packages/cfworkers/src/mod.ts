/**
 * `@fedwork/cfworkers`: key–value stores on Workers KV and on D1 (with an
 * atomic `cas()`), a message queue on Cloudflare Queues, and the glue that runs Fedwork's queued messages
 * (typed tasks included) in a Worker's `queue()` handler.
 *
 * @example
 * ```ts ignore
 * import { createFederation } from "@fedwork/core";
 * import { processQueueBatch, WorkersKvStore, WorkersMessageQueue } from "@fedwork/cfworkers";
 *
 * function getFederation(env: Env) {
 *   return createFederation<Env>({
 *     kv: new WorkersKvStore(env.KV),
 *     queue: new WorkersMessageQueue(env.QUEUE),
 *     manuallyStartQueue: true,
 *   });
 * }
 *
 * export default {
 *   fetch: (request, env) => getFederation(env).fetch(request, { contextData: env }),
 *   queue: (batch, env) =>
 *     processQueueBatch(batch, { federation: getFederation(env), contextData: env }),
 * } satisfies ExportedHandler<Env>;
 * ```
 * @module
 * @since 0.3.0
 */
export { WorkersKvStore, type WorkersKvStoreOptions } from "./kv-store.ts";
export { D1KvStore, type D1KvStoreOptions } from "./d1-kv-store.ts";
export { WorkersMessageQueue, type WorkersMessageQueueOptions } from "./message-queue.ts";
export {
  type ProcessedQueueMessage,
  processQueueBatch,
  type ProcessQueueBatchOptions,
} from "./queue-consumer.ts";
export type {
  WorkersD1Database,
  WorkersD1PreparedStatement,
  WorkersD1RunResult,
  WorkersKvListKey,
  WorkersKvListResult,
  WorkersKvNamespace,
  WorkersMessageBatch,
  WorkersQueue,
  WorkersQueueMessage,
  WorkersQueueSendRequest,
} from "./bindings.ts";
