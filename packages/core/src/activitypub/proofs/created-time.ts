import { Temporal } from "@js-temporal/polyfill";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";

/**
 * The default oldest `created` an Object Integrity Proof or Linked Data
 * signature may have: 7 days.  Mastodon forwards a reply as it receives it,
 * and Fedwork's and Fedify's default delivery retries give up within two
 * days, so a genuine forwarded activity is hours old, rarely days; an
 * older one is a redelivery after a long outage (its author's server
 * delivers it directly as well) or a replay of something its author may
 * since have deleted or edited.
 */
export const DEFAULT_PROOF_MAX_AGE: DurationInput = { days: 7 };

/** The default distance into the future a `created` may be: the signature time window's. */
const DEFAULT_FUTURE_SKEW: DurationInput = { hours: 1 };

/** An RFC 3339 instant is about 30 characters; a longer one is not parsed. */
const MAX_CREATED_LENGTH = 64;

/** The time checks on a proof's or signature's `created` (see `VerifyProofOptions`). */
export interface CreatedTimeOptions {
  readonly maxAge?: DurationInput | false;
  readonly timeWindow?: DurationInput | false;
  readonly currentTime?: Temporal.Instant;
}

/** Why a `created` is refused. */
export interface CreatedTimeRefusal {
  /** `malformed`: absent or not an instant; `outsideTimeWindow`: too old or in the future. */
  readonly kind: "malformed" | "outsideTimeWindow";
  readonly message: string;
}

/**
 * Checks a proof's or Linked Data signature's `created` against now: no
 * older than `maxAge`, no further in the future than `timeWindow`.  With
 * either check on, a `created` that is absent or not an RFC 3339 instant
 * with an offset is refused, since its age cannot be known.
 * @param created The `created` value, as received.
 * @param options The limits and the time.
 * @param what What carries it, for the message ("proof").
 * @returns Why it is refused, or `null` when it is acceptable.
 * @throws {TypeError} When `maxAge` or `timeWindow` is not a duration.
 */
export function checkCreatedTime(
  created: unknown,
  options: CreatedTimeOptions,
  what: string,
): CreatedTimeRefusal | null {
  const maxAgeMs = options.maxAge === false
    ? null
    : durationToMilliseconds(options.maxAge ?? DEFAULT_PROOF_MAX_AGE, "maxAge");
  const futureMs = options.timeWindow === false
    ? null
    : durationToMilliseconds(options.timeWindow ?? DEFAULT_FUTURE_SKEW, "timeWindow");
  if (maxAgeMs == null && futureMs == null) return null;
  if (created === undefined) {
    return { kind: "malformed", message: `The ${what} has no created time to check its age by.` };
  }
  let createdMs: number | null = null;
  if (typeof created === "string" && created.length <= MAX_CREATED_LENGTH) {
    try {
      createdMs = Temporal.Instant.from(created).epochMilliseconds;
    } catch {
      createdMs = null;
    }
  }
  if (createdMs == null) {
    return {
      kind: "malformed",
      message: `The ${what}'s created is not an RFC 3339 instant with an offset.`,
    };
  }
  const nowMs = options.currentTime?.epochMilliseconds ?? Date.now();
  if (futureMs != null && createdMs - nowMs > futureMs) {
    return {
      kind: "outsideTimeWindow",
      message: `The ${what} was made in the future (created ${created}).`,
    };
  }
  if (maxAgeMs != null && nowMs - createdMs > maxAgeMs) {
    return {
      kind: "outsideTimeWindow",
      message: `The ${what} is too old (created ${created}); at most ${
        formatAge(maxAgeMs)
      } is accepted.`,
    };
  }
  return null;
}

function formatAge(ms: number): string {
  const hours = ms / 3_600_000;
  if (hours >= 48 && Number.isInteger(hours / 24)) return `${hours / 24} days`;
  if (hours >= 1 && Number.isInteger(hours)) return `${hours} hours`;
  return `${Math.round(ms / 1000)} seconds`;
}
