import type { HttpSignatureSpec, SignatureAlgorithm } from "./spec.ts";

/**
 * Why a request's signature was not accepted.
 * - `noSignature`: the request carries no signature at all;
 * - `malformedSignature`: a signature header cannot be parsed or lacks a
 *   parameter;
 * - `unsupportedAlgorithm`: it names an algorithm or component Fedwork does
 *   not verify;
 * - `missingRequiredComponent`: it does not cover what is required (a
 *   date; the target and host, for draft-cavage on every request since
 *   0.4.0; the digest), or a covered header is absent;
 * - `missingDigest` / `digestMismatch`: the body is not covered by a
 *   digest, or the digest does not match it;
 * - `outsideTimeWindow`: it was made too long ago, in the future, or has
 *   expired;
 * - `keyNotFound`: the key could not be fetched;
 * - `invalidSignature`: the key does not verify the signature;
 * - `bodyTooLarge`: the body is larger than the verifier reads (since
 *   0.3.0).
 * @since 0.2.0
 */
export type SignatureFailureReason =
  | "noSignature"
  | "malformedSignature"
  | "unsupportedAlgorithm"
  | "missingRequiredComponent"
  | "missingDigest"
  | "digestMismatch"
  | "outsideTimeWindow"
  | "keyNotFound"
  | "invalidSignature"
  | "bodyTooLarge";

/**
 * A signature that was not accepted, and why.
 * @since 0.2.0
 */
export interface SignatureFailure {
  readonly verified: false;
  /** The reason, for programs. */
  readonly reason: SignatureFailureReason;
  /** The reason, for people (and logs). */
  readonly message: string;
  /** The key the signature claims, when it could be read. */
  readonly keyId?: URL;
}

/** A parsed signature waiting for its key: what to verify, with what. */
export interface SignatureCandidate {
  readonly spec: HttpSignatureSpec;
  readonly keyId: URL;
  /** The algorithm the signature names, or `null` to take the key's. */
  readonly algorithm: SignatureAlgorithm | null;
  /** The signing string (Cavage) or signature base (RFC 9421). */
  readonly data: Uint8Array;
  readonly signature: Uint8Array;
  /** RFC 9421: the signature's label, its key in `Signature-Input`. */
  readonly label?: string;
  /** RFC 9421: the signature's `nonce` parameter, when it is a string. */
  readonly nonce?: string;
}

/** The time checks a verifier applies: now, and the allowed skew. */
export interface VerificationClock {
  readonly nowMs: number;
  /** The allowed distance from now in either direction; `null` for none. */
  readonly windowMs: number | null;
}

/**
 * How many signatures of one request are verified at most: the first three
 * in the order they appear (RFC 9421's `Signature-Input` members; a
 * draft-cavage request carries one).  The rest are refused without being
 * read, so a request listing a hundred signatures, each naming its own key,
 * costs no more than three key fetches and three digests.
 * @since 0.3.0
 */
export const MAX_SIGNATURES_PER_REQUEST = 3;

export function failure(
  reason: SignatureFailureReason,
  message: string,
  keyId?: URL,
): SignatureFailure {
  return keyId == null
    ? { verified: false, reason, message }
    : { verified: false, reason, message, keyId };
}

/** Checks a signature's creation time (milliseconds) against the clock. */
export function checkCreated(
  createdMs: number,
  clock: VerificationClock,
  keyId?: URL,
): SignatureFailure | null {
  if (clock.windowMs == null) return null;
  const skew = createdMs - clock.nowMs;
  if (skew > clock.windowMs) {
    return failure("outsideTimeWindow", "The signature was made in the future.", keyId);
  }
  if (-skew > clock.windowMs) {
    return failure("outsideTimeWindow", "The signature is too old.", keyId);
  }
  return null;
}

export function parseKeyId(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * Reads a signature's `created` or `expires` parameter: whole seconds since
 * the epoch, as a non-negative integer or a string of up to 15 digits (the
 * range of an RFC 8941 integer).  Anything else, such as `"soon"` or
 * `1e400`, is `null`, so that it cannot turn into `NaN` and slip past the
 * time checks.
 */
export function parseSignatureTime(value: unknown): number | null {
  if (typeof value === "string") return /^\d{1,15}$/.test(value) ? Number(value) : null;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * Whether `name` may name a header in a signature: a lowercase HTTP token,
 * as both schemes require.  `Headers.get()` throws on anything else.
 */
export function isSignableHeaderName(name: string): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(name);
}
