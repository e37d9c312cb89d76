const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for HTML content and quoted attribute values.  Internal.
 * @param text The text.
 * @returns The escaped text.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]);
}

/**
 * Serializes a value as JSON that is safe inside a `<script>` element: no
 * `<`, `>`, `&` or line separators that could end the element or the
 * string.  Internal.
 * @param value The value.
 * @returns The JSON text.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
