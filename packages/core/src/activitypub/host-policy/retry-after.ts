// Reading a Retry-After header (RFC 9110, section 10.2.3): a number of
// seconds, or an HTTP date.

/** Statuses whose Retry-After asks the client to wait. */
const WAIT_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * How long a response asks its client to wait: its `Retry-After` header,
 * read only on a 429 or a 503, as delay seconds or an HTTP date.  Internal.
 * @param status The response's status.
 * @param value The `Retry-After` header, or `null`.
 * @param nowMs The current time, in milliseconds since the epoch.
 * @returns The wait in milliseconds (0 for a date in the past), or
 *          `undefined` when there is no usable header.
 * @since 0.4.0
 */
export function retryAfterMilliseconds(
  status: number,
  value: string | null,
  nowMs: number,
): number | undefined {
  if (!WAIT_STATUSES.has(status) || value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    // A peer may send any number of digits: past a year, it is a year.
    return Math.min(Number(text), 365 * 24 * 60 * 60) * 1000;
  }
  // An HTTP date has a weekday and a zone; Date.parse() alone would take
  // "1" or "2026" too.
  if (!/^[A-Za-z]{3},? .*\d{2}:\d{2}:\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
