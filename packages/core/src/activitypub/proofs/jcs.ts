/**
 * Serializes a JSON value as RFC 8785 (JSON Canonicalization Scheme) says:
 * no whitespace, object members sorted by their names' UTF-16 code units,
 * strings and numbers as ECMAScript's `JSON.stringify()` writes them.  The
 * `eddsa-jcs-2022` cryptosuite hashes documents in this form.
 *
 * Written here rather than taken from a package: RFC 8785 defines its
 * string escaping and number format as ECMAScript's, so the whole scheme is
 * the member sort below, and the value comes from an inbox body already
 * parsed with a nesting limit (`MAX_ACTIVITY_DEPTH`).
 * @param value A JSON value: `null`, a boolean, a finite number, a string,
 *              an array or a plain object of them.  Members whose value is
 *              `undefined` are left out, as `JSON.stringify()` does.
 * @returns The canonical JSON text.
 * @throws {TypeError} When the value holds something JSON cannot represent
 *         (a non-finite number, a bigint, a function, a symbol).
 * @since 0.3.0
 */
export function canonicalizeJson(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSON.stringify(value);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new TypeError(`A canonical JSON number must be finite; got ${value}.`);
    }
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    // An undefined element is written as null, as JSON.stringify() does.
    return `[${value.map((item) => canonicalizeJson(item === undefined ? null : item)).join(",")}]`;
  }
  if (typeof value === "object") {
    const record = value as Record<string, unknown>;
    // The default sort compares UTF-16 code units, which is RFC 8785's order.
    const names = Object.keys(record).filter((name) => record[name] !== undefined).sort();
    return `{${
      names.map((name) => `${JSON.stringify(name)}:${canonicalizeJson(record[name])}`).join(",")
    }}`;
  }
  throw new TypeError(`A ${typeof value} cannot be written as canonical JSON.`);
}
