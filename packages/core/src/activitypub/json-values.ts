// Small readers of JSON that arrives from other servers, shared by the key
// fetcher, object proofs and Linked Data signatures, and the message of an
// error a remote party caused, for logs without stack traces.

/**
 * A JSON property's value as an array: itself when it is one, none when
 * absent, else a one-item array (ActivityStreams allows either form).
 * @param value The property's value.
 * @returns The values.
 * @since 0.3.0
 */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value == null ? [] : [value];
}

/**
 * The id of a reference: the string itself, or the object's `idKey`
 * property when it is a string.
 * @param value A URL string or an object with an id.
 * @param idKey The id's property: `"id"` in compact JSON, `"@id"` expanded.
 * @returns The id, or `null`.
 * @since 0.3.0
 */
export function idOf(value: unknown, idKey = "id"): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value != null) {
    const id = (value as Record<string, unknown>)[idKey];
    if (typeof id === "string") return id;
  }
  return null;
}

/**
 * What went wrong, in words: an error's message, or the thrown value.
 * @param error What was thrown.
 * @returns Its message.
 * @since 0.3.0
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
