import { getLogger } from "@logtape/logtape";
import type { MessageQueue } from "../queue/message-queue.ts";
import { handOverMessage } from "../queue/message-ownership.ts";
import type { BaseMessage } from "./envelope.ts";
import { sendToQueue } from "./producer.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * Decides, from what a worker has in memory, whether a message taken off a
 * queue must wait (a paused task or role), and for how long it goes back.
 * Internal.
 * @since 0.4.0
 */
export interface MessageHold {
  /**
   * Whether the message must wait.  Called for every message: it must
   * answer from memory, without I/O, and not throw.
   * @param message The message as the queue handed it out.
   */
  held(message: unknown): boolean;
  /** How long a held message waits in its queue before a worker looks again. */
  readonly delayMs: number;
  /**
   * Until `held()` can answer (the pause set is being read for the first
   * time), a promise that resolves when it can; `undefined` after.  A
   * message taken meanwhile waits for it.
   */
  pending(): Promise<void> | undefined;
}

/**
 * Puts a held message back into the queue it came from, unchanged (its
 * attempt is not counted), due after the hold's delay; the queue then
 * acknowledges the hand-out.  When the enqueue fails, it throws, and the
 * queue keeps the message and hands it out again.
 * @param queue The queue the message came from.
 * @param message The held message.
 * @param delayMs How long it waits.
 * @returns Resolves once the message is back in the queue.
 * @since 0.4.0
 */
export async function putBackHeldMessage(
  queue: MessageQueue,
  message: BaseMessage,
  delayMs: number,
): Promise<void> {
  const copy = handOverMessage({
    ...message,
    dueAt: new Date(Date.now() + delayMs).toISOString(),
  });
  await sendToQueue(queue, [copy], {
    delay: { milliseconds: delayMs },
    ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
    ...(typeof message.priority === "number" && message.priority !== 0
      ? { priority: message.priority }
      : {}),
  });
  logger.debug("Put paused message {messageId} ({messageType}) back for {delayMs} ms.", {
    messageId: message.id,
    messageType: message.type,
    delayMs,
  });
}
