/**
 * `@fedwork/amqp`: a Fedwork {@link AmqpMessageQueue} on an AMQP 0-9-1
 * broker such as RabbitMQ, through `amqplib`.
 *
 * @example
 * ```ts ignore
 * import { AmqpMessageQueue } from "@fedwork/amqp";
 *
 * const queue = new AmqpMessageQueue({ url: "amqp://127.0.0.1", queue: "my-app" });
 * ```
 * @module
 * @since 0.1.0
 */
export { AmqpMessageQueue } from "./message-queue.ts";
export { type AmqpMessageQueueOptions, type AmqpQueueType, DEFAULT_AMQP_URL } from "./options.ts";
export type { AmqpMessageQueueConnectionOptions } from "./constructor-arguments.ts";
export {
  AmqpConnectionError,
  AmqpMessageQueueClosedError,
  AmqpUnroutableMessageError,
} from "./errors.ts";
