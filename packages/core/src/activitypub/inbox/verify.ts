import type { DocumentLoader } from "@fedify/vocab";
import type { Temporal } from "@js-temporal/polyfill";
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import type { DurationInput } from "../../time/duration.ts";
import {
  createPublicKeyFetcher,
  doesKeyOwnerMatchActor,
  type FetchedPublicKey,
  type PublicKeyFetcher,
} from "../signatures/key-cache.ts";
import type { HttpSignatureSpec } from "../signatures/spec.ts";
import type { SignatureFailureReason } from "../signatures/verification.ts";
import { verifyRequest } from "../signatures/verify.ts";

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
}

/**
 * Why an inbox request was refused: a {@link SignatureFailureReason}, or
 * - `bodyTooLarge` (413): the body exceeds `maxBodySize`;
 * - `invalidJson` (400): the body is not a JSON object;
 * - `actorMismatch` (401): the signer is not the activity's `actor`.
 * @since 0.2.0
 */
export type InboxRejectionReason =
  | SignatureFailureReason
  | "bodyTooLarge"
  | "invalidJson"
  | "actorMismatch";

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
    /** The actor that signed the request: the activity's `actor`. */
    readonly signer: URL;
    /** The key that verified the signature. */
    readonly key: FetchedPublicKey;
    /** The scheme it was signed with. */
    readonly spec: HttpSignatureSpec;
  }
  | {
    readonly ok: false;
    /** The status to answer: 400, 401 or 413. */
    readonly status: 400 | 401 | 413;
    readonly reason: InboxRejectionReason;
    /** For people and logs; fine to send as the response body. */
    readonly message: string;
  };

async function readCapped(request: Request, maxBodySize: number): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBodySize) {
    await request.body?.cancel();
    return null;
  }
  if (request.body == null) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBodySize) {
      // Stop reading: a client may stream without end.
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Checks an inbox request before its activity is trusted: reads the body
 * once, refusing more than `maxBodySize` bytes (413) and anything but a
 * JSON object (400); verifies its HTTP signature in either scheme, fetching
 * and caching the key (401 when it fails); and checks that the key's owner
 * is the activity's `actor` (401 otherwise).  Consumes the request's body.
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
    status: 400 | 401 | 413,
    reason: InboxRejectionReason,
    message: string,
  ): InboxVerification => {
    logger.info("Refused an inbox request to {url}: {reason}: {message}", {
      url: request.url,
      reason,
      message,
    });
    return { ok: false, status, reason, message };
  };
  const body = await readCapped(request, maxBodySize);
  if (body == null) {
    return refuse(413, "bodyTooLarge", `The body exceeds ${maxBodySize} bytes.`);
  }
  let activity: unknown;
  try {
    activity = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return refuse(400, "invalidJson", "The body is not JSON.");
  }
  if (typeof activity !== "object" || activity == null || Array.isArray(activity)) {
    return refuse(400, "invalidJson", "The body is not a JSON object.");
  }
  const fetchKey = options.fetchKey ??
    createPublicKeyFetcher({ kv: options.kv, documentLoader: options.documentLoader });
  const verification = await verifyRequest(request, {
    fetchKey,
    body,
    ...(options.timeWindow === undefined ? {} : { timeWindow: options.timeWindow }),
    ...(options.currentTime === undefined ? {} : { currentTime: options.currentTime }),
    ...(options.origin === undefined ? {} : { origin: options.origin }),
  });
  if (!verification.verified) return refuse(401, verification.reason, verification.message);
  const { key } = verification;
  if (!doesKeyOwnerMatchActor(activity, key)) {
    return refuse(
      401,
      "actorMismatch",
      `The request is signed by ${
        key.owner?.href ?? `the key ${key.keyId.href} (owner unknown)`
      }, not by the activity's actor.`,
    );
  }
  return {
    ok: true,
    activity: activity as Record<string, unknown>,
    body,
    signer: key.owner!,
    key,
    spec: verification.spec,
  };
}
