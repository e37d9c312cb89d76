import type { DocumentLoader } from "@fedify/vocab";
import type { Temporal } from "@js-temporal/polyfill";
import { getLogger } from "@logtape/logtape";
import { readBodyCapped } from "../../http/capped-body.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { DurationInput } from "../../time/duration.ts";
import {
  createPublicKeyFetcher,
  doesKeyOwnerMatchActor,
  type FetchedPublicKey,
  type PublicKeyFetcher,
} from "../signatures/key-cache.ts";
import { verifyLdSignature } from "../proofs/ld-signature.ts";
import { hasProof, verifyObject, type VerifyProofOptions } from "../proofs/proof.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import type { SignatureFailureReason } from "../signatures/verification.ts";
import { verifyRequest } from "../signatures/verify.ts";
import { parseActivityBody } from "./parse-activity.ts";
import { blockedActorHost, BlockedKeyHostError, guardKeyFetcher } from "./blocked-sender.ts";
import {
  type DocumentComplexityLimits,
  resolveDocumentComplexityLimits,
} from "../network/document-complexity.ts";

const logger = getLogger(["fedwork", "activitypub", "inbox"]);

/**
 * The default cap on an inbox request's body: 1 MiB, far above any activity
 * (Mastodon's own inbox refuses bodies over about 1 MB).
 * @since 0.2.0
 */
export const DEFAULT_MAX_INBOX_BODY_SIZE = 1024 * 1024;

/**
 * Options for {@link verifyInboxRequest}.
 * @since 0.2.0
 */
export interface VerifyInboxRequestOptions {
  /** Where fetched public keys are cached.  Required. */
  readonly kv: KvStore;
  /** Loads key documents (and claimed owners' documents).  Required. */
  readonly documentLoader: DocumentLoader;
  /**
   * How far from now a signature may be made, in either direction, or
   * `false` not to check.
   * @default `{ hours: 1 }`
   */
  readonly timeWindow?: DurationInput | false;
  /**
   * The largest body accepted, in bytes; larger ones get 413.
   * @default {@link DEFAULT_MAX_INBOX_BODY_SIZE} (1 MiB)
   */
  readonly maxBodySize?: number;
  /**
   * Fetches public keys; by default a {@link createPublicKeyFetcher} over
   * `kv` and `documentLoader` with its default TTL.
   */
  readonly fetchKey?: PublicKeyFetcher;
  /**
   * The time to verify at.
   * @default now
   */
  readonly currentTime?: Temporal.Instant;
  /**
   * The public origin the sender signed for, when the request's URL is not
   * it (behind a TLS-terminating proxy); see `VerifyRequestOptions.origin`.
   * @default the request URL's origin
   */
  readonly origin?: string | URL;
  /**
   * Whether to read and parse the body of a request that carries no
   * signature at all (still capped at `maxBodySize`), so that the refusal
   * holds its `activity`, e.g. for an `onUnverifiedActivity()` hook.
   * @default `false`: an unsigned request's body is not read
   * @since 0.3.0
   */
  readonly readUnsignedBody?: boolean;
  /**
   * The limits the activity is held to before any JSON-LD processing
   * (refused with `tooComplex` or `nestingTooDeep` past them).
   * @default {@link DEFAULT_DOCUMENT_COMPLEXITY_LIMITS}
   * @since 0.4.0
   */
  readonly documentLimits?: DocumentComplexityLimits;
  /**
   * The oldest `created` accepted of the Object Integrity Proof or Linked
   * Data signature that vouches for a forwarded activity (see
   * `VerifyProofOptions.maxAge`), or `false` not to check age; one made
   * further in the future than `timeWindow` is refused too.
   * @default `{ days: 7 }`
   * @since 0.4.0
   */
  readonly proofMaxAge?: DurationInput | false;
  /**
   * Whether a host is blocked: an activity whose `actor` is on a blocked
   * host is refused with `blockedHost` (403) once its body is parsed, and
   * a key on a blocked host is never fetched (`blockedHost` too).  Gets a
   * host name, normalised (lower case, punycode, no trailing dot or port).
   * @default no host is blocked
   * @since 0.4.0
   */
  readonly isBlockedHost?: (host: string) => boolean | Promise<boolean>;
}

/**
 * Why an inbox request was refused: a {@link SignatureFailureReason}, or
 * - `bodyTooLarge` (413): the body exceeds `maxBodySize`;
 * - `unreadableBody` (400): the body could not be read, e.g. the client
 *   went away (since 0.3.0);
 * - `invalidJson` (400): the body is not a JSON object;
 * - `nestingTooDeep` (400): the activity nests deeper than 64 levels
 *   (`MAX_ACTIVITY_DEPTH`, or the `maxDepth` document limit; since 0.3.0);
 * - `tooComplex` (400): the activity passes another document limit: too
 *   many `@context` entries, context terms or JSON values, too long a
 *   string, too much context work (see `DocumentComplexityLimits`; since
 *   0.4.0);
 * - `actorMismatch` (401): the signer is not the activity's `actor`, and
 *   the activity carries no proof or Linked Data signature by its actor
 *   that verifies;
 * - `blockedHost` (403): the activity's actor, or the key that signs it,
 *   is on a host `isBlockedHost` blocks (since 0.4.0).
 * @since 0.2.0
 */
export type InboxRejectionReason =
  | SignatureFailureReason
  | "bodyTooLarge"
  | "unreadableBody"
  | "invalidJson"
  | "nestingTooDeep"
  | "tooComplex"
  | "actorMismatch"
  | "blockedHost";

/**
 * The outcome of {@link verifyInboxRequest}: the activity and who signed
 * it, or the status and reason to answer with.
 * @since 0.2.0
 */
export type InboxVerification =
  | {
    readonly ok: true;
    /** The activity, parsed from the body. */
    readonly activity: Record<string, unknown>;
    /** The raw body, e.g. to enqueue or forward as is. */
    readonly body: Uint8Array;
    /**
     * The activity's `actor`, who signed the request or, for an activity
     * forwarded by someone else, made its proof or Linked Data signature.
     */
    readonly signer: URL;
    /** The key that verified the request's signature. */
    readonly key: FetchedPublicKey;
    /**
     * For an activity whose request was signed by someone else than its
     * actor (a forwarded one): the actor's key that verified its Object
     * Integrity Proof or its Linked Data signature.
     * @since 0.3.0
     */
    readonly proofKey?: FetchedPublicKey;
    /** The scheme it was signed with. */
    readonly spec: HttpSignatureSpec;
    /**
     * RFC 9421: the `nonce` parameter of the signature that verified, if
     * any (see `VerifiedSignature.nonce`).
     * @since 0.4.0
     */
    readonly nonce?: string;
  }
  | {
    readonly ok: false;
    /** The status to answer: 400, 401, 403 (since 0.4.0) or 413. */
    readonly status: 400 | 401 | 403 | 413;
    readonly reason: InboxRejectionReason;
    /** For people and logs; fine to send as the response body. */
    readonly message: string;
    /**
     * For a 401 whose body was read (a signature that failed, or no
     * signature with `readUnsignedBody`): the activity as it was sent,
     * unverified.
     * @since 0.3.0
     */
    readonly activity?: Record<string, unknown>;
    /**
     * For a signature that failed: the key it names, when it could be read.
     * @since 0.3.0
     */
    readonly keyId?: URL;
  };

/**
 * Checks an inbox request before its activity is trusted: refuses a request
 * with no signature header at all before reading its body (401); reads the
 * body once, refusing more than `maxBodySize` bytes (413, without reading
 * past the cap) and anything but a JSON object nesting at most 64 levels
 * (400); verifies its HTTP signature in either scheme, fetching and caching
 * the key, at most three signatures and so three key fetches per request
 * (401 when it fails); and checks that the key's owner is the activity's
 * `actor` or, when it is not (a forwarded activity), that the activity
 * carries an Object Integrity Proof or a Linked Data signature
 * (`RsaSignature2017`) made with a key of its `actor` no longer ago than
 * `proofMaxAge`, at most two proofs and one signature checked (401
 * otherwise).
 * Consumes the request's body.  Every refusal is logged once, at the debug
 * level: it is the sender's error, not ours.
 *
 * Deduplication and queueing are the caller's: answer 202 once the
 * activity is safely enqueued.
 * @param request The inbox request.
 * @param options The KV store and document loader for keys, the time
 *                window and the body cap.
 * @returns The activity and its signer, or the status and reason to answer.
 * @since 0.2.0
 * @example
 * ```ts
 * import { createFetchDocumentLoader, MemoryKvStore, verifyInboxRequest } from "@fedwork/core";
 *
 * const kv = new MemoryKvStore();
 * const documentLoader = createFetchDocumentLoader({
 *   userAgent: "MyApp/1.0",
 *   allowPrivateAddress: false,
 * });
 * async function inbox(request: Request): Promise<Response> {
 *   const result = await verifyInboxRequest(request, { kv, documentLoader });
 *   if (!result.ok) return new Response(result.message, { status: result.status });
 *   // Enqueue result.activity, signed by result.signer, then:
 *   return new Response(null, { status: 202 });
 * }
 * ```
 */
export async function verifyInboxRequest(
  request: Request,
  options: VerifyInboxRequestOptions,
): Promise<InboxVerification> {
  const maxBodySize = options.maxBodySize ?? DEFAULT_MAX_INBOX_BODY_SIZE;
  if (!Number.isSafeInteger(maxBodySize) || maxBodySize < 0) {
    throw new TypeError(
      `The maxBodySize option must be a non-negative integer; got ${maxBodySize}.`,
    );
  }
  const refuse = (
    status: 400 | 401 | 403 | 413,
    reason: InboxRejectionReason,
    message: string,
    extra: { readonly activity?: Record<string, unknown>; readonly keyId?: URL } = {},
  ): InboxVerification => {
    logger.debug("Refused an inbox request to {url}: {reason}: {message}", {
      url: request.url,
      reason,
      message,
    });
    return { ok: false, status, reason, message, ...extra };
  };
  if (!hasSignatureHeader(request.headers) && !options.readUnsignedBody) {
    // Nothing to verify: not worth reading the body.
    await request.body?.cancel().catch(() => {});
    return refuse(401, "noSignature", "The request is not signed.");
  }
  let body: Uint8Array;
  try {
    const read = await readBodyCapped(request, maxBodySize);
    if (read.truncated) {
      return refuse(413, "bodyTooLarge", `The body exceeds ${maxBodySize} bytes.`);
    }
    body = read.body;
  } catch {
    // The stream failed: the client went away mid-body.
    return refuse(400, "unreadableBody", "The body could not be read.");
  }
  const parsed = parseActivityBody(
    body,
    resolveDocumentComplexityLimits(options.documentLimits, "documentLimits"),
  );
  if (!parsed.ok) return refuse(400, parsed.reason, parsed.message);
  const { activity } = parsed;
  const { isBlockedHost } = options;
  if (isBlockedHost != null) {
    const blocked = await blockedActorHost(activity, isBlockedHost);
    if (blocked != null) {
      return refuse(403, "blockedHost", `The actor's host ${blocked} is blocked.`, { activity });
    }
  }
  if (!hasSignatureHeader(request.headers)) {
    return refuse(401, "noSignature", "The request is not signed.", { activity });
  }
  const anyKey = options.fetchKey ??
    createPublicKeyFetcher({ kv: options.kv, documentLoader: options.documentLoader });
  const fetchKey = isBlockedHost == null ? anyKey : guardKeyFetcher(anyKey, isBlockedHost);
  try {
    return await verifySignedActivity(request, options, activity, body, fetchKey, refuse);
  } catch (error) {
    if (!(error instanceof BlockedKeyHostError)) throw error;
    return refuse(403, "blockedHost", `The signing key's host ${error.host} is blocked.`, {
      activity,
      keyId: error.keyId,
    });
  }
}

async function verifySignedActivity(
  request: Request,
  options: VerifyInboxRequestOptions,
  activity: Record<string, unknown>,
  body: Uint8Array,
  fetchKey: PublicKeyFetcher,
  refuse: (
    status: 400 | 401 | 403 | 413,
    reason: InboxRejectionReason,
    message: string,
    extra?: { readonly activity?: Record<string, unknown>; readonly keyId?: URL },
  ) => InboxVerification,
): Promise<InboxVerification> {
  const verification = await verifyRequest(request, {
    fetchKey,
    body,
    ...(options.timeWindow === undefined ? {} : { timeWindow: options.timeWindow }),
    ...(options.currentTime === undefined ? {} : { currentTime: options.currentTime }),
    ...(options.origin === undefined ? {} : { origin: options.origin }),
  });
  if (!verification.verified) {
    return refuse(401, verification.reason, verification.message, {
      activity,
      ...(verification.keyId == null ? {} : { keyId: verification.keyId }),
    });
  }
  const { key } = verification;
  if (!doesKeyOwnerMatchActor(activity, key)) {
    const signedBy = `The request is signed by ${
      key.owner?.href ?? `the key ${key.keyId.href} (owner unknown)`
    }, not by the activity's actor`;
    // A forwarded activity (a reply Mastodon spreads to a thread's
    // followers): trusted when its actor's own proof or Linked Data
    // signature verifies, as Fedify does.
    const byActor = await verifyActorSignatures(activity, {
      fetchKey,
      ...(options.proofMaxAge === undefined ? {} : { maxAge: options.proofMaxAge }),
      ...(options.timeWindow === undefined ? {} : { timeWindow: options.timeWindow }),
      ...(options.currentTime === undefined ? {} : { currentTime: options.currentTime }),
    });
    if (!("key" in byActor)) {
      return refuse(401, "actorMismatch", `${signedBy}, and ${byActor.message}`);
    }
    const proofKey = byActor.key;
    return {
      ok: true,
      activity,
      body,
      signer: proofKey.owner!,
      key,
      proofKey,
      spec: verification.spec,
      ...(verification.nonce == null ? {} : { nonce: verification.nonce }),
    };
  }
  return {
    ok: true,
    activity,
    body,
    signer: key.owner!,
    key,
    spec: verification.spec,
    ...(verification.nonce == null ? {} : { nonce: verification.nonce }),
  };
}

/**
 * Finds the actor's key that verifies an activity's Object Integrity Proof
 * or, failing that, its Linked Data signature.  Bounded: two proofs and one
 * signature at most, so at most three key fetches, all through `fetchKey`.
 */
async function verifyActorSignatures(
  activity: Record<string, unknown>,
  options: VerifyProofOptions & { readonly fetchKey: PublicKeyFetcher },
): Promise<{ readonly key: FetchedPublicKey } | { readonly message: string }> {
  const reasons: string[] = [];
  if (hasProof(activity)) {
    const proofs = await verifyObject(activity, options);
    const key = proofs.verified
      ? proofs.keys.find((candidate) => doesKeyOwnerMatchActor(activity, candidate))
      : undefined;
    if (key != null) return { key };
    reasons.push(
      `its proof does not hold (${proofs.verified ? "not by the actor" : proofs.message})`,
    );
  }
  if (activity.signature !== undefined) {
    const signature = await verifyLdSignature(activity, options);
    if (signature.verified && doesKeyOwnerMatchActor(activity, signature.key)) {
      return { key: signature.key };
    }
    reasons.push(
      `its Linked Data signature does not hold (${
        signature.verified ? "not by the actor" : signature.message
      })`,
    );
  }
  return {
    message: reasons.length === 0
      ? "it carries neither a proof nor a Linked Data signature."
      : `${reasons.join("; ")}.`,
  };
}

/** Whether a request carries a signature in either scheme's header. */
function hasSignatureHeader(headers: Headers): boolean {
  return headers.has("signature-input") || headers.has("signature") ||
    /^signature\s/i.test(headers.get("authorization") ?? "");
}
