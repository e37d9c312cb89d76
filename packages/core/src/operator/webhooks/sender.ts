// Sending one webhook request, and what its answer does to the webhook:
// success resets its failure count, failures disable it (unless static) and
// start a chain of probes that enables it again, and the webhook's own retry
// policy schedules the next attempt.  FederationWebhooks (webhooks.ts) turns
// events into these requests.
import { getLogger } from "@logtape/logtape";
import { PrivateAddressError } from "../../activitypub/network/errors.ts";
import { fetchRemote } from "../../activitypub/network/outgoing-http.ts";
import { PermanentError } from "../../processing/errors.ts";
import { WebhookDeliveryError } from "./errors.ts";
import { webhookRetryDelayMs } from "./headers.ts";
import { signWebhookRequest } from "./signature.ts";
import { type StoredWebhook, toWebhook, type WebhookStore } from "./store.ts";
import type { ResolvedWebhookOptions } from "./options.ts";
import { expandWebhookUrl, webhookUrlValues } from "./url-template.ts";

const logger = getLogger(["fedwork", "webhook"]);

/**
 * One request to send (the built-in webhook task's payload).  `attempt` counts the attempts made under the
 * webhook's own retry policy; `probe` marks a probe of a disabled webhook
 * (the id of its probe chain).
 */
export type WebhookTaskData =
  & Record<"webhookId" | "eventId" | "eventType" | "body", string>
  & {
    readonly attempt?: string;
    readonly probe?: string;
    /** The W3C trace context of the task the event is about. */
    readonly traceparent?: string;
    readonly tracestate?: string;
  };

/** How long a run of successes may leave `lastSuccessAt` behind. */
const LAST_SUCCESS_PRECISION_MS = 60_000;

/** What the webhook task's handler reads of its context. */
export interface WebhookTaskContext {
  readonly task: { readonly signal: AbortSignal };
  /** The base URL the task was enqueued with; retries and probes keep it. */
  readonly origin: string;
}

/**
 * What {@link WebhookSender} needs from the federation.  Internal.
 * @since 0.3.0
 */
export interface WebhookSenderPort {
  /** Where webhooks are stored. */
  readonly store: WebhookStore;
  /** How requests leave: the federation's outgoing-HTTP settings. */
  readonly http: {
    readonly userAgent: string;
    readonly allowPrivateAddress: boolean;
    readonly maxRedirects: number;
  };
  /** Enqueues a later request (a retry or a probe) of the webhook task. */
  readonly enqueueData: (
    ctx: WebhookTaskContext,
    data: WebhookTaskData,
    options: { readonly delayMs: number },
  ) => Promise<void>;
}

/**
 * Sends webhook requests for the built-in webhook task, and keeps each
 * webhook's state (failures, disabling, probes) from their answers.
 * Internal.
 * @since 0.3.0
 */
export class WebhookSender {
  readonly #port: WebhookSenderPort;
  readonly #options: ResolvedWebhookOptions;
  readonly #store: WebhookStore;

  /**
   * @param port What sending needs from the federation.
   * @param options The resolved `webhooks` option.
   */
  constructor(port: WebhookSenderPort, options: ResolvedWebhookOptions) {
    this.#port = port;
    this.#options = options;
    this.#store = port.store;
  }

  /**
   * Runs one webhook task: sends the request (or the probe) it describes.
   * @param ctx What the task's handler knows of its run.
   * @param data The request to send.
   * @throws {PermanentError} When the request must not be retried.
   * @throws {WebhookDeliveryError} When the task-level retry policy retries it.
   */
  async send(ctx: WebhookTaskContext, data: WebhookTaskData): Promise<void> {
    const webhook = await this.#store.get(data.webhookId);
    if (data.probe != null) return await this.#probe(ctx, data, webhook);
    if (webhook == null || !webhook.enabled) {
      logger.info("Skipped the event {eventId}: the webhook {webhookId} is {state}.", {
        eventId: data.eventId,
        webhookId: data.webhookId,
        state: webhook == null ? "removed" : "disabled",
      });
      return;
    }
    const sent = await this.#request(ctx, webhook, data);
    if (sent.ok) {
      await this.#recordSuccess(webhook, false);
      logger.debug("Sent the event {eventId} to the webhook {webhookId} (HTTP {status}).", {
        eventId: data.eventId,
        webhookId: webhook.id,
        status: sent.status,
      });
      return;
    }
    const { failure, permanent } = sent;
    // Stopped by its worker (a shutdown, a time limit) rather than refused
    // by the receiver: that says nothing of the receiver, so it neither
    // counts against the webhook nor disables it; the task runs again.
    if (ctx.task.signal?.aborted === true) throw failure;
    const threshold = this.#options.disableAfterFailures;
    let disabledNow = false;
    const now = Date.now();
    const probeId = crypto.randomUUID();
    const updated = await this.#store.update(webhook.id, (current) => {
      const consecutiveFailures = current.consecutiveFailures + 1;
      const disable = current.enabled && current.static !== true &&
        consecutiveFailures >= threshold;
      disabledNow = disable;
      return {
        ...current,
        consecutiveFailures,
        lastError: describeFailure(failure),
        lastFailureAt: now,
        ...(disable
          ? {
            enabled: false,
            disabledAt: now,
            probe: { id: probeId, round: 0, nextAt: now + this.#options.probeInitialDelayMs },
          }
          : {}),
      };
    });
    if (disabledNow && updated != null) {
      logger.warn(
        "Disabled the webhook {webhookId} ({url}) after {failures} failed requests in a row; " +
          "it is probed again in {delayMs} ms.",
        {
          webhookId: webhook.id,
          url: webhook.url,
          failures: updated.consecutiveFailures,
          delayMs: this.#options.probeInitialDelayMs,
        },
      );
      await this.#scheduleProbe(
        ctx,
        data,
        webhook.id,
        probeId,
        this.#options.probeInitialDelayMs,
      );
      try {
        await this.#options.onDisabled?.(toWebhook(updated));
      } catch (error) {
        logger.error("The webhooks.onDisabled callback threw: {error}", { error });
      }
    }
    if (permanent || (updated != null && !updated.enabled)) {
      throw new PermanentError(failure.message, { cause: failure });
    }
    const policy = updated?.retryPolicy ?? webhook.retryPolicy;
    if (policy == null) throw failure;
    // The webhook's own policy: the retry is a new message with its delay,
    // and the task-level policy is not used (it cannot tell webhooks apart).
    const failedAttempts = Number(data.attempt ?? "0") + 1;
    const delayMs = webhookRetryDelayMs(policy, failedAttempts);
    if (delayMs == null) throw new PermanentError(failure.message, { cause: failure });
    await this.#port.enqueueData(ctx, { ...data, attempt: String(failedAttempts) }, { delayMs });
    logger.info(
      "The event {eventId} to the webhook {webhookId} failed ({error}); attempt {attempt} " +
        "follows in {delayMs} ms.",
      {
        eventId: data.eventId,
        webhookId: webhook.id,
        error: describeFailure(failure),
        attempt: failedAttempts,
        delayMs,
      },
    );
  }

  /**
   * Sends one signed request, with the webhook's extra headers and the
   * trace context of the active span (the webhook task's), and says how it
   * went; never throws.
   */
  async #request(
    ctx: WebhookTaskContext,
    webhook: StoredWebhook,
    data: WebhookTaskData,
  ): Promise<
    | { readonly ok: true; readonly status: number }
    | { readonly ok: false; readonly failure: WebhookDeliveryError; readonly permanent: boolean }
  > {
    const { allowPrivateAddress, userAgent, maxRedirects } = this.#port.http;
    let url: URL;
    try {
      url = expandWebhookUrl(
        webhook.url,
        webhookUrlValues(webhook.id, data.eventId, data.eventType, data.body),
      );
    } catch (error) {
      // The same values would fill it in the same way at every retry.
      return {
        ok: false,
        permanent: true,
        failure: new WebhookDeliveryError(webhook.id, webhook.url, null, String(error), error),
      };
    }
    try {
      const signed = await signWebhookRequest({
        secret: webhook.secret,
        eventId: data.eventId,
        eventType: data.eventType,
        body: data.body,
      });
      const headers = new Headers(webhook.headers);
      for (const [name, value] of new Headers(signed)) headers.set(name, value);
      // The receiver's span joins the trace of the task the event is
      // about (its enqueuing span is the parent).
      if (data.traceparent != null) headers.set("traceparent", data.traceparent);
      if (data.tracestate != null) headers.set("tracestate", data.tracestate);
      const response = await fetchRemote(url, {
        method: "POST",
        headers,
        body: data.body,
        userAgent,
        allowPrivateAddress,
        // Redirects are not followed: a webhook URL is configured exactly.
        redirect: "error",
        timeout: { milliseconds: this.#options.timeoutMs },
        // The receiver's answer is not used: nothing of it is read.
        maxBodyBytes: 0,
        oversizedBody: "truncate",
        maxRedirects,
        signal: ctx.task.signal,
      });
      if (response.status >= 200 && response.status < 300) {
        return { ok: true, status: response.status };
      }
      return {
        ok: false,
        permanent: false,
        failure: new WebhookDeliveryError(
          webhook.id,
          webhook.url,
          response.status,
          `HTTP ${response.status}`,
        ),
      };
    } catch (error) {
      return {
        ok: false,
        permanent: error instanceof PrivateAddressError,
        failure: new WebhookDeliveryError(
          webhook.id,
          webhook.url,
          null,
          error instanceof Error ? error.message : String(error),
          error,
        ),
      };
    }
  }

  /**
   * Records a success: resets the failure count, and moves
   * `lastSuccessAt` when it is more than a minute old (so that a webhook
   * that keeps succeeding costs no store write per request); a probe's
   * success enables the webhook again.
   */
  async #recordSuccess(webhook: StoredWebhook, probe: boolean): Promise<StoredWebhook | undefined> {
    const now = Date.now();
    const stale = (current: StoredWebhook) =>
      current.lastSuccessAt == null || now - current.lastSuccessAt >= LAST_SUCCESS_PRECISION_MS;
    if (!probe && webhook.consecutiveFailures === 0 && !stale(webhook)) return webhook;
    return await this.#store.update(webhook.id, (current) => {
      if (probe) {
        if (current.enabled) return undefined;
        const { disabledAt: _, probe: __, ...rest } = current;
        return { ...rest, enabled: true, consecutiveFailures: 0, lastSuccessAt: now };
      }
      if (current.consecutiveFailures === 0 && !stale(current)) return undefined;
      return { ...current, consecutiveFailures: 0, lastSuccessAt: now };
    });
  }

  /**
   * Probes a disabled webhook: sends the request that disabled it again;
   * a 2xx answer enables the webhook, any other schedules the next probe,
   * twice as late (up to `probeMaxDelay`).  A probe whose chain is no
   * longer the webhook's (it was enabled, removed, or disabled anew) does
   * nothing.  Never throws: a probe is not retried nor kept as failed.
   */
  async #probe(
    ctx: WebhookTaskContext,
    data: WebhookTaskData,
    webhook: StoredWebhook | undefined,
  ): Promise<void> {
    const chain = webhook?.probe;
    if (webhook == null || webhook.enabled || chain == null || chain.id !== data.probe) return;
    const sent = await this.#request(ctx, webhook, data);
    if (sent.ok) {
      const enabled = await this.#recordSuccess(webhook, true);
      if (enabled == null || !enabled.enabled) return;
      logger.info("Enabled the webhook {webhookId} ({url}) again: a probe succeeded.", {
        webhookId: webhook.id,
        url: webhook.url,
        round: chain.round,
      });
      return;
    }
    const round = chain.round + 1;
    const delayMs = Math.min(
      this.#options.probeMaxDelayMs,
      this.#options.probeInitialDelayMs * 2 ** round,
    );
    const now = Date.now();
    const updated = await this.#store.update(
      webhook.id,
      (current) =>
        current.enabled || current.probe?.id !== data.probe ? undefined : {
          ...current,
          lastError: describeFailure(sent.failure),
          lastFailureAt: now,
          probe: { id: data.probe!, round, nextAt: now + delayMs },
        },
    );
    if (updated == null || updated.enabled || updated.probe?.round !== round) return;
    logger.info(
      "A probe of the disabled webhook {webhookId} failed ({error}); the next one is in " +
        "{delayMs} ms.",
      { webhookId: webhook.id, error: describeFailure(sent.failure), round, delayMs },
    );
    await this.#scheduleProbe(ctx, data, webhook.id, data.probe!, delayMs);
  }

  async #scheduleProbe(
    ctx: WebhookTaskContext,
    data: WebhookTaskData,
    webhookId: string,
    probeId: string,
    delayMs: number,
  ): Promise<void> {
    const { attempt: _, ...rest } = data;
    await this.#port.enqueueData(ctx, { ...rest, webhookId, probe: probeId }, { delayMs });
  }
}

/** What a failed request's `lastError` says. */
function describeFailure(failure: WebhookDeliveryError): string {
  return failure.status == null ? failure.message : `HTTP ${failure.status}`;
}
