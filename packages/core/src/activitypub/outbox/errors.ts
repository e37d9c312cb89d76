import { markRemoteFailureClass } from "../../processing/remote-failure.ts";

/**
 * Thrown when an activity is to be delivered but none of the sender's keys
 * is an RSASSA-PKCS1-v1_5 (SHA-256) key, the only kind every ActivityPub
 * server verifies HTTP signatures with.
 * @since 0.2.0
 */
export class MissingSigningKeyError extends TypeError {
  /** The inbox the activity was for. */
  readonly inbox: string;

  /**
   * @param inbox The inbox URL.
   */
  constructor(inbox: string) {
    super(
      `Cannot sign the delivery to ${inbox}: the sender has no RSASSA-PKCS1-v1_5 key. ` +
        'Give the actor an RSA key pair (generateCryptoKeyPair("RSASSA-PKCS1-v1_5")).',
    );
    this.name = "MissingSigningKeyError";
    this.inbox = inbox;
  }
}

/**
 * Thrown when an activity could not be delivered to an inbox: the inbox
 * answered with a non-2xx status, or no answer came.  The outbox worker
 * retries it according to `outboxRetryPolicy`, unless the status is a
 * permanent one.
 * @since 0.1.0
 */
export class DeliveryError extends Error {
  /** The inbox URL. */
  readonly inbox: string;
  /**
   * The HTTP status the inbox answered with, or `null` when no answer came
   * (a network error; see `cause`).  Nullable since 0.2.0.
   */
  readonly status: number | null;
  /**
   * How long the inbox asked to be left alone, in milliseconds (its
   * `Retry-After` on a 429 or 503), if it did.
   * @since 0.4.0
   */
  readonly retryAfterMs?: number;

  /**
   * @param inbox The inbox URL.
   * @param status The HTTP status, or `null`.
   * @param body The beginning of the response body, for the message.
   * @param cause The network error, when no answer came.
   * @param retryAfterMs The wait the inbox asked for (since 0.4.0).
   */
  constructor(
    inbox: string,
    status: number | null,
    body: string,
    cause?: unknown,
    retryAfterMs?: number,
  ) {
    super(
      status == null
        ? `Failed to deliver the activity to ${inbox}: ${
          cause instanceof Error ? cause.message : "no answer"
        }.`
        : `Failed to deliver the activity to ${inbox}: the inbox answered ${status}` +
          (body === "" ? "." : `: ${body}`),
      cause === undefined ? undefined : { cause },
    );
    this.name = "DeliveryError";
    this.inbox = inbox;
    this.status = status;
    if (retryAfterMs != null) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The HTTP status a failed delivery ended with, looked up along the error's
 * `cause` chain (a {@link DeliveryError} may be wrapped by the retry
 * machinery); `undefined` when no status is found within five links.
 * Internal: used by the failed-delivery records and the webhook payloads.
 * @param error The error a delivery failed with.
 * @returns The HTTP status, or `undefined`.
 * @since 0.3.0
 */
export function httpStatusOf(error: unknown): number | undefined {
  for (let current = error, depth = 0; current != null && depth < 5; depth++) {
    const status = (current as { status?: unknown }).status;
    if (typeof status === "number" && Number.isInteger(status)) return status;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

// A remote party's doing, not a bug here: logged without a stack.
markRemoteFailureClass(DeliveryError);

/**
 * Why a delivery was dropped without a request: its host is blocked by the
 * `hostPolicy.block` option.  The `error` of the delivery's `dropped`
 * event.
 * @since 0.4.0
 */
export class BlockedHostError extends Error {
  /** The blocked host's name. */
  readonly host: string;
  /** The inbox the delivery was for. */
  readonly inbox: string;

  /**
   * @param host The host's name.
   * @param inbox The inbox URL.
   */
  constructor(host: string, inbox: string) {
    super(`The host ${host} is blocked (hostPolicy.block); nothing was sent to ${inbox}.`);
    this.name = "BlockedHostError";
    this.host = host;
    this.inbox = inbox;
  }
}
