// Parsing the ISO 8601 timestamps messages carry (`started`, `dueAt`).
// Every message is parsed several times on its way through the worker
// (events, metrics, the task's run information), and the messages of one
// enqueueTaskMany() batch share their timestamps; remembering the last few
// strings turns most of those parses into a comparison.

const CACHE_SIZE = 4;
const texts: string[] = [];
const values: number[] = [];
let next = 0;

/**
 * `Date.parse(text)`, remembering the last few results.  Internal.
 * @param text An ISO 8601 timestamp.
 * @returns Its epoch milliseconds, or `NaN` when it is not a timestamp.
 */
export function parseTimestamp(text: string): number {
  for (let i = 0; i < texts.length; i++) {
    if (texts[i] === text) return values[i];
  }
  const value = Date.parse(text);
  texts[next] = text;
  values[next] = value;
  next = (next + 1) % CACHE_SIZE;
  return value;
}
