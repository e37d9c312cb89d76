import { getLogger } from "@logtape/logtape";
import {
  type BareItem,
  type InnerList,
  type Item,
  parseDictionary,
  serializeDictionary,
} from "structured-headers";

const logger = getLogger(["fedwork", "activitypub", "signatures"]);

/**
 * The longest `Accept-Signature` header read, in characters: a challenge
 * comes from any server a request was sent to, so a longer one is ignored
 * unparsed.
 * @since 0.4.0
 */
export const MAX_ACCEPT_SIGNATURE_LENGTH = 8192;

/**
 * How many members of an `Accept-Signature` header are read (each asks for
 * one more signature); the rest are ignored.
 * @since 0.4.0
 */
export const MAX_ACCEPT_SIGNATURE_MEMBERS = 4;

/**
 * How many covered components one member may ask for; a member asking for
 * more is ignored.
 * @since 0.4.0
 */
export const MAX_ACCEPT_SIGNATURE_COMPONENTS = 32;

/**
 * The signature parameters an `Accept-Signature` member may ask for
 * (RFC 9421 §5.1), as Fedify names them.
 * @since 0.4.0
 */
export interface AcceptSignatureParameters {
  /** The key the signer is asked to sign with. */
  keyid?: string;
  /** The algorithm the signer is asked to use, e.g. `"rsa-v1_5-sha256"`. */
  alg?: string;
  /** Whether a creation time is asked for (no value on the wire). */
  created?: true;
  /** Whether an expiration time is asked for (no value on the wire). */
  expires?: true;
  /** The nonce the signature is asked to carry. */
  nonce?: string;
  /** The tag the signature is asked to carry. */
  tag?: string;
}

/**
 * One covered component an `Accept-Signature` member asks for, with its
 * parameters kept as received (`;sf`, `;name="…"`, …), as Fedify shapes it.
 * @since 0.4.0
 */
export interface AcceptSignatureComponent {
  /** The component's name, e.g. `"@method"` or `"content-digest"`. */
  value: string;
  /** Its parameters; `{}` when it has none. */
  params: Record<string, unknown>;
}

/**
 * One member of an `Accept-Signature` header (RFC 9421 §5.1): one signature
 * the receiver asks for.
 * @since 0.4.0
 */
export interface AcceptSignatureMember {
  /** The signature's label, e.g. `"sig1"`. */
  label: string;
  /** The components the signature is asked to cover, in order. */
  components: AcceptSignatureComponent[];
  /** The signature parameters asked for. */
  parameters: AcceptSignatureParameters;
}

/**
 * What {@link fulfillAcceptSignature} makes of a challenge: the `rfc9421`
 * option of `signRequest()`.
 * @since 0.4.0
 */
export interface FulfillAcceptSignatureResult {
  /** The signature's label. */
  label: string;
  /** The components to cover, as asked for. */
  components: AcceptSignatureComponent[];
  /** The nonce asked for, if any. */
  nonce?: string;
  /** The tag asked for, if any. */
  tag?: string;
  /** Whether an expiration time was asked for. */
  expires?: true;
}

function parametersRecord(parameters: Map<string, BareItem>): Record<string, unknown> {
  return Object.fromEntries(parameters);
}

function memberOf(label: string, value: Item | InnerList): AcceptSignatureMember | null {
  const [items, parameters] = value;
  // A member is an inner list of component names; anything else asks for
  // nothing a signer could give.
  if (!Array.isArray(items)) return null;
  if (items.length > MAX_ACCEPT_SIGNATURE_COMPONENTS) {
    logger.warn(
      "Ignoring Accept-Signature member {label}: it asks for {count} components, more than " +
        "{max}.",
      { label, count: items.length, max: MAX_ACCEPT_SIGNATURE_COMPONENTS },
    );
    return null;
  }
  const components: AcceptSignatureComponent[] = [];
  for (const [name, itemParameters] of items) {
    if (typeof name === "string") {
      components.push({ value: name, params: parametersRecord(itemParameters) });
    }
  }
  const result: AcceptSignatureParameters = {};
  const text = (name: string) => {
    const value = parameters.get(name);
    return typeof value === "string" ? value : undefined;
  };
  const keyid = text("keyid");
  const alg = text("alg");
  const nonce = text("nonce");
  const tag = text("tag");
  if (keyid != null) result.keyid = keyid;
  if (alg != null) result.alg = alg;
  if (parameters.get("created") === true) result.created = true;
  if (parameters.get("expires") === true) result.expires = true;
  if (nonce != null) result.nonce = nonce;
  if (tag != null) result.tag = tag;
  return { label, components, parameters: result };
}

/**
 * Parses an `Accept-Signature` header (RFC 9421 §5.1, a structured-field
 * dictionary) into its members, as Fedify's function of the same name does.
 * The header comes from another server, so it is read within bounds: one
 * longer than {@link MAX_ACCEPT_SIGNATURE_LENGTH} characters gives no
 * members, only the first {@link MAX_ACCEPT_SIGNATURE_MEMBERS} members are
 * read, and a member asking for more than
 * {@link MAX_ACCEPT_SIGNATURE_COMPONENTS} components is dropped.
 * @param header The header's value.
 * @returns The members; empty when the header is malformed, too long or
 *          empty.
 * @since 0.4.0
 * @example
 * ```ts
 * import { parseAcceptSignature } from "@fedwork/core";
 *
 * const [member] = parseAcceptSignature(
 *   'sig1=("@method" "@target-uri" "content-digest");created;nonce="abc"',
 * );
 * console.log(member.label, member.parameters.nonce); // sig1 abc
 * ```
 */
export function parseAcceptSignature(header: string): AcceptSignatureMember[] {
  if (header.length > MAX_ACCEPT_SIGNATURE_LENGTH) {
    logger.warn("Ignoring an Accept-Signature header of {length} characters, more than {max}.", {
      length: header.length,
      max: MAX_ACCEPT_SIGNATURE_LENGTH,
    });
    return [];
  }
  let dictionary: Map<string, Item | InnerList>;
  try {
    dictionary = parseDictionary(header);
  } catch {
    logger.warn("Ignoring a malformed Accept-Signature header: {header}", { header });
    return [];
  }
  const members: AcceptSignatureMember[] = [];
  let read = 0;
  for (const [label, value] of dictionary) {
    if (read++ >= MAX_ACCEPT_SIGNATURE_MEMBERS) break;
    const member = memberOf(label, value);
    if (member != null) members.push(member);
  }
  return members;
}

/**
 * Serializes members into an `Accept-Signature` header (RFC 9421 §5.1), the
 * inverse of {@link parseAcceptSignature}.
 * @param members The members.
 * @returns The header's value.
 * @throws {TypeError} When a label, component or parameter cannot be
 *         written as a structured field (e.g. a non-ASCII nonce).
 * @since 0.4.0
 */
export function formatAcceptSignature(members: AcceptSignatureMember[]): string {
  const dictionary = new Map<string, InnerList>();
  for (const member of members) {
    const parameters = new Map<string, BareItem>();
    for (const name of ["keyid", "alg", "created", "expires", "nonce", "tag"] as const) {
      const value = member.parameters[name];
      if (value != null) parameters.set(name, value);
    }
    dictionary.set(member.label, [
      member.components.map((component): Item => [
        component.value,
        new Map(Object.entries(component.params) as [string, BareItem][]),
      ]),
      parameters,
    ]);
  }
  try {
    return serializeDictionary(dictionary);
  } catch (error) {
    throw new TypeError(`Cannot serialize the Accept-Signature members: ${String(error)}`);
  }
}

/**
 * Drops the members that cannot apply to a request: those asking to cover
 * `@status`, a response-only component (RFC 9421 §5), each with a warning.
 * @param members Parsed members.
 * @returns The members a request's signature can fulfil.
 * @since 0.4.0
 */
export function validateAcceptSignature(
  members: AcceptSignatureMember[],
): AcceptSignatureMember[] {
  return members.filter((member) => {
    if (member.components.every((component) => component.value !== "@status")) return true;
    logger.warn(
      "Ignoring Accept-Signature member {label}: it asks to cover @status, which only a " +
        "response has.",
      { label: member.label },
    );
    return false;
  });
}

/**
 * Turns a challenge member into the `rfc9421` option of `signRequest()`,
 * when the local key can fulfil it: an `alg` or `keyid` asked for must be
 * the local key's; the components, nonce, tag and `expires` are taken as
 * asked.
 * @param entry The member.
 * @param localKeyId The local key's id, e.g. the actor's `#main-key` URL.
 * @param localAlg The local key's algorithm, e.g. `"rsa-v1_5-sha256"`.
 * @returns The signing options, or `null` when the key cannot fulfil it.
 * @since 0.4.0
 */
export function fulfillAcceptSignature(
  entry: AcceptSignatureMember,
  localKeyId: string,
  localAlg: string,
): FulfillAcceptSignatureResult | null {
  if (entry.parameters.alg != null && entry.parameters.alg !== localAlg) return null;
  if (entry.parameters.keyid != null && entry.parameters.keyid !== localKeyId) return null;
  const result: FulfillAcceptSignatureResult = {
    label: entry.label,
    components: entry.components,
  };
  if (entry.parameters.nonce != null) result.nonce = entry.parameters.nonce;
  if (entry.parameters.tag != null) result.tag = entry.parameters.tag;
  if (entry.parameters.expires) result.expires = true;
  return result;
}
