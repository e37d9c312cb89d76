/**
 * The header carrying the event's id, the same on every retry.
 * @since 0.2.0
 */
export const WEBHOOK_ID_HEADER = "Fedwork-Webhook-Id";

/**
 * The header carrying the signing time, in Unix seconds.
 * @since 0.2.0
 */
export const WEBHOOK_TIMESTAMP_HEADER = "Fedwork-Webhook-Timestamp";

/**
 * The header carrying the signature: `v2=<hex HMAC-SHA256 of
 * "<id>.<timestamp>.<event type>.<body>">`; several space-separated `v2=`
 * values may appear.  (Before 0.3.0 it was `v1=`, over
 * `"<timestamp>.<body>"` only; `v1=` values are ignored now.)
 * @since 0.2.0
 */
export const WEBHOOK_SIGNATURE_HEADER = "Fedwork-Webhook-Signature";

/**
 * The header naming the event type (`completed`, `failed`…), for routing
 * before parsing the body.  Signed since 0.3.0, and always equal to the
 * body's `type`.
 * @since 0.2.0
 */
export const WEBHOOK_EVENT_HEADER = "Fedwork-Webhook-Event";

/** The shortest and longest secret accepted. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;
export const MAX_WEBHOOK_SECRET_LENGTH = 1024;

/**
 * Returns why a secret is unusable, or `undefined` when it is fine.  The
 * message never contains the secret.
 * @param secret The candidate secret.
 * @returns The problem, in words.
 */
export function describeSecretProblem(secret: unknown): string | undefined {
  if (typeof secret !== "string") return `must be a string; got ${typeof secret}`;
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) {
    return `must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters long (got ` +
      `${secret.length}); use e.g. 32 random bytes in base64`;
  }
  if (secret.length > MAX_WEBHOOK_SECRET_LENGTH) {
    return `must be at most ${MAX_WEBHOOK_SECRET_LENGTH} characters long (got ${secret.length})`;
  }
  return undefined;
}

const encoder = new TextEncoder();

function importHmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
}

/** The version prefix of the signature values made and accepted. */
export const WEBHOOK_SIGNATURE_VERSION = "v2";

/**
 * Returns why an event id or type cannot be signed, or `undefined` when it
 * is fine.  Neither may contain a dot, so the signed string
 * `"<id>.<timestamp>.<event type>.<body>"` splits one way only (the
 * timestamp is digits): no two requests share a signed string.
 * @param what `"event id"` or `"event type"`, for the message.
 * @param value The candidate.
 * @returns The problem, in words.
 */
export function describeSignedFieldProblem(what: string, value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return `The ${what} must be a non-empty string.`;
  if (value.includes(".")) {
    return `The ${what} must not contain a dot; got ${JSON.stringify(value)}.`;
  }
  return undefined;
}

/**
 * Computes the HMAC-SHA256, with the secret, of
 * `"<eventId>.<timestamp>.<eventType>.<body>"` (UTF-8, the body's exact
 * bytes), which the `Fedwork-Webhook-Signature` header carries in hex after
 * `v2=`.  Since 0.3.0 it takes an options object and signs the event id and
 * type too.
 * @param options The secret, the event id and type, the signing time in
 *                Unix seconds, and the exact body (text, or the bytes
 *                received).
 * @returns The 32-byte MAC.
 * @since 0.2.0
 */
export async function computeWebhookSignature(options: {
  readonly secret: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly timestamp: number;
  readonly body: string | Uint8Array;
}): Promise<Uint8Array> {
  const key = await importHmacKey(options.secret);
  const prefix = encoder.encode(`${options.eventId}.${options.timestamp}.${options.eventType}.`);
  const body = typeof options.body === "string" ? encoder.encode(options.body) : options.body;
  const signed = new Uint8Array(prefix.byteLength + body.byteLength);
  signed.set(prefix, 0);
  signed.set(body, prefix.byteLength);
  const mac = await crypto.subtle.sign("HMAC", key, signed);
  return new Uint8Array(mac);
}

/**
 * Builds the headers of one webhook request: id, timestamp, event type and
 * signature (see {@link computeWebhookSignature}), which covers all three
 * and the body.
 * @param options The secret, the event id and type, the body and the time.
 * @returns The headers (with `Content-Type: application/json`).
 * @throws {TypeError} When the event id or type is empty or contains a dot.
 * @since 0.2.0
 */
export async function signWebhookRequest(options: {
  readonly secret: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly body: string;
  readonly timestamp?: number;
}): Promise<Headers> {
  for (
    const problem of [
      describeSignedFieldProblem("event id", options.eventId),
      describeSignedFieldProblem("event type", options.eventType),
    ]
  ) {
    if (problem != null) throw new TypeError(`signWebhookRequest(): ${problem}`);
  }
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const mac = await computeWebhookSignature({ ...options, timestamp });
  return new Headers({
    "Content-Type": "application/json",
    [WEBHOOK_ID_HEADER]: options.eventId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [WEBHOOK_EVENT_HEADER]: options.eventType,
    [WEBHOOK_SIGNATURE_HEADER]: `${WEBHOOK_SIGNATURE_VERSION}=${toHex(mac)}`,
  });
}

/**
 * Encodes bytes as lowercase hexadecimal.
 * @param bytes The bytes.
 * @returns The hex string.
 */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/**
 * Decodes lowercase or uppercase hexadecimal, or returns `undefined` when
 * the text is not hex.
 * @param hex The text.
 * @returns The bytes.
 */
export function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Compares two byte strings in time that depends only on their lengths,
 * so that a forger learns nothing from how long a rejection takes.
 * @param a One.
 * @param b The other.
 * @returns Whether they are equal.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}
