/**
 * How many objects the quick path copies before it leaves a value to
 * `structuredClone()`; it also keeps the scan for repeated objects short.
 */
const MAX_OBJECTS = 32;

/** Thrown inside the quick path when the value needs `structuredClone()`. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * Copies a value as `structuredClone()` does, quickly for what key–value
 * stores mostly hold: primitives, plain objects and arrays (and dates) of
 * up to 32 objects.  Anything else — a class instance, a `Map`, a typed
 * array, an array with holes or extra properties, an object with a null
 * prototype or an own `__proto__` key, an object reached twice (shared or
 * cyclic), a function — is copied by `structuredClone()` itself, which also
 * throws for what cannot be cloned.
 *
 * Written by hand because `structuredClone()` serialises and parses even a
 * small record, several microseconds a call on V8, which the in-memory
 * store paid on every status record.
 * @param value The value.
 * @returns A copy that shares no object with `value`.
 */
export function copyValue<T>(value: T): T {
  if (typeof value !== "object" || value === null) {
    if (typeof value === "function" || typeof value === "symbol") return structuredClone(value);
    return value;
  }
  const seen: object[] = [];
  try {
    return copyObject(value, seen) as T;
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return structuredClone(value);
  }
}

function copyObject(value: object, seen: object[]): unknown {
  if (seen.length >= MAX_OBJECTS || seen.includes(value)) throw NOT_PLAIN;
  seen.push(value);
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    const { length } = array;
    const copy = new Array(length);
    let keys = 0;
    for (const _ in array) keys++;
    if (keys !== length) throw NOT_PLAIN;
    for (let i = 0; i < length; i++) copy[i] = copyMember(array[i], seen);
    return copy;
  }
  if (prototype === Object.prototype) {
    const copy: Record<string, unknown> = {};
    for (const key in value) {
      if (!Object.hasOwn(value, key)) throw NOT_PLAIN;
      if (key === "__proto__") throw NOT_PLAIN;
      copy[key] = copyMember((value as Record<string, unknown>)[key], seen);
    }
    return copy;
  }
  if (prototype === Date.prototype) return new Date((value as Date).getTime());
  throw NOT_PLAIN;
}

function copyMember(value: unknown, seen: object[]): unknown {
  if (typeof value === "object" && value !== null) return copyObject(value, seen);
  if (typeof value === "function" || typeof value === "symbol") throw NOT_PLAIN;
  return value;
}
