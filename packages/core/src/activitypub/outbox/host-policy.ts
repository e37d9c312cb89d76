// The host policy as deliveries apply it: a delivery to a blocked host is
// dropped before anything is fetched or sent, a fan-out leaves out the
// blocked inboxes, and a host that asked to be left alone (429 or 503 with
// Retry-After) makes its deliveries wait, without spending their attempts,
// as do a host's concurrency and rate limits (host-limits.ts).
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import { MalformedMessageError } from "../../processing/errors.ts";
import { RunPostponedError } from "../../processing/run-postponed.ts";
import { hostNameOf } from "../host-policy/host-name.ts";
import { HostWaits } from "../host-policy/host-waits.ts";
import type { ResolvedHostPolicy } from "../host-policy/options.ts";
import { BlockedHostError, DeliveryError } from "./errors.ts";
import { DeliveryHostLimits } from "./host-limits.ts";
import type { OutboxMessage } from "./messages.ts";

const logger = getLogger(["fedwork", "federation", "outbox"]);

/**
 * How many times one delivery waits for its host's `Retry-After` before
 * such an answer counts as a failed attempt: a host that always asks for
 * a wait would otherwise hold the delivery for ever.
 */
export const MAX_RETRY_AFTER_WAITS = 10;

/**
 * The `hostPolicy` option as the outbox applies it.  Internal.
 * @since 0.4.0
 */
export class DeliveryHostPolicy {
  readonly #policy: ResolvedHostPolicy;
  readonly #waits: HostWaits;
  readonly #limits: DeliveryHostLimits;

  /**
   * @param policy The resolved option.
   * @param kv Where the hosts' waits, slots and start times are kept, for
   *           every worker to see.
   * @param queued Whether deliveries have an outbox queue to wait in for
   *               their host's limits (`true` by default); without one they
   *               wait where they are.
   */
  constructor(policy: ResolvedHostPolicy, kv: KvStore, queued = true) {
    this.#policy = policy;
    this.#waits = new HostWaits(kv);
    this.#limits = new DeliveryHostLimits(policy, kv, queued);
  }

  /**
   * Leaves out the deliveries to blocked hosts.
   * @param messages The deliveries.
   * @returns Those whose host is not blocked, in order.
   */
  async withoutBlocked(messages: readonly OutboxMessage[]): Promise<OutboxMessage[]> {
    const isBlocked = this.#policy.isBlocked;
    if (isBlocked == null) return [...messages];
    const blocked = await Promise.all(
      messages.map((message) => isBlocked(hostNameOf(new URL(message.inbox)))),
    );
    const kept = messages.filter((_, index) => !blocked[index]);
    if (kept.length < messages.length) {
      logger.info("Left out {skipped} of {total} deliveries of {activityId}: blocked hosts.", {
        skipped: messages.length - kept.length,
        total: messages.length,
        activityId: messages[0]?.activityId,
      });
    }
    return kept;
  }

  /**
   * Makes a delivery's attempt unless its host is blocked, asked for a
   * wait, or is at its concurrency or rate limit.
   * @param message The delivery.
   * @param signal Aborts a wait made in place (without an outbox queue).
   * @param attempt Makes the attempt (host health and all).
   * @throws {MalformedMessageError} When the host is blocked: the delivery
   *         is dropped, with a {@link BlockedHostError} as its error.
   * @throws {RunPostponedError} When the host asked for a wait, or its
   *         limits make the delivery wait.
   * @throws What `attempt` throws otherwise.
   */
  async deliver(
    message: OutboxMessage,
    signal: AbortSignal,
    attempt: () => Promise<void>,
  ): Promise<void> {
    const inbox = new URL(message.inbox);
    const isBlocked = this.#policy.isBlocked;
    if (isBlocked != null) {
      const name = hostNameOf(inbox);
      if (await isBlocked(name)) {
        const blocked = new BlockedHostError(name, inbox.href);
        throw new MalformedMessageError(blocked.message, { cause: blocked, level: "warning" });
      }
    }
    if (this.#policy.maxRetryAfterMs != null) {
      const host = inbox.host;
      const waiting = await this.#waits.remaining(host, Date.now());
      if (waiting > 0) {
        throw new RunPostponedError(
          `The host ${host} asked to be left alone for ${Math.ceil(waiting / 1000)} s more ` +
            "(Retry-After).",
          waiting,
          { waitFor: "retryAfter" },
        );
      }
    }
    if (this.#limits.active) return await this.#limits.run(message, signal, attempt);
    await attempt();
  }

  /**
   * Makes the POST, and turns a `Retry-After` its inbox answers into a wait
   * for its host: inside host health, which does not count a wait as a
   * failure of the host.
   * @param message The delivery.
   * @param post Signs and POSTs it.
   * @throws {RunPostponedError} When the inbox asked for a wait.
   * @throws What `post` throws otherwise.
   */
  async honourRetryAfter(message: OutboxMessage, post: () => Promise<void>): Promise<void> {
    const maxMs = this.#policy.maxRetryAfterMs;
    try {
      await post();
    } catch (error) {
      const asked = retryAfterOf(error);
      if (maxMs == null || asked == null || (message.waits ?? 0) >= MAX_RETRY_AFTER_WAITS) {
        throw error;
      }
      const host = new URL(message.inbox).host;
      const waitMs = Math.min(asked, maxMs);
      const now = Date.now();
      await this.#waits.waitUntil(host, now + waitMs, now);
      throw new RunPostponedError(
        `The host ${host} answered ${statusOf(error)} with Retry-After; ` +
          `waiting ${Math.ceil(waitMs / 1000)} s` +
          (waitMs < asked ? ` (capped by hostPolicy.retryAfter.max from ${asked} ms)` : "") +
          ".",
        waitMs,
        { cause: error, waitFor: "retryAfter" },
      );
    }
  }
}

/** The wait a failed delivery's inbox asked for, along the cause chain. */
function retryAfterOf(error: unknown): number | undefined {
  return deliveryErrorOf(error)?.retryAfterMs;
}

function statusOf(error: unknown): number | null | undefined {
  return deliveryErrorOf(error)?.status;
}

function deliveryErrorOf(error: unknown): DeliveryError | undefined {
  for (let current = error, depth = 0; current != null && depth < 5; depth++) {
    if (current instanceof DeliveryError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
