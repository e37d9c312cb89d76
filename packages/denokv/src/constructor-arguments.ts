// The two ways to call the engine constructors: Fedwork's options object
// with the database in it (`{ kv }`), and @fedify/denokv's form, the
// database first and any options after it.
import type { DenoKv } from "./deno-kv.ts";

/** Whether `value` has Deno KV's methods (and so is a database, not options). */
function isDenoKv(value: unknown): value is DenoKv {
  const candidate = value as Partial<Record<keyof DenoKv, unknown>> | null | undefined;
  return candidate != null && typeof candidate === "object" &&
    typeof candidate.get === "function" && typeof candidate.list === "function" &&
    typeof candidate.atomic === "function";
}

/** A few words on what `value` is, for an error message. */
export function describeArgument(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object without Deno KV's get(), list() and atomic()";
  return typeof value === "function" ? "a function" : typeof value;
}

/**
 * Turns a constructor's arguments into its options object.  A database
 * first is Fedify's form: the options (Fedwork's, without `kv`) follow it.
 * Anything else first must be Fedwork's options object, alone.
 * @param first The first argument.
 * @param second The second argument, `undefined` when absent.
 * @param where The constructor, e.g. `"new DenoKvStore()"`.
 * @param fedifyForm How Fedify's form is written there, e.g.
 *        `"new DenoKvStore(kv)"`, for the error message.
 * @returns The options, the database in `kv`.
 * @throws {TypeError} When the first argument is neither, or options come
 *         twice.
 */
export function resolveConstructorArguments<T extends { readonly kv: DenoKv }>(
  first: unknown,
  second: unknown,
  where: string,
  fedifyForm: string,
): T {
  if (isDenoKv(first)) {
    if (second === undefined) return { kv: first } as unknown as T;
    if (second === null || typeof second !== "object" || Array.isArray(second)) {
      throw new TypeError(
        `The second argument of ${where} must be an options object; got ${
          describeArgument(second)
        }.`,
      );
    }
    if ("kv" in second) {
      throw new TypeError(
        `${where} got a Deno KV database both as its first argument and as the kv option; ` +
          "give it once.",
      );
    }
    return { ...second, kv: first } as unknown as T;
  }
  if (first != null && typeof first === "object" && !Array.isArray(first)) {
    if (second !== undefined) {
      throw new TypeError(
        `${where} takes a second argument only after a Deno KV database (${fedifyForm}); ` +
          "with an options object, put every option in it.",
      );
    }
    return first as T;
  }
  throw new TypeError(
    `${where} takes an open Deno KV database, e.g. from Deno.openKv() (${fedifyForm}, ` +
      `as in Fedify), or an options object with one ({ kv }); got ${describeArgument(first)}.`,
  );
}
