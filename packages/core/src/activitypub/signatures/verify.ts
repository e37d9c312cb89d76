import type { Temporal } from "@js-temporal/polyfill";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import { prepareDraftCavage } from "./draft-cavage.ts";
import type { FetchedPublicKey, PublicKeyFetcher } from "./key-cache.ts";
import { prepareRfc9421 } from "./rfc9421.ts";
import { readBodyCapped } from "../../http/capped-body.ts";
import { type HttpSignatureSpec, verifyBytes } from "./spec.ts";
import {
  failure,
  MAX_SIGNATURES_PER_REQUEST,
  type SignatureCandidate,
  type SignatureFailure,
  type VerificationClock,
} from "./verification.ts";
import { messageOf } from "../json-values.ts";

/**
 * Options for {@link verifyRequest}.
 * @since 0.2.0
 */
export interface VerifyRequestOptions {
  /** Fetches the key a signature names, e.g. {@link createPublicKeyFetcher}.  Required. */
  readonly fetchKey: PublicKeyFetcher;
  /**
   * How far from now a signature's `Date` (or `created`) may be, in either
   * direction, or `false` to skip the check (tests with fixed requests).
   * @default `{ hours: 1 }`
   */
  readonly timeWindow?: DurationInput | false;
  /**
   * The time to verify at.
   * @default now
   */
  readonly currentTime?: Temporal.Instant;
  /**
   * The request's body, when the caller has already read it (an inbox
   * reads it once); otherwise the request is cloned and read.
   */
  readonly body?: Uint8Array | null;
  /**
   * The public origin (`https://example.com`) the sender signed for, when
   * it differs from the request's URL: behind a TLS-terminating proxy the
   * application sees `http://127.0.0.1:8000/inbox`, but RFC 9421's
   * `@target-uri` and `@authority` were signed for the public URL.  The
   * signed `host` header is then the origin's host too (since 0.4.0), not
   * the `Host` the request arrived with, which a proxy may have rewritten.
   * @default the request URL's origin (and the request's `Host` header)
   */
  readonly origin?: string | URL;
  /**
   * The largest body read when `body` is not given; a larger one fails
   * with `bodyTooLarge` before it is read whole.
   * @default 1 MiB
   * @since 0.3.0
   */
  readonly maxBodyBytes?: number;
}

/**
 * The default cap on a body {@link verifyRequest} reads itself: 1 MiB.
 * @since 0.3.0
 */
export const DEFAULT_MAX_SIGNED_BODY_BYTES = 1024 * 1024;

/**
 * A verified signature: which scheme, which key.
 * @since 0.2.0
 */
export interface VerifiedSignature {
  readonly verified: true;
  /** The scheme the request was signed with. */
  readonly spec: HttpSignatureSpec;
  /** The key id the signature named. */
  readonly keyId: URL;
  /** The key that verified it, with its owner. */
  readonly key: FetchedPublicKey;
  /**
   * RFC 9421: the label (`sig1`) of the signature that verified, among
   * those of the request's `Signature-Input`.
   * @since 0.4.0
   */
  readonly label?: string;
  /**
   * RFC 9421: the `nonce` parameter of the signature that verified, when
   * it has one; covered by that signature, unlike any other member's.
   * @since 0.4.0
   */
  readonly nonce?: string;
}

/**
 * The outcome of {@link verifyRequest}.
 * @since 0.2.0
 */
export type VerifyRequestResult = VerifiedSignature | SignatureFailure;

/**
 * Verifies a request's HTTP signature, in either scheme: RFC 9421 when it
 * has a `Signature-Input` header, draft-cavage otherwise.  Checks, before
 * fetching any key, that the signature covers a date or creation time, the
 * request's target on its server (draft-cavage: `(request-target)` and
 * `host`, on every request, which Mastodon does not require; RFC 9421:
 * `@method` and `@target-uri`) and the digest when there is a body, that
 * `Digest` or `Content-Digest` matches the body, and that the signature is
 * within the time window.  When a cached key fails,
 * the key is fetched again once, in case it was rotated.
 *
 * The work a request can cause is bounded: of an RFC 9421 request's
 * signatures, only the first three (`MAX_SIGNATURES_PER_REQUEST`) in the
 * order of its `Signature-Input` header are checked, one after the other
 * until one verifies, and the rest are refused without fetching their keys
 * (a draft-cavage request carries a single signature), so a request costs at
 * most three key fetches.
 *
 * Failures, including any header a sender could write (an invalid
 * component name, a garbled time or key id), are returned, not thrown.
 * @param request The request.
 * @param options The key fetcher, time window, clock and body.
 * @returns The verified signature, or why it was not accepted.
 * @throws {TypeError} When `timeWindow` is not a duration.
 * @since 0.2.0
 * @example
 * ```ts
 * import { createPublicKeyFetcher, MemoryKvStore, verifyRequest } from "@fedwork/core";
 * import type { DocumentLoader } from "@fedify/vocab";
 *
 * declare const documentLoader: DocumentLoader;
 * declare const request: Request;
 * const fetchKey = createPublicKeyFetcher({ kv: new MemoryKvStore(), documentLoader });
 * const result = await verifyRequest(request, { fetchKey });
 * if (result.verified) console.log(result.key.owner?.href);
 * else console.log(result.reason, result.message);
 * ```
 */
export async function verifyRequest(
  request: Request,
  options: VerifyRequestOptions,
): Promise<VerifyRequestResult> {
  const windowMs = options.timeWindow === false
    ? null
    : durationToMilliseconds(options.timeWindow ?? { hours: 1 }, "timeWindow");
  const clock: VerificationClock = {
    nowMs: options.currentTime?.epochMilliseconds ?? Date.now(),
    windowMs,
  };
  let body: Uint8Array | null;
  if (options.body !== undefined) body = options.body;
  else {
    // Read from a clone, and no further than the cap: the request is
    // anyone's, and its body may be endless.
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_SIGNED_BODY_BYTES;
    const read = await readBodyCapped(request.clone(), maxBodyBytes);
    if (read.truncated) {
      return failure("bodyTooLarge", `The body exceeds ${maxBodyBytes} bytes.`);
    }
    const method = request.method.toUpperCase();
    body = request.body == null ||
        (read.body.length === 0 && (method === "GET" || method === "HEAD"))
      ? null
      : read.body;
  }
  // The schemes read only the method, URL and headers, so a body-less view
  // can carry the public URL.
  let signedRequest = request;
  if (options.origin != null) {
    const url = new URL(request.url);
    const publicUrl = new URL(`${url.pathname}${url.search}`, options.origin);
    // The sender signed the Host it sent, the public one; a proxy may have
    // replaced it with the upstream's (nginx does unless told otherwise),
    // so the signed `host` is the public origin's, whatever arrived.
    const headers = new Headers(request.headers);
    headers.set("host", publicUrl.host);
    signedRequest = new Request(publicUrl, { method: request.method, headers });
  }
  let prepared: Awaited<ReturnType<typeof prepareRfc9421 | typeof prepareDraftCavage>>;
  try {
    prepared = signedRequest.headers.has("signature-input")
      ? await prepareRfc9421(signedRequest, body, clock)
      : await prepareDraftCavage(signedRequest, body, clock);
  } catch (error) {
    // The checks return every failure they know of; this is a sender who
    // found one they do not, and still only a refusal (logged by the caller).
    const message = messageOf(error);
    return failure("malformedSignature", `The signature cannot be read: ${message}`);
  }
  if ("verified" in prepared) return prepared;
  const candidates = Array.isArray(prepared)
    ? prepared.slice(0, MAX_SIGNATURES_PER_REQUEST)
    : [prepared];
  let firstFailure: SignatureFailure | null = null;
  for (const candidate of candidates) {
    const result = await verifyCandidate(candidate, options.fetchKey);
    if (result.verified) return result;
    firstFailure ??= result;
  }
  return firstFailure!;
}

async function verifyCandidate(
  candidate: SignatureCandidate,
  fetchKey: PublicKeyFetcher,
): Promise<VerifyRequestResult> {
  const { keyId } = candidate;
  let key = await fetchKey(keyId);
  if (key == null) return failure("keyNotFound", `The key ${keyId.href} cannot be fetched.`, keyId);
  const check = (publicKey: CryptoKey) =>
    verifyBytes(publicKey, candidate.algorithm, candidate.data, candidate.signature);
  let ok = await check(key.publicKey);
  if (!ok && key.cached) {
    // The key may have been rotated since it was cached.
    const fresh = await fetchKey(keyId, { refresh: true });
    if (fresh != null) {
      key = fresh;
      ok = await check(fresh.publicKey);
    }
  }
  if (!ok) {
    return failure(
      "invalidSignature",
      `The key ${keyId.href} does not verify the signature.`,
      keyId,
    );
  }
  return {
    verified: true,
    spec: candidate.spec,
    keyId,
    key,
    ...(candidate.label == null ? {} : { label: candidate.label }),
    ...(candidate.nonce == null ? {} : { nonce: candidate.nonce }),
  };
}
