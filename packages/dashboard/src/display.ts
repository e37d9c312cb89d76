/** How deep {@link toDisplayJson} follows nested values. */
const MAX_DEPTH = 12;
/** How many characters of a payload the page gets at most. */
const MAX_TEXT = 64 * 1024;

/**
 * Turns a decoded task payload (which may hold dates, maps, URLs,
 * vocabulary objects, big integers, cycles) into indented JSON text, as
 * the dashboard's page and the `fedwork` CLI show it.  Vocabulary objects
 * become their JSON-LD, dates ISO 8601 strings, big integers `123n`.  Long
 * output (past 64 KiB) is cut, saying so.
 * @param value The payload.
 * @param indent The indentation (0 for one line).
 * @returns The text.
 * @since 0.4.0
 */
export async function toDisplayText(value: unknown, indent = 2): Promise<string> {
  const text = JSON.stringify(await toDisplayJson(value, 0, new Set()), null, indent) ??
    "undefined";
  return text.length > MAX_TEXT
    ? `${text.slice(0, MAX_TEXT)}\n… (${text.length - MAX_TEXT} more characters)`
    : text;
}

async function toDisplayJson(value: unknown, depth: number, seen: Set<object>): Promise<unknown> {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
      return `${value}n`;
    case "undefined":
      return null;
    case "symbol":
    case "function":
      return String(value);
  }
  if (value == null) return null;
  const object = value as object;
  if (object instanceof Date) {
    return Number.isNaN(object.getTime()) ? "Invalid Date" : object.toISOString();
  }
  if (object instanceof URL) return object.href;
  if (object instanceof RegExp) return String(object);
  if (ArrayBuffer.isView(object)) return `(${object.byteLength} bytes)`;
  if (seen.has(object)) return "(circular)";
  if (depth >= MAX_DEPTH) return "(nested too deep)";
  seen.add(object);
  try {
    const toJsonLd = (object as { toJsonLd?: unknown }).toJsonLd;
    if (typeof toJsonLd === "function") {
      try {
        return await toJsonLd.call(object, { format: "compact" });
      } catch {
        return String(object);
      }
    }
    if (object instanceof Map) {
      const entries: unknown[] = [];
      for (const [key, item] of object) {
        entries.push([
          await toDisplayJson(key, depth + 1, seen),
          await toDisplayJson(item, depth + 1, seen),
        ]);
      }
      return { "(Map)": entries };
    }
    if (object instanceof Set || Array.isArray(object)) {
      const items: unknown[] = [];
      for (const item of object) items.push(await toDisplayJson(item, depth + 1, seen));
      return object instanceof Set ? { "(Set)": items } : items;
    }
    if (object instanceof Error) return `${object.name}: ${object.message}`;
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(object)) {
      result[key] = await toDisplayJson(item, depth + 1, seen);
    }
    return result;
  } finally {
    seen.delete(object);
  }
}
