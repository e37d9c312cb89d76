import { readBodyCapped } from "../../http/capped-body.ts";
import {
  computeWebhookSignature,
  describeSecretProblem,
  describeSignedFieldProblem,
  fromHex,
  timingSafeEqual,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNATURE_VERSION,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./signature.ts";
import type { WebhookPayload } from "./types.ts";

/**
 * The default of {@link VerifyWebhookRequestOptions.maxBodyBytes}: 1 MiB,
 * far above a payload Fedwork sends (progress data is at most 4 KiB; only
 * a task's error message, sent whole, could make one long).
 */
const DEFAULT_MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * Why {@link verifyWebhookRequest} refused a request: a signed header is
 * absent (`missing-header`); the id or event header contains a dot, which
 * Fedwork never sends (`invalid-header`, since 0.3.0); the timestamp is not
 * Unix seconds, or is too far in the past or future; the body is longer
 * than `maxBodyBytes` (`body-too-large`, since 0.3.0); no signature matches;
 * or the body is not a payload matching the id and event headers.
 * @since 0.2.0
 */
export type WebhookVerificationFailure =
  | "missing-header"
  | "invalid-header"
  | "invalid-timestamp"
  | "timestamp-too-old"
  | "timestamp-in-future"
  | "body-too-large"
  | "invalid-signature"
  | "invalid-body";

/**
 * Thrown by {@link verifyWebhookRequest} when a request is not a genuine,
 * fresh Fedwork webhook request.  Answer it with 400 or 401 and do not act
 * on the body.
 * @since 0.2.0
 */
export class WebhookVerificationError extends Error {
  /** Why, as a code. */
  readonly reason: WebhookVerificationFailure;

  /**
   * @param reason Why, as a code.
   * @param message Why, in words.
   */
  constructor(reason: WebhookVerificationFailure, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/**
 * Options for {@link verifyWebhookRequest}.
 * @since 0.2.0
 */
export interface VerifyWebhookRequestOptions {
  /**
   * The webhook's secret; several during a rotation (a signature by any of
   * them is accepted).  Required.
   */
  readonly secret: string | readonly string[];
  /**
   * How far the signing time may be from now, in seconds, in either
   * direction; older (replayed) and future requests are refused.
   * @default `300`
   */
  readonly toleranceSeconds?: number;
  /** The current time, for tests.  `Date.now()` by default. */
  readonly now?: Date;
  /**
   * The longest body read, in bytes.  A longer one is refused with
   * `body-too-large` before it is buffered: on its `Content-Length` without
   * reading it, or, when streamed, as soon as the bytes read pass the limit
   * (the rest is not read).  A non-negative safe integer.
   * @default `1048576` (1 MiB)
   * @since 0.3.0
   */
  readonly maxBodyBytes?: number;
}

/**
 * Checks that a request is a Fedwork webhook request signed with the
 * secret, made within the tolerance of now, and returns its payload.  The
 * signature (`v2=`) covers the event id, the timestamp, the event type and
 * the body's exact bytes, and the body's `id` and `type` must equal the
 * `Fedwork-Webhook-Id` and `Fedwork-Webhook-Event` headers, so the
 * payload's `type` is the verified event type.  It reads the request's
 * body, which must not have been read, refusing one longer than
 * `maxBodyBytes` before buffering it.  The comparison takes constant time.
 * Receivers should also skip an event id (`Fedwork-Webhook-Id`,
 * `payload.id`) they have already processed: a retry sends the same event
 * again.
 * @param request The incoming request.
 * @param options The secret, the tolerance and the body size limit.
 * @returns The payload, whose `id` and `type` are the signed headers'.
 * @throws {WebhookVerificationError} When a header is missing or
 *         malformed, the timestamp is too old or in the future, the body is
 *         too large, no signature matches, or the body is not a webhook
 *         payload matching the headers.
 * @throws {TypeError} When the options are invalid (the message names the
 *         option) or the body was read.
 * @throws {unknown} What the body stream throws when the sender goes away
 *         in the middle of it.
 * @since 0.2.0
 * @example
 * ```ts
 * import { verifyWebhookRequest, WebhookVerificationError } from "@fedwork/core";
 *
 * async function receive(request: Request): Promise<Response> {
 *   try {
 *     const payload = await verifyWebhookRequest(request, { secret: Deno.env.get("HOOK_SECRET")! });
 *     console.log(payload.type, payload.task.name, payload.task.id);
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (!(error instanceof WebhookVerificationError)) throw error;
 *     return new Response(null, { status: error.reason === "body-too-large" ? 413 : 401 });
 *   }
 * }
 * ```
 */
export async function verifyWebhookRequest(
  request: Request,
  options: VerifyWebhookRequestOptions,
): Promise<WebhookPayload> {
  const secrets = typeof options?.secret === "string" ? [options.secret] : options?.secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new TypeError("The secret option of verifyWebhookRequest() is required.");
  }
  for (const secret of secrets) {
    const problem = describeSecretProblem(secret);
    if (problem != null) {
      throw new TypeError(`The secret option of verifyWebhookRequest() ${problem}.`);
    }
  }
  const tolerance = options.toleranceSeconds ?? 300;
  if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(
      "The toleranceSeconds option of verifyWebhookRequest() must be a non-negative number.",
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new TypeError(
      "The maxBodyBytes option of verifyWebhookRequest() must be a non-negative integer; got " +
        `${typeof maxBodyBytes === "number" ? maxBodyBytes : typeof maxBodyBytes}.`,
    );
  }
  if (request.bodyUsed) {
    throw new TypeError("verifyWebhookRequest() needs a request whose body was not read yet.");
  }
  const id = request.headers.get(WEBHOOK_ID_HEADER);
  const eventType = request.headers.get(WEBHOOK_EVENT_HEADER);
  const timestampText = request.headers.get(WEBHOOK_TIMESTAMP_HEADER);
  const signatureText = request.headers.get(WEBHOOK_SIGNATURE_HEADER);
  for (
    const [name, value] of [
      [WEBHOOK_ID_HEADER, id],
      [WEBHOOK_EVENT_HEADER, eventType],
      [WEBHOOK_TIMESTAMP_HEADER, timestampText],
      [WEBHOOK_SIGNATURE_HEADER, signatureText],
    ] as const
  ) {
    if (value == null || value === "") {
      throw new WebhookVerificationError("missing-header", `The ${name} header is missing.`);
    }
  }
  for (
    const [name, what, value] of [
      [WEBHOOK_ID_HEADER, "event id", id],
      [WEBHOOK_EVENT_HEADER, "event type", eventType],
    ] as const
  ) {
    if (describeSignedFieldProblem(what, value) != null) {
      throw new WebhookVerificationError(
        "invalid-header",
        `The ${name} header contains a dot, which no Fedwork webhook request does.`,
      );
    }
  }
  if (!/^\d{1,12}$/.test(timestampText!)) {
    throw new WebhookVerificationError(
      "invalid-timestamp",
      `The ${WEBHOOK_TIMESTAMP_HEADER} header must be Unix seconds.`,
    );
  }
  const timestamp = Number(timestampText);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (timestamp < now - tolerance) {
    throw new WebhookVerificationError(
      "timestamp-too-old",
      `The request was signed ${now - timestamp} s ago, more than the tolerance of ` +
        `${tolerance} s: it may be a replay.`,
    );
  }
  if (timestamp > now + tolerance) {
    throw new WebhookVerificationError(
      "timestamp-in-future",
      `The request claims to be signed ${timestamp - now} s in the future, more than the ` +
        `tolerance of ${tolerance} s.`,
    );
  }
  const versionPrefix = `${WEBHOOK_SIGNATURE_VERSION}=`;
  const given = signatureText!.split(/[\s,]+/).flatMap((part) => {
    if (!part.startsWith(versionPrefix)) return [];
    const bytes = fromHex(part.slice(versionPrefix.length));
    return bytes == null ? [] : [bytes];
  });
  // Refused before its body costs anything (e.g. a sender older than 0.3.0).
  if (given.length === 0) {
    throw new WebhookVerificationError(
      "invalid-signature",
      `The ${WEBHOOK_SIGNATURE_HEADER} header has no ${WEBHOOK_SIGNATURE_VERSION}= value ` +
        "(Fedwork before 0.3.0 sent v1=, which is no longer accepted).",
    );
  }
  const read = await readBodyCapped(request, maxBodyBytes);
  if (read.truncated) {
    throw new WebhookVerificationError(
      "body-too-large",
      `The body is longer than ${maxBodyBytes} bytes (the maxBodyBytes option); the rest of it ` +
        "was not read.",
    );
  }
  const body = read.body;
  let matched = false;
  for (const secret of secrets) {
    const expected = await computeWebhookSignature({
      secret,
      eventId: id!,
      eventType: eventType!,
      timestamp,
      body,
    });
    // Every candidate is compared, so the time taken does not tell which
    // one (or whether any) matched.
    for (const candidate of given) {
      if (timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      "invalid-signature",
      `No ${WEBHOOK_SIGNATURE_VERSION} signature of the request matches the secret: the body, ` +
        "the id, the timestamp or the event type was altered, or the secret is wrong.",
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError("invalid-body", "The body is not JSON in UTF-8.");
  }
  if (
    typeof payload !== "object" || payload == null ||
    (payload as { id?: unknown }).id !== id ||
    typeof (payload as { type?: unknown }).type !== "string" ||
    typeof (payload as { task?: unknown }).task !== "object"
  ) {
    throw new WebhookVerificationError(
      "invalid-body",
      `The body is not a webhook payload whose id matches the ${WEBHOOK_ID_HEADER} header.`,
    );
  }
  // Both are signed, but a receiver may route on either: they must agree.
  if ((payload as { type: string }).type !== eventType) {
    throw new WebhookVerificationError(
      "invalid-body",
      `The body's type does not match the ${WEBHOOK_EVENT_HEADER} header.`,
    );
  }
  return payload as WebhookPayload;
}
