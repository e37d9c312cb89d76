import { Temporal } from "@js-temporal/polyfill";
import { type BareItem, type InnerList, type Item, serializeDictionary } from "structured-headers";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";

/**
 * What an inbox answers, on a 401 for a failed HTTP signature, to tell the
 * sender how to sign (an `Accept-Signature` challenge, RFC 9421 §5): the
 * `inboxChallengePolicy` option, the same shape as Fedify's.
 * @since 0.3.0
 */
export interface InboxChallengePolicy {
  /** Whether 401 answers carry an `Accept-Signature` header. */
  readonly enabled: boolean;
  /**
   * The components the sender is asked to cover; `@method`,
   * `@target-uri` and `@authority` are always asked for, `@status` never.
   * @default `["@method", "@target-uri", "@authority", "content-digest"]`
   */
  readonly components?: readonly string[];
  /**
   * Whether each challenge carries a one-time nonce, stored in the
   * federation's KvStore, that a later RFC 9421 signature must carry
   * (replay protection): as a parameter of the signature that verifies,
   * at the inbox that issued it (origin and path), once.  Requests signed with draft-cavage signatures,
   * which have no nonce, are not asked for one.
   * @default `false`
   */
  readonly requestNonce?: boolean;
  /**
   * How long a nonce is accepted, in seconds.
   * @default `300`
   */
  readonly nonceTtlSeconds?: number;
}

/**
 * The prefix of the keys nonces are stored under.
 * @since 0.3.0
 */
export const ACCEPT_SIGNATURE_NONCE_PREFIX: KvKey = ["_fedwork", "acceptSignatureNonce"];

const ALWAYS = ["@method", "@target-uri", "@authority"];
const DEFAULT_COMPONENTS = [...ALWAYS, "content-digest"];

/**
 * Checks the `inboxChallengePolicy` option.  Internal.
 * @param policy The option's value.
 * @returns The policy, or `undefined` when absent or not enabled.
 * @throws {TypeError} When it is malformed; the message names the field.
 * @throws {RangeError} When `nonceTtlSeconds` is not a positive integer.
 * @since 0.3.0
 */
export function checkInboxChallengePolicy(
  policy: InboxChallengePolicy | undefined,
): InboxChallengePolicy | undefined {
  if (policy == null) return undefined;
  const name = "inboxChallengePolicy";
  if (typeof policy !== "object") {
    throw new TypeError(`The ${name} option must be an object { enabled, components?, … }.`);
  }
  assertKnownOptions(policy, ["enabled", "components", "requestNonce", "nonceTtlSeconds"], {
    prefix: `${name}.`,
  });
  if (typeof policy.enabled !== "boolean") {
    throw new TypeError(`The ${name}.enabled option must be true or false.`);
  }
  if (
    policy.components != null &&
    (!Array.isArray(policy.components) ||
      !policy.components.every((c) => typeof c === "string" && c !== ""))
  ) {
    throw new TypeError(
      `The ${name}.components option must be an array of component names such as "@method".`,
    );
  }
  if (policy.requestNonce != null && typeof policy.requestNonce !== "boolean") {
    throw new TypeError(`The ${name}.requestNonce option must be true or false.`);
  }
  const ttl = policy.nonceTtlSeconds;
  if (ttl != null && (!Number.isSafeInteger(ttl) || ttl <= 0)) {
    throw new RangeError(
      `The ${name}.nonceTtlSeconds option must be a positive integer; got ${ttl}.`,
    );
  }
  return policy.enabled ? policy : undefined;
}

/**
 * What a nonce is bound to: the inbox that issued it, as its origin and
 * path (`https://example.com/users/bob/inbox`).  A nonce issued at one
 * inbox is refused at any other, of this server or another one sharing the
 * store.
 */
function inboxBinding(inbox: URL): string {
  return `${inbox.origin}${inbox.pathname}`;
}

/**
 * Makes the `Accept-Signature` header of a challenge: one member, `sig1`,
 * asking for the policy's components and a `created` time and, with
 * `requestNonce`, a fresh nonce stored in `kv`, bound to `inbox`.
 * @param policy The enabled policy.
 * @param kv Where the nonce is stored.
 * @param inbox The inbox's public URL (origin and path count; the query
 *              does not), the only one the nonce is accepted at.
 * @returns The header's value.
 * @since 0.3.0
 */
export async function createAcceptSignatureHeader(
  policy: InboxChallengePolicy,
  kv: KvStore,
  inbox: URL,
): Promise<string> {
  const components = [...new Set([...ALWAYS, ...(policy.components ?? DEFAULT_COMPONENTS)])]
    .filter((component) => component !== "@status");
  const parameters = new Map<string, BareItem>([["created", true]]);
  if (policy.requestNonce) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const nonce = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
      .replace(/=+$/, "");
    await kv.set([...ACCEPT_SIGNATURE_NONCE_PREFIX, nonce], inboxBinding(inbox), {
      ttl: Temporal.Duration.from({ seconds: policy.nonceTtlSeconds ?? 300 }),
    });
    parameters.set("nonce", nonce);
  }
  const member: InnerList = [
    components.map((component): Item => [component, new Map()]),
    parameters,
  ];
  return serializeDictionary(new Map([["sig1", member]]));
}

/**
 * The longest nonce looked up: the ones {@link createAcceptSignatureHeader}
 * issues have 22 characters.
 */
const MAX_NONCE_LENGTH = 64;

/**
 * Consumes the nonce of the RFC 9421 signature that verified a request
 * (`VerifiedSignature.nonce`), if a challenge issued it at this inbox and
 * it has not been used.  Each nonce is accepted once.  The nonce must be
 * the verified signature's own parameter, covered by it: a nonce in any
 * other `Signature-Input` member is something anyone could add to a
 * replayed request.
 * @param nonce The verified signature's `nonce` parameter, if any.
 * @param inbox The inbox's public URL, as given to
 *              {@link createAcceptSignatureHeader}.
 * @param kv Where the nonces are stored.
 * @returns Whether the nonce was issued at this inbox and is now used.
 * @since 0.3.0
 */
export async function consumeSignatureNonce(
  nonce: string | undefined,
  inbox: URL,
  kv: KvStore,
): Promise<boolean> {
  if (nonce == null || nonce === "" || nonce.length > MAX_NONCE_LENGTH) return false;
  const key: KvKey = [...ACCEPT_SIGNATURE_NONCE_PREFIX, nonce];
  const binding = inboxBinding(inbox);
  if (kv.cas != null) {
    // Marked used atomically, so that two replays racing cannot both pass;
    // the mark expires on its own.  A nonce presented at another inbox
    // fails the comparison and stays unused.
    return await kv.cas(key, binding, false, { ttl: Temporal.Duration.from({ minutes: 10 }) });
  }
  if (await kv.get(key) !== binding) return false;
  await kv.delete(key);
  return true;
}

/**
 * Adds an `Accept-Signature` challenge to a 401 response (with
 * `Cache-Control: no-store`, as each challenge may carry its own nonce).
 * @param response The 401 response.
 * @param policy The enabled policy, or `undefined` to leave it as is.
 * @param kv Where a nonce is stored.
 * @param inbox The inbox's public URL, which a nonce is bound to.
 * @returns The response with the challenge.
 * @since 0.3.0
 */
export async function withAcceptSignatureChallenge(
  response: Response,
  policy: InboxChallengePolicy | undefined,
  kv: KvStore,
  inbox: URL,
): Promise<Response> {
  if (policy == null) return response;
  const headers = new Headers(response.headers);
  headers.set("Accept-Signature", await createAcceptSignatureHeader(policy, kv, inbox));
  headers.set("Cache-Control", "no-store");
  const vary = headers.get("Vary");
  if (!/\bsignature\b/i.test(vary ?? "")) {
    headers.set("Vary", vary == null ? "Signature" : `${vary}, Signature`);
  }
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}
