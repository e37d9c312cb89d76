// Messages whose sender gives up every reference to them when it enqueues
// them, so that a queue keeping messages in memory may keep the object
// itself instead of a copy.  Internal: not re-exported from mod.ts.
//
// The federation marks the messages it builds for a queue (fresh objects
// that nothing else holds or changes) and the InProcessMessageQueue skips
// its structuredClone() for them; a message from anywhere else is copied,
// so an application that changes an object after enqueueing it does not
// change the queued message.  A WeakSet rather than a property: the message
// keeps its shape and what durable queues serialize does not change.

const handedOver = new WeakSet<object>();

/**
 * The property of a queue that keeps the messages it is given as they are
 * (in memory), and so copies those not handed over: the in-process queue
 * (and a wrapper of it).  A queue that serializes its messages has no use
 * for the mark, and marking costs two weak-set insertions a batch, on
 * every enqueue.  Internal.
 */
export const keepsMessageObjects: unique symbol = Symbol("fedwork.keepsMessageObjects");

/**
 * Whether `queue` keeps message objects as they are, so that handing them
 * over spares it a copy.  Internal.
 * @param queue A queue.
 * @returns `true` for the in-process queue and what wraps it.
 */
export function keepsMessages(queue: object): boolean {
  return (queue as { readonly [keepsMessageObjects]?: boolean })[keepsMessageObjects] === true;
}

/**
 * Marks `message` as handed over to the queue it is about to be enqueued
 * into: the caller promises that neither it nor anything it shares the
 * object (or the objects inside it) with changes it from now on.
 * Internal.
 * @param message A message built for the queue, not shared with any caller.
 * @returns The same message.
 */
export function handOverMessage<T extends object>(message: T): T {
  handedOver.add(message);
  return message;
}

/**
 * Marks a batch of messages as handed over, as {@link handOverMessage} does
 * for one: the array is marked (one mark per batch, not per message), so a
 * queue recognises the batch when the same array reaches `enqueueMany()`.
 * A batch of one also marks its message, which goes to `enqueue()`.
 * Internal.
 * @param messages Messages built for the queue, not shared with any caller.
 * @returns The same array.
 */
export function handOverMessages<T extends readonly object[]>(messages: T): T {
  handedOver.add(messages);
  if (messages.length === 1) handedOver.add(messages[0]);
  return messages;
}

/**
 * Whether `message` (or a batch of messages) was marked with
 * {@link handOverMessage} or {@link handOverMessages}, so that a queue may
 * keep it without copying it.  Internal.
 * @param message A message, or the array of messages, being enqueued.
 * @returns `true` for what the federation handed over.
 */
export function isHandedOver(message: unknown): boolean {
  return typeof message === "object" && message !== null && handedOver.has(message);
}
