// KvStore keys are stored as the JSON text of the key array.  JSON escapes
// every quote inside a string, so in the encoding of ["a", …] the element
// "a" always ends at the first unescaped quote: every key that starts with
// the elements of a prefix has an encoding that starts with the prefix's
// encoding minus its closing bracket, and no other key does.  That makes an
// element-wise prefix match a plain range scan on the primary key.
import type { KvKey } from "@fedwork/core";

/**
 * Encodes a key as the JSON text of its array.
 * @throws {TypeError} When the key is not a non-empty array of strings.
 */
export function encodeKvKey(key: KvKey): string {
  if (!Array.isArray(key) || key.length === 0 || !key.every((part) => typeof part === "string")) {
    throw new TypeError(
      `A KvStore key must be a non-empty array of strings; got ${JSON.stringify(key)}.`,
    );
  }
  return JSON.stringify(key);
}

/** Decodes a key stored by {@link encodeKvKey}. */
export function decodeKvKey(text: string): KvKey {
  return JSON.parse(text) as KvKey;
}

/**
 * The half-open range `[start, end)` of encoded keys that start with
 * `prefix`, element by element; every key when `prefix` is absent.
 */
export function kvPrefixRange(prefix?: KvKey): { start: string; end: string } {
  // Every encoding starts with "[", and "\" is the next character.
  if (prefix === undefined) return { start: "[", end: "\\" };
  // '["a","b"]' → start '["a","b"', which only ["a","b"] and ["a","b",…]
  // extend; end replaces the final quote with the next character, "#".
  const start = encodeKvKey(prefix).slice(0, -1);
  return { start, end: `${start.slice(0, -1)}#` };
}
