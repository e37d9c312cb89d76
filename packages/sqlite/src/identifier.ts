import { SqliteIdentifierError } from "./errors.ts";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Checks that `value` is a plain identifier, safe to splice into SQL, and
 * returns it double-quoted.
 * @param value The identifier.
 * @param optionName The option it came from, for the error message.
 * @returns The quoted identifier, e.g. `"fedwork_messages"`.
 * @throws {SqliteIdentifierError} When `value` is not a plain identifier.
 * @since 0.1.0
 */
export function quoteIdentifier(value: unknown, optionName: string): string {
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw new SqliteIdentifierError(optionName, value);
  }
  return `"${value}"`;
}
