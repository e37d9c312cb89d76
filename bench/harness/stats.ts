// Summary statistics for the benchmarks, so that every report computes its
// percentiles the same way.

/**
 * The value at percentile `p` (0–100) of an ascending list, by the
 * nearest-rank method: the smallest value with at least `p`% of the list at
 * or below it.  An empty list gives `NaN`.
 * @param sorted The samples, sorted ascending.
 * @param p The percentile, from 0 to 100.
 * @returns The sample at that rank.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
