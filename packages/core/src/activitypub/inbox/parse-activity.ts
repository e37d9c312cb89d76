import {
  checkDocumentComplexity,
  DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
  type ResolvedDocumentComplexityLimits,
} from "../network/document-complexity.ts";

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
 * - `nestingTooDeep`: it nests deeper than the `maxDepth` limit
 *   ({@link MAX_ACTIVITY_DEPTH} by default);
 * - `tooComplex`: it passes another of the document limits (too many
 *   `@context` entries, context terms or JSON values, too long a string,
 *   or too much context work; since 0.4.0).
 * @since 0.3.0
 */
export type ParsedActivityBody =
  | { readonly ok: true; readonly activity: Record<string, unknown> }
  | {
    readonly ok: false;
    readonly reason: "invalidJson" | "nestingTooDeep" | "tooComplex";
    readonly message: string;
  };

/**
 * Parses an inbox request's body as a JSON object within the document
 * limits ({@link DocumentComplexityLimits}: nesting, `@context` entries and
 * terms, values, strings), so that nothing after it (signature checks, the
 * queue's encoder, JSON-LD processing, the listeners) sees a value it cannot
 * handle or that costs more than a bounded slice of CPU and memory.
 * Internal.
 * @param body The body's bytes, UTF-8.
 * @param limits The document limits (since 0.4.0); the defaults when left
 *               out.
 * @returns The activity, or why the body was refused.
 * @since 0.3.0
 */
export function parseActivityBody(
  body: Uint8Array,
  limits: ResolvedDocumentComplexityLimits = DEFAULT_DOCUMENT_COMPLEXITY_LIMITS,
): ParsedActivityBody {
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
  const violation = checkDocumentComplexity(parsed, limits);
  if (violation != null) {
    return {
      ok: false,
      reason: violation.limit === "maxDepth" ? "nestingTooDeep" : "tooComplex",
      message: violation.limit === "maxDepth"
        ? `The activity nests deeper than ${violation.max} levels.`
        : violation.message,
    };
  }
  return { ok: true, activity: parsed as Record<string, unknown> };
}
