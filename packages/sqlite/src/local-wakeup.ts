// SQLite cannot tell another connection that a row was inserted, but within
// one process we can: every SqliteMessageQueue on the same file and table
// shares a channel here, so an enqueue wakes the process's own listeners at
// once instead of at their next poll.
import { resolve } from "node:path";

const channels = new Map<string, Set<() => void>>();

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
  let listeners = channels.get(channel);
  if (listeners == null) {
    listeners = new Set();
    channels.set(channel, listeners);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && channels.get(channel) === listeners) channels.delete(channel);
  };
}

/** Wakes every listener subscribed to `channel` in this process. */
export function notifyWakeup(channel: string): void {
  const listeners = channels.get(channel);
  if (listeners == null) return;
  for (const listener of [...listeners]) listener();
}
