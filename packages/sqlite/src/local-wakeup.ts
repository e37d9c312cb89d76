// SQLite cannot tell another connection that a row was inserted, but within
// one process we can: every SqliteMessageQueue on the same file and table
// shares a channel here, so an enqueue wakes the process's own listeners at
// once instead of at their next poll.
import { ProcessWakeups } from "@fedwork/core/queue-kit";
import { resolve } from "node:path";

const wakeups = new ProcessWakeups();

/**
 * The channel name of a queue table.
 * @param path The database file's path, as given.
 * @param table The table name.
 */
export function wakeupChannel(path: string, table: string): string {
  return `${resolve(path)}\u0000${table}`;
}

/**
 * Calls `listener` whenever {@link notifyWakeup} is called on `channel`.
 * @returns A function that unsubscribes.
 */
export function subscribeWakeup(channel: string, listener: () => void): () => void {
  return wakeups.subscribe(channel, listener);
}

/** Wakes every listener subscribed to `channel` in this process. */
export function notifyWakeup(channel: string): void {
  wakeups.notify(channel);
}
