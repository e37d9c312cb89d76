// Validation shared by the constructors: each failure names the option.
import { type DurationInput, durationToMilliseconds } from "@fedwork/core";

/**
 * Converts a positive duration option to milliseconds.
 * @param value The option value, or `undefined` for the default.
 * @param optionName The option's name.
 * @param defaultMs The default in milliseconds.
 * @returns Milliseconds, at least 1.
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the value is zero or negative.
 */
export function positiveDurationOption(
  value: DurationInput | undefined,
  optionName: string,
  defaultMs: number,
): number {
  if (value === undefined) return defaultMs;
  let ms: number;
  try {
    ms = durationToMilliseconds(value, optionName);
  } catch (error) {
    if (error instanceof RangeError) {
      throw new RangeError(`${optionName} must be a positive duration.`, { cause: error });
    }
    throw error;
  }
  if (ms <= 0) throw new RangeError(`${optionName} must be a positive duration; got ${ms} ms.`);
  return ms;
}

/**
 * Checks a positive integer option.
 * @param value The option value, or `undefined` for the default.
 * @param optionName The option's name.
 * @param defaultValue The default.
 * @returns The integer.
 * @throws {RangeError} When the value is not a positive integer.
 */
export function positiveIntegerOption(
  value: number | undefined,
  optionName: string,
  defaultValue: number,
): number {
  if (value === undefined) return defaultValue;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${optionName} must be a positive integer; got ${String(value)}.`);
  }
  return value;
}

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
