import type { KvKey } from "@fedwork/core";

/**
 * Encodes a key as the JSON text of its array, so that keys whose elements
 * would join to the same string (`["a", "b"]`, `["a:b"]`) stay distinct
 * and an element-wise prefix is a text prefix: `["a"]` is `["a"]` itself or
 * begins with `["a",`.
 */
export function encodeKvKey(key: KvKey): string {
  return JSON.stringify(key);
}

/** Decodes what {@link encodeKvKey} returned. */
export function decodeKvKey(text: string): KvKey {
  return JSON.parse(text) as KvKey;
}

/** Escapes the glob characters of `SCAN MATCH` so that `text` matches literally. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * Serializes a value as JSON with object keys sorted, so that two
 * deep-equal values always have the same text; this is what lets `cas()`
 * compare values as strings inside a Lua script.
 * @throws {TypeError} When the value is not JSON-serializable.
 */
export function encodeKvValue(value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const name of Object.keys(item).sort()) {
      sorted[name] = (item as Record<string, unknown>)[name];
    }
    return sorted;
  });
  if (text === undefined) {
    throw new TypeError(`A ${typeof value} value cannot be stored: it is not JSON-serializable.`);
  }
  return text;
}
