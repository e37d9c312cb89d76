// JSON encoding shared by the queue and the key–value store.

/**
 * Serializes a message or value as JSON text.
 * @param value A JSON-compatible value.
 * @param what What the value is, for the error message.
 * @returns The JSON text.
 * @throws {TypeError} When the value cannot be represented as JSON.
 */
export function encodeJson(value: unknown, what: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(`The ${what} cannot be serialized as JSON: ${error}`, { cause: error });
  }
  if (text === undefined) {
    throw new TypeError(`The ${what} must be a JSON-compatible value; got ${String(value)}.`);
  }
  return text;
}
