import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import { ACTIVITY_JSON_MEDIA_TYPE } from "../http/negotiation.ts";
import { PrivateAddressError } from "../network/errors.ts";
import {
  DEFAULT_DELIVERY_TIMEOUT_MS,
  DEFAULT_MAX_REDIRECTS,
  fetchRemoteSigned,
  type RemoteResponse,
} from "../network/outgoing-http.ts";
import { signHeaders } from "../signatures/sign.ts";
import type { SignedBody } from "../signatures/signed-body.ts";
import { signedBodyOf } from "./body-cache.ts";
import {
  type HttpMessageSignaturesSpecDeterminer,
  type HttpSignatureSpec,
  otherHttpSignatureSpec,
  signatureAlgorithmOf,
} from "../signatures/spec.ts";
import { challengeMembers, signForChallenge } from "../signatures/challenge-signing.ts";
import type { AcceptSignatureMember } from "../signatures/accept-signature.ts";
import { MissingSigningKeyError } from "./errors.ts";
import { messageOf } from "../json-values.ts";
import { retryAfterMilliseconds } from "../host-policy/retry-after.ts";
import { DEFAULT_USER_AGENT } from "../../http/user-agent.ts";

const logger = getLogger(["fedwork", "activitypub", "outbox"]);

/** How long the scheme an origin accepted is remembered by default: 30 days. */
const DEFAULT_REMEMBER_SCHEME_MS = 30 * 86_400_000;

/**
 * A key a sender may sign deliveries with, e.g. an `ActorKeyPair`.
 * @since 0.2.0
 */
export interface SenderKey {
  /** The public key's id, e.g. `https://example.com/users/alice#main-key`. */
  readonly keyId: URL;
  readonly privateKey: CryptoKey;
}

/**
 * Options for {@link deliverSignedActivity}.
 * @since 0.2.0
 */
export interface DeliverSignedActivityOptions {
  /** The activity: a JSON-LD object, or its JSON text.  Required. */
  readonly activity: unknown;
  /** The inbox to POST to.  Required. */
  readonly inbox: URL;
  /**
   * The sender's keys, in order; the first RSASSA-PKCS1-v1_5 one signs
   * (Ed25519 keys are for object proofs, not HTTP signatures).  Required.
   */
  readonly keys: readonly SenderKey[];
  /** Where the scheme each origin accepted is remembered.  Required. */
  readonly kv: KvStore;
  /**
   * The scheme to try first with an origin not yet remembered.
   * @default `"rfc9421"`
   */
  readonly firstKnock?: HttpSignatureSpec;
  /**
   * The statuses that mean "never retry" (the inbox or its actor is gone).
   * @default `[404, 410]`
   */
  readonly permanentFailureStatusCodes?: readonly number[];
  /**
   * The `User-Agent` header.
   * @default `"Fedwork/<version>"`
   */
  readonly userAgent?: string;
  /**
   * Whether loopback and private addresses may be contacted (tests only).
   * @default `false`
   */
  readonly allowPrivateAddress?: boolean;
  /**
   * How many redirects to follow; each hop is re-signed for its URL and
   * checked against `allowPrivateAddress`.
   * @default `5`
   */
  readonly maxRedirects?: number;
  /**
   * How long the scheme an origin accepted is remembered; afterwards
   * `firstKnock` is tried again, so that a peer's upgrade is noticed.
   * @default `{ days: 30 }`
   */
  readonly rememberSchemeFor?: DurationInput;
  /**
   * The prefix of the remembered schemes' keys; the origin is appended.
   * @default `["fedwork", "http-signature-spec"]`
   */
  readonly kvPrefix?: KvKey;
  /**
   * Chooses the scheme of the first knock per origin and remembers the one
   * that worked, instead of the KV store (`kv`, `kvPrefix`,
   * `rememberSchemeFor` and `firstKnock` are then not used for that).
   * @default the KV store
   * @since 0.4.0
   */
  readonly specDeterminer?: HttpMessageSignaturesSpecDeterminer;
  /**
   * The time limit of one POST, redirects and the answer included; past
   * it the request is aborted and the outcome is `retryableFailure`.
   * @default 15 seconds
   * @since 0.3.0
   */
  readonly timeout?: DurationInput;
  /** Aborts the request. */
  readonly signal?: AbortSignal;
  /**
   * More headers for the POST, e.g. FEP-8fcf's
   * `Collection-Synchronization`; signed ones (`Date`, `Digest`,
   * `Signature`…) and `Content-Type` are Fedwork's.
   * @since 0.4.0
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How much of a failed delivery's answer is kept, for the logs: 4 KiB.
 * The rest is not read.
 * @since 0.3.0
 */
export const MAX_DELIVERY_ERROR_BODY_BYTES = 4096;

/**
 * The outcome of {@link deliverSignedActivity}:
 * - `delivered`: the inbox answered 2xx;
 * - `permanentFailure`: it answered a status in
 *   `permanentFailureStatusCodes` (stop; e.g. remove the follower), or the
 *   inbox is on a refused private address;
 * - `retryableFailure`: any other status (5xx, 408, 429, and also other
 *   4xx, which Fedify retries too), too many redirects, or a network
 *   error; retry later, signing again.
 * @since 0.2.0
 */
export type DeliveryResult =
  | {
    readonly kind: "delivered";
    readonly status: number;
    /** The scheme the inbox accepted. */
    readonly spec: HttpSignatureSpec;
    /** The URL that accepted it, after redirects. */
    readonly url: URL;
  }
  | {
    readonly kind: "permanentFailure" | "retryableFailure";
    /** The last status, or `null` when no response came. */
    readonly status: number | null;
    /**
     * The beginning of the last response's body, for logs: at most
     * {@link MAX_DELIVERY_ERROR_BODY_BYTES} bytes.
     */
    readonly body: string;
    /** The error, when there was no usable response. */
    readonly cause?: unknown;
    /**
     * How long the inbox asked to be left alone, in milliseconds: its
     * `Retry-After` on a 429 or 503; absent otherwise.
     * @since 0.4.0
     */
    readonly retryAfterMs?: number;
  };

type Attempt = { readonly response: RemoteResponse } | { readonly error: unknown };

/**
 * POSTs one activity to one inbox, signed with the sender's first RSA key
 * at the moment of sending, with Fedify's double knock: the scheme
 * remembered for the inbox's origin (or `firstKnock`) first and, on a 4xx or
 * 5xx, once more with the other scheme; the scheme that worked is
 * remembered per origin in the KV store.  Redirects are followed by hand,
 * re-signing for each URL and checking each hop against
 * `allowPrivateAddress`.
 *
 * Failures are returned, not thrown, so that the caller (the outbox worker)
 * decides about retries.
 * @param options The activity, inbox, keys, KV store and policy.
 * @returns The outcome.
 * @throws {MissingSigningKeyError} When no key is an RSA key.
 * @since 0.2.0
 * @example
 * ```ts
 * import { deliverSignedActivity, generateCryptoKeyPair, MemoryKvStore } from "@fedwork/core";
 *
 * const { privateKey } = await generateCryptoKeyPair();
 * const result = await deliverSignedActivity({
 *   activity: { "@context": "https://www.w3.org/ns/activitystreams", type: "Follow" },
 *   inbox: new URL("https://remote.example/users/bob/inbox"),
 *   keys: [{ keyId: new URL("https://example.com/users/alice#main-key"), privateKey }],
 *   kv: new MemoryKvStore(),
 * });
 * if (result.kind === "permanentFailure") console.log("remove the follower");
 * ```
 */
export async function deliverSignedActivity(
  options: DeliverSignedActivityOptions,
): Promise<DeliveryResult> {
  const { inbox, kv } = options;
  const key = options.keys.find((k) => signatureAlgorithmOf(k.privateKey) === "rsa-v1_5-sha256");
  if (key == null) throw new MissingSigningKeyError(inbox.href);
  const body = signedBodyOf(
    typeof options.activity === "string" ? options.activity : JSON.stringify(options.activity),
  );
  const permanent = options.permanentFailureStatusCodes ?? [404, 410];
  const rememberMs = options.rememberSchemeFor == null
    ? DEFAULT_REMEMBER_SCHEME_MS
    : durationToMilliseconds(options.rememberSchemeFor, "rememberSchemeFor");
  const schemeKey: KvKey = [
    ...(options.kvPrefix ?? ["fedwork", "http-signature-spec"]),
    inbox.origin,
  ];
  const determiner = options.specDeterminer;
  const remembered = determiner == null
    ? await kv.get<HttpSignatureSpec>(schemeKey)
    : await determiner.determineSpec(inbox.origin);
  const first = remembered === "rfc9421" || remembered === "draft-cavage-http-signatures-12"
    ? remembered
    : options.firstKnock ?? "rfc9421";
  const send = (spec: HttpSignatureSpec) => post(options, key, body, spec);

  let spec = first;
  let attempt = await send(spec);
  let knockAgain = isRefusal(attempt);
  if (knockAgain && "response" in attempt) {
    // RFC 9421 §5: the refusal may say how it wants to be signed.
    const members = challengeMembers(
      attempt.response.headers.get("accept-signature"),
      key.keyId,
      key.privateKey,
    );
    const answer = members.length === 0 ? null : await post(options, key, body, "rfc9421", members);
    if (answer != null && !("error" in answer && answer.error instanceof UnfulfillableChallenge)) {
      logger.debug("{inbox} answered {status} with an Accept-Signature challenge; fulfilled it.", {
        inbox: inbox.href,
        status: attempt.response.status,
        labels: members.map((member) => member.label),
      });
      spec = "rfc9421";
      attempt = answer;
      // Only a refused signature is worth the other scheme.
      knockAgain = "response" in answer &&
        (answer.response.status === 400 || answer.response.status === 401);
    }
  }
  if (knockAgain && "response" in attempt) {
    // Double knock: the peer may not know (or may reject) this scheme.
    const other = otherHttpSignatureSpec(first);
    logger.debug("{inbox} answered {status} to {spec}; trying {other}.", {
      inbox: inbox.href,
      status: attempt.response.status,
      spec,
      other,
    });
    spec = other;
    attempt = await send(spec);
  }
  if ("error" in attempt) {
    const { error } = attempt;
    const kind = error instanceof PrivateAddressError ? "permanentFailure" : "retryableFailure";
    // A remote party's failure is no bug here: its message, no stack trace.
    logger.warn("Failed to deliver to {inbox}: {message}", {
      inbox: inbox.href,
      message: messageOf(error),
    });
    return { kind, status: null, body: "", cause: error };
  }
  const { response } = attempt;
  const url = response.url;
  if (response.status >= 200 && response.status < 300) {
    if (determiner != null) await determiner.rememberSpec(inbox.origin, spec);
    else if (remembered !== spec) {
      await kv.set(schemeKey, spec, { ttl: { milliseconds: rememberMs } });
    }
    logger.debug("Delivered to {inbox} with {spec} (HTTP {status}).", {
      inbox: inbox.href,
      spec,
      status: response.status,
    });
    return { kind: "delivered", status: response.status, spec, url };
  }
  const text = response.text();
  const kind = permanent.includes(response.status) ? "permanentFailure" : "retryableFailure";
  logger.warn("Failed to deliver to {inbox}: HTTP {status}.", {
    inbox: inbox.href,
    status: response.status,
    kind,
  });
  const retryAfterMs = retryAfterOf(attempt);
  return {
    kind,
    status: response.status,
    body: text,
    ...(retryAfterMs == null ? {} : { retryAfterMs }),
  };
}

/**
 * The wait a 429 or 503 asked for; such an answer is about the server, not
 * the signature, so it gets no second knock.
 */
function retryAfterOf(attempt: { readonly response: RemoteResponse }): number | undefined {
  const { status, headers } = attempt.response;
  return retryAfterMilliseconds(status, headers.get("retry-after"), Date.now());
}

/** A refusal (4xx, 5xx) that is not a "come back later". */
function isRefusal(attempt: Attempt): boolean {
  return "response" in attempt && attempt.response.status >= 400 && retryAfterOf(attempt) == null;
}

/** Thrown by the signer when no challenge member could be signed for. */
class UnfulfillableChallenge extends Error {
  constructor() {
    super("No Accept-Signature member can be fulfilled.");
  }
}

async function post(
  options: DeliverSignedActivityOptions,
  key: SenderKey,
  body: SignedBody,
  spec: HttpSignatureSpec,
  challenge?: readonly AcceptSignatureMember[],
): Promise<Attempt> {
  try {
    const response = await fetchRemoteSigned(options.inbox, {
      method: "POST",
      headers: {
        ...options.headers,
        "Content-Type": ACTIVITY_JSON_MEDIA_TYPE,
        Accept: `${ACTIVITY_JSON_MEDIA_TYPE}, application/ld+json`,
      },
      body: body.bytes,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      allowPrivateAddress: options.allowPrivateAddress ?? false,
      timeout: options.timeout ?? { milliseconds: DEFAULT_DELIVERY_TIMEOUT_MS },
      maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
      // Only the beginning of an answer is kept, for the logs.
      maxBodyBytes: MAX_DELIVERY_ERROR_BODY_BYTES,
      oversizedBody: "truncate",
      // Signed at each hop, for its URL and this moment: never ahead of
      // time.  A moved inbox still wants the activity: POSTed again.
      signal: options.signal,
    }, async (request) => {
      if (challenge == null) {
        return signHeaders(request, key.privateKey, key.keyId, spec, body, Date.now());
      }
      const signed = await signForChallenge(
        request,
        key.privateKey,
        key.keyId,
        body,
        Date.now(),
        challenge,
      );
      if (signed === 0) throw new UnfulfillableChallenge();
    });
    return { response };
  } catch (error) {
    return { error };
  }
}
