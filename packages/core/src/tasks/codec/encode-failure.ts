import { TaskPayloadEncodingError } from "../errors.ts";
import { describeError } from "../../processing/error-description.ts";

// Where a value that cannot be encoded sits, and how that is reported.  The
// encoder records no path while it works: a failure collects its path on
// the way up, and only then is anything formatted.

/**
 * A failure while flattening, on its way up to {@link encodePayload}: each
 * container it passes through adds its segment, so the path costs nothing
 * unless something fails.
 */
export class EncodeFailure {
  /** Path segments, innermost first. */
  readonly segments: string[] = [];
  readonly reason: string;
  readonly cause: unknown;
  constructor(reason: string, cause?: unknown) {
    this.reason = reason;
    this.cause = cause;
  }
}

/**
 * Adds a container's segment to a failure passing through it; any other
 * error (a getter, a proxy trap, the stack) becomes a failure first.
 */
export function at(error: unknown, segment: string): EncodeFailure {
  const failure = error instanceof EncodeFailure ? error : new EncodeFailure(
    error instanceof RangeError && /call stack/i.test(error.message)
      ? "the payload nests too deeply for the stack; lower maxDepth."
      : `reading it threw ${errorSentence(error)}`,
    error,
  );
  failure.segments.push(segment);
  return failure;
}

/**
 * An error thrown by application code as the end of a sentence of an
 * encoding error's message (`TypeError: boom.`): its name and message as
 * {@link describeError} writes them down everywhere else.
 */
export function errorSentence(error: unknown): string {
  const { name, message } = describeError(error);
  return error instanceof Error ? `${name}: ${message.replace(/\.?$/, ".")}` : `${message}.`;
}

/**
 * Turns a failure (or any error thrown while flattening) into the error
 * the caller sees.
 * @param error What was thrown.
 * @param base The path of the value the flattening started at.
 */
export function toEncodingError(error: unknown, base: string): TaskPayloadEncodingError {
  const failure = error instanceof EncodeFailure ? error : at(error, "");
  const path = base + failure.segments.reverse().join("");
  return new TaskPayloadEncodingError(path, failure.reason, { cause: failure.cause });
}

/** The index an own property key denotes, or -1 when it is not one. */
export function arrayIndex(key: string): number {
  const code = key.charCodeAt(0);
  if (code < 48 || code > 57 || (code === 48 && key.length > 1)) return -1;
  const n = Number(key);
  return Number.isInteger(n) && n < 2 ** 32 - 1 && String(n) === key ? n : -1;
}

export function formatKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

export function describeKey(key: unknown): string {
  if (typeof key === "string") return JSON.stringify(key);
  if (typeof key === "bigint") return `${key}n`;
  if (typeof key === "symbol") return key.toString();
  if (key == null || typeof key !== "object") return String(key);
  try {
    const constructor = Object.getPrototypeOf(key)?.constructor;
    return `<${typeof constructor?.name === "string" ? constructor.name : "object"}>`;
  } catch {
    // Runs while reporting another failure: a hostile key must not replace it.
    return "<object>";
  }
}

/**
 * Finds where `target` sits in `root`, for an error message.  Only runs
 * when something failed, so it may walk the payload again.
 */
export function pathTo(root: unknown, target: object, maxDepth: number): string {
  const visited = new Set<object>();
  function search(value: unknown, path: string, depth: number): string | undefined {
    if (value === target) return path;
    if (value == null || typeof value !== "object" || visited.has(value) || depth > maxDepth) {
      return undefined;
    }
    visited.add(value);
    try {
      if (Array.isArray(value)) {
        for (const key of Object.keys(value)) {
          const i = arrayIndex(key);
          if (i < 0) continue;
          const found = search(value[i], `${path}[${i}]`, depth + 1);
          if (found != null) return found;
        }
      } else if (value instanceof Map) {
        for (const [k, v] of value) {
          const found = search(k, `${path}.get(${describeKey(k)})`, depth + 1) ??
            search(v, `${path}.get(${describeKey(k)})`, depth + 1);
          if (found != null) return found;
        }
      } else if (value instanceof Set) {
        let i = 0;
        for (const member of value) {
          const found = search(member, `${path}.<member ${i++}>`, depth + 1);
          if (found != null) return found;
        }
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) return undefined;
        for (const key of Object.keys(value)) {
          const found = search(
            (value as Record<string, unknown>)[key],
            path + formatKey(key),
            depth + 1,
          );
          if (found != null) return found;
        }
      }
    } catch {
      // The payload was read once already; a getter that throws now is not
      // what is being reported.
    }
    return undefined;
  }
  return search(root, "data", 0) ?? "data";
}
