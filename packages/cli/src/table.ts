// Plain-text tables for the terminal: a header row and aligned columns,
// long cells cut so that a row stays readable.

/** The widest a cell may be before it is cut with an ellipsis. */
const MAX_CELL = 60;

/**
 * Lays out rows under a header as aligned columns, two spaces apart.
 * @param header The column names.
 * @param rows The cells, as text; cut past 60 characters, line breaks
 *             shown as spaces.
 * @returns The table's lines, header first.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const cells = [header, ...rows].map((row) => row.map(cell));
  const widths = header.map((_, column) =>
    Math.max(...cells.map((row) => [...(row[column] ?? "")].length))
  );
  return cells.map((row) =>
    row.map((text, column) =>
      column === row.length - 1 ? text : text + " ".repeat(widths[column] - [...text].length)
    ).join("  ").trimEnd()
  ).join("\n");
}

function cell(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  const chars = [...flat];
  return chars.length > MAX_CELL ? `${chars.slice(0, MAX_CELL - 1).join("")}…` : flat;
}

/**
 * A date as the tables show it: ISO 8601 to the second, in UTC.
 * @param iso An ISO 8601 string, or `null`.
 * @returns The text, `-` when there is none.
 */
export function formatTime(iso: string | null | undefined): string {
  if (iso == null) return "-";
  return iso.replace(/\.\d+Z$/, "Z");
}

/**
 * A value or `-`.
 * @param value The value.
 * @returns Its text.
 */
export function orDash(value: string | number | null | undefined): string {
  return value == null || value === "" ? "-" : String(value);
}
