// Duration-like objects with fractional units, such as `{ seconds: 1.5 }`,
// which `Temporal.Duration.from()` refuses.  Fedwork accepts them by
// converting them to whole milliseconds itself.

/** Nanoseconds per unit, for every unit whose length does not depend on a date. */
const NANOSECONDS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ["days", 86_400_000_000_000n],
  ["hours", 3_600_000_000_000n],
  ["minutes", 60_000_000_000n],
  ["seconds", 1_000_000_000n],
  ["milliseconds", 1_000_000n],
  ["microseconds", 1_000n],
  ["nanoseconds", 1n],
]);

/**
 * The whole milliseconds of a plain duration-like object that uses at least
 * one fractional unit (days counting as 24 hours), sub-millisecond parts
 * rounded up, as the rest of Fedwork rounds them.  `undefined` for anything
 * else (no fractional unit, calendar units, values that are not finite
 * numbers), which the general path handles and rejects with its own message.
 *
 * The arithmetic is decimal and exact: `{ seconds: 1.1 }` is 1100 ms, not
 * the 1101 that `Math.ceil(1.1 * 1000)` would give.
 * @param duration The value to convert.
 * @returns The milliseconds, or `undefined`; `-1` when any unit is
 *          negative, for the caller to reject (Temporal refuses mixed signs,
 *          so a sum is never taken over them).
 */
export function fractionalUnitMilliseconds(duration: unknown): number | undefined {
  if (duration == null || typeof duration !== "object") return undefined;
  if (Object.getPrototypeOf(duration) !== Object.prototype) return undefined;
  const fields = duration as Record<string, unknown>;
  const terms: { digits: bigint; exponent: number; factor: bigint }[] = [];
  let fractional = false;
  let negative = false;
  for (const key in fields) {
    const factor = NANOSECONDS_PER_UNIT.get(key);
    const value = fields[key];
    if (factor === undefined) return undefined;
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
    if (value < 0) negative = true;
    if (!Number.isInteger(value)) fractional = true;
    const decimal = toDecimal(Math.abs(value));
    if (decimal === undefined) return undefined;
    terms.push({ ...decimal, factor });
  }
  if (!fractional) return undefined;
  if (negative) return -1;
  const scale = Math.max(0, ...terms.map(({ exponent }) => -exponent));
  let scaledNanoseconds = 0n;
  for (const { digits, exponent, factor } of terms) {
    scaledNanoseconds += digits * factor * 10n ** BigInt(exponent + scale);
  }
  const divisor = 1_000_000n * 10n ** BigInt(scale);
  const milliseconds = Number((scaledNanoseconds + divisor - 1n) / divisor);
  return Number.isSafeInteger(milliseconds) ? milliseconds : undefined;
}

/**
 * A finite number as `digits × 10^exponent`, read from its shortest
 * round-trip decimal form (`String(1.1)` is `"1.1"`), so the value is the
 * one the user wrote.
 */
function toDecimal(value: number): { digits: bigint; exponent: number } | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (match === null) return undefined;
  const [, whole, fraction = "", exponent = "0"] = match;
  const digits = BigInt(whole + fraction);
  return { digits, exponent: Number(exponent) - fraction.length };
}
