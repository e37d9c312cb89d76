/**
 * Wake-ups between the queues of one process: an enqueue wakes the
 * listeners of the same queue in this process directly, once Redis has
 * replied, instead of leaving them to the pub/sub message the enqueue
 * script publishes (a second connection's round trip away).
 *
 * Listeners register under the queue's wake-up channel name, which every
 * instance with the same prefix and queue shares.  Two instances with the
 * same channel on different servers wake each other for nothing: a claim
 * that finds nothing, never a lost message.
 *
 * The enqueue scripts publish {@link LOCAL_WAKE_ORIGIN} as the message, so
 * that a subscriber in this process can skip the wake-ups its own enqueues
 * announced: their listeners were (or will be, when the reply arrives)
 * woken here, and claiming again for the pub/sub copy would be a second,
 * empty round trip.
 * @module
 */
import { ProcessWakeups } from "@fedwork/core/queue-kit";

/**
 * What this process's enqueue scripts publish on a wake-up channel: random
 * per process, so no other process publishes it.
 */
export const LOCAL_WAKE_ORIGIN: string = `fedwork:${crypto.randomUUID()}`;

const wakeups = new ProcessWakeups();

/**
 * Registers a listener's wake function under a queue's wake-up channel.
 * @param channel The queue's wake-up channel (`B:wake`).
 * @param wake Makes the listener claim at once.
 * @returns Unregisters it.
 */
export function addLocalWakeListener(channel: string, wake: () => void): () => void {
  return wakeups.subscribe(channel, wake);
}

/**
 * Wakes every listener of this process registered under `channel`.  Call
 * it after the enqueue's reply (or failure), never before: a listener
 * woken earlier could claim before the message is stored, go back to
 * sleep, and skip the pub/sub copy of the wake-up as its own.
 * @param channel The queue's wake-up channel.
 */
export function wakeLocalListeners(channel: string): void {
  wakeups.notify(channel);
}

/**
 * Whether a pub/sub wake-up was published by an enqueue of this process
 * (and so was delivered locally already).
 * @param payload The pub/sub message.
 * @returns `true` for this process's own wake-ups.
 */
export function isLocalWakeOrigin(payload: string): boolean {
  return payload === LOCAL_WAKE_ORIGIN;
}
