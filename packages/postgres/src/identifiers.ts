// SQL identifiers (table, schema and index names) cannot be bound as query
// parameters, so they are spliced into the SQL text.  Only plain names pass
// validation, and they are double-quoted as well, so a name can never
// change the meaning of a statement.

/** PostgreSQL truncates identifiers longer than this many bytes. */
const MAX_IDENTIFIER_LENGTH = 63;

const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks that `value` is a plain SQL name: ASCII letters, digits and
 * underscores, not starting with a digit, and at most `maxLength` long.
 * @param value The name to check.
 * @param optionName The option the name came from, used in the message.
 * @param maxLength The longest accepted name (shorter than 63 when suffixes
 *                  are appended to derive index names).
 * @returns The name.
 * @throws {TypeError} When the name is not a string or not a plain name.
 * @throws {RangeError} When the name is too long.
 */
export function validateIdentifier(
  value: unknown,
  optionName: string,
  maxLength = MAX_IDENTIFIER_LENGTH,
): string {
  if (typeof value !== "string" || !IDENTIFIER_PATTERN.test(value)) {
    throw new TypeError(
      `${optionName} must be a plain SQL name of ASCII letters, digits and underscores ` +
        `that does not start with a digit; got ${JSON.stringify(value)}.`,
    );
  }
  if (value.length > maxLength) {
    throw new RangeError(
      `${optionName} must be at most ${maxLength} characters long; got ${value.length}.`,
    );
  }
  return value;
}

/**
 * Double-quotes a validated identifier.
 * @param name A name accepted by {@link validateIdentifier}.
 * @returns The quoted identifier.
 */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

/**
 * Quotes a table name, qualified with its schema when one is given.
 * @param table A validated table name.
 * @param schema A validated schema name, or `undefined` for the search path.
 * @returns The quoted, possibly qualified name.
 */
export function qualifiedName(table: string, schema?: string): string {
  return schema == null
    ? quoteIdentifier(table)
    : `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}
