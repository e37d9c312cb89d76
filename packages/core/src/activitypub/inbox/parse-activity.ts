/**
 * How deeply an incoming activity's JSON may nest: 64 levels, the activity
 * itself being the first.  Real activities nest a handful of levels (an
 * `Announce` of a `Create` of a `Note` with tags and attachments stays
 * under ten), while the queues' encoders (`JSON.stringify()`,
 * `structuredClone()`) and JSON-LD processing recurse, and overflow the
 * stack on a body of a few kilobytes nested ten thousand levels deep.
 * @since 0.3.0
 */
export const MAX_ACTIVITY_DEPTH = 64;

/**
 * What {@link parseActivityBody} found: the activity, or why the body is
 * not one.
 * - `invalidJson`: the body is not JSON, or not a JSON object;
 * - `nestingTooDeep`: it nests deeper than {@link MAX_ACTIVITY_DEPTH}.
 * @since 0.3.0
 */
export type ParsedActivityBody =
  | { readonly ok: true; readonly activity: Record<string, unknown> }
  | {
    readonly ok: false;
    readonly reason: "invalidJson" | "nestingTooDeep";
    readonly message: string;
  };

/**
 * Parses an inbox request's body as a JSON object nesting at most
 * {@link MAX_ACTIVITY_DEPTH} levels, so that nothing after it (signature
 * checks, the queue's encoder, the listeners) sees a value it cannot handle.
 * Internal.
 * @param body The body's bytes, UTF-8.
 * @returns The activity, or why the body was refused.
 * @since 0.3.0
 */
export function parseActivityBody(body: Uint8Array): ParsedActivityBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    // Some runtimes' JSON.parse() also throws a RangeError on deep input.
    return { ok: false, reason: "invalidJson", message: "The body is not JSON." };
  }
  if (typeof parsed !== "object" || parsed == null || Array.isArray(parsed)) {
    return { ok: false, reason: "invalidJson", message: "The body is not a JSON object." };
  }
  if (nestsDeeperThan(parsed, MAX_ACTIVITY_DEPTH)) {
    return {
      ok: false,
      reason: "nestingTooDeep",
      message: `The activity nests deeper than ${MAX_ACTIVITY_DEPTH} levels.`,
    };
  }
  return { ok: true, activity: parsed as Record<string, unknown> };
}

/** Whether a parsed JSON value nests deeper than `limit`; iterative, so any depth is safe. */
function nestsDeeperThan(value: object, limit: number): boolean {
  const pending: [object, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child !== "object" || child == null) continue;
      if (depth + 1 > limit) return true;
      pending.push([child, depth + 1]);
    }
  }
  return false;
}
