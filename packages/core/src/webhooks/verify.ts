import {
  computeWebhookSignature,
  describeSecretProblem,
  fromHex,
  timingSafeEqual,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./signature.ts";
import type { WebhookPayload } from "./types.ts";

/**
 * Why {@link verifyWebhookRequest} refused a request.
 * @since 0.2.0
 */
export type WebhookVerificationFailure =
  | "missing-header"
  | "invalid-timestamp"
  | "timestamp-too-old"
  | "timestamp-in-future"
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
}

/**
 * Checks that a request is a Fedwork webhook request signed with the
 * secret, made within the tolerance of now, and returns its payload.  It
 * reads the request's body, which must not have been read.  The comparison
 * takes constant time.  Receivers should also skip an event id
 * (`Fedwork-Webhook-Id`, `payload.id`) they have already processed: a retry
 * sends the same event again.
 * @param request The incoming request.
 * @param options The secret and the tolerance.
 * @returns The payload.
 * @throws {WebhookVerificationError} When a header is missing, the
 *         timestamp is malformed, too old or in the future, no signature
 *         matches, or the body is not a webhook payload.
 * @throws {TypeError} When the options are invalid or the body was read.
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
 *     if (error instanceof WebhookVerificationError) return new Response(null, { status: 401 });
 *     throw error;
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
  if (request.bodyUsed) {
    throw new TypeError("verifyWebhookRequest() needs a request whose body was not read yet.");
  }
  const id = request.headers.get(WEBHOOK_ID_HEADER);
  const timestampText = request.headers.get(WEBHOOK_TIMESTAMP_HEADER);
  const signatureText = request.headers.get(WEBHOOK_SIGNATURE_HEADER);
  for (
    const [name, value] of [
      [WEBHOOK_ID_HEADER, id],
      [WEBHOOK_TIMESTAMP_HEADER, timestampText],
      [WEBHOOK_SIGNATURE_HEADER, signatureText],
    ] as const
  ) {
    if (value == null || value === "") {
      throw new WebhookVerificationError("missing-header", `The ${name} header is missing.`);
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
  const given = signatureText!.split(/[\s,]+/).flatMap((part) => {
    if (!part.startsWith("v1=")) return [];
    const bytes = fromHex(part.slice(3));
    return bytes == null ? [] : [bytes];
  });
  const body = await request.text();
  let matched = false;
  for (const secret of secrets) {
    const expected = await computeWebhookSignature(secret, timestamp, body);
    // Every candidate is compared, so the time taken does not tell which
    // one (or whether any) matched.
    for (const candidate of given) {
      if (timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      "invalid-signature",
      "No v1 signature of the request matches the secret: the body or timestamp was altered, " +
        "or the secret is wrong.",
    );
  }
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError("invalid-body", "The body is not JSON.");
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
  return payload as WebhookPayload;
}
