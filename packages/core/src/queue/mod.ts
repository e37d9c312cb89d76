export type {
  MessageQueue,
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueHandler,
  MessageQueueListenOptions,
  MessageRedelivery,
  MessageRedeliveryOptions,
} from "./message-queue.ts";
export {
  InProcessMessageQueue,
  type InProcessMessageQueueOptions,
} from "./in-process-message-queue.ts";
export { ParallelMessageQueue } from "./parallel-message-queue.ts";
export { QueueClosedError } from "./queue-closed-error.ts";
