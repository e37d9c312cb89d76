export { SqliteMessageQueue } from "./sqlite-message-queue.ts";
export type { SqliteMessageQueueOptions } from "./options.ts";
