import type { Recipient } from "@fedify/vocab";
import { type ContextHost, ContextImpl } from "./context.ts";
import type { InboxContext } from "./context-api.ts";
import { forwardActivity } from "../activitypub/outbox/send-activity.ts";
import type { SendActivityOptions, SenderIdentity } from "../activitypub/outbox/send-options.ts";
import { neverAborted } from "../processing/never-aborted.ts";

/**
 * The {@link InboxContext} implementation.  Internal.
 * @since 0.2.0
 */
export class InboxContextImpl<TContextData> extends ContextImpl<TContextData>
  implements InboxContext<TContextData> {
  readonly recipient: string | null;
  readonly signal: AbortSignal;
  readonly #host: ContextHost<TContextData>;
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
    host: ContextHost<TContextData>,
    url: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
    signal: AbortSignal = neverAborted(),
  ) {
    super(host, url, data);
    this.#host = host;
    this.recipient = recipient;
    this.#activity = activity;
    this.signal = signal;
  }

  override clone(data: TContextData): InboxContextImpl<TContextData> {
    return new InboxContextImpl(
      this.#host,
      this.url,
      data,
      this.recipient,
      this.#activity,
      this.signal,
    );
  }

  forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options: SendActivityOptions = {},
  ): Promise<void> {
    return forwardActivity(this.#host.outbox, this, forwarder, recipients, this.#activity, options);
  }
}
