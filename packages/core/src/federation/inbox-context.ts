import type { Recipient } from "@fedify/vocab";
import { type Context, type ContextHost, ContextImpl } from "./context.ts";
import type { SendActivityOptions, SenderIdentity } from "./send-activity.ts";

/**
 * The context inbox listeners (and the inbox error handler) get.
 * @typeParam TContextData The type of the application data.
 * @since 0.2.0
 */
export interface InboxContext<TContextData> extends Context<TContextData> {
  /**
   * The identifier of the actor whose inbox received the activity, or
   * `null` when it came through the shared inbox.
   */
  readonly recipient: string | null;

  /**
   * Aborted when processing this activity runs past the federation's
   * `inboxTimeout` (with a `HandlerTimeoutError` as its reason) or when the
   * worker shuts down.  Pass it on to what the listener awaits (`fetch()`,
   * a database query), or check it between steps, and throw soon after it
   * aborts: the activity is then retried.  A listener still running after
   * the federation's `timeoutGracePeriod` is abandoned: the worker moves on
   * and leaves it running.  Never aborts for listeners run in the request
   * (without an inbox queue).
   * @since 0.3.0
   */
  readonly signal: AbortSignal;

  /**
   * Forwards the received activity, exactly as it was received (so that
   * its proofs or signatures stay valid), to other inboxes, signing the
   * requests as `forwarder` (e.g. a reply to your actor's post forwarded to
   * its followers).  Receivers that trust only HTTP signatures refuse a
   * forwarded activity whose actor is not the forwarder, unless it carries
   * an object proof they verify.
   * @param forwarder Your actor that forwards.
   * @param recipients The recipients, or `"followers"` for the forwarder's
   *                   followers.
   * @param options Shared inbox preference, fan-out and ordering.
   * @returns Resolves once enqueued (or delivered, without an outbox queue).
   * @throws {TypeError} When an argument is malformed.
   */
  forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options?: SendActivityOptions,
  ): Promise<void>;
}

/**
 * What an {@link InboxContextImpl} needs besides a context's host.
 * Internal.
 * @since 0.2.0
 */
export interface InboxContextHost<TContextData> extends ContextHost<TContextData> {
  forwardActivity(
    ctx: Context<TContextData>,
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Readonly<Record<string, unknown>>,
    options: SendActivityOptions,
  ): Promise<void>;
}

/**
 * The {@link InboxContext} implementation.  Internal.
 * @since 0.2.0
 */
export class InboxContextImpl<TContextData> extends ContextImpl<TContextData>
  implements InboxContext<TContextData> {
  readonly recipient: string | null;
  readonly signal: AbortSignal;
  readonly #host: InboxContextHost<TContextData>;
  readonly #activity: Readonly<Record<string, unknown>>;

  /**
   * @param host The federation's internals.
   * @param url The base URL the activity was received at.
   * @param data The application data.
   * @param recipient The personal inbox's identifier, or `null`.
   * @param activity The activity as received.
   * @param signal The listener's signal; never aborted by default.
   */
  constructor(
    host: InboxContextHost<TContextData>,
    url: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
    signal: AbortSignal = NEVER_ABORTED,
  ) {
    super(host, url, data);
    this.#host = host;
    this.recipient = recipient;
    this.#activity = activity;
    this.signal = signal;
  }

  forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options: SendActivityOptions = {},
  ): Promise<void> {
    return this.#host.forwardActivity(this, forwarder, recipients, this.#activity, options);
  }
}

const NEVER_ABORTED = new AbortController().signal;
