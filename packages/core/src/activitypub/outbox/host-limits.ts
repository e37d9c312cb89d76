// Per-host concurrency and rate of deliveries (hostPolicy.concurrency and
// hostPolicy.rate), across every worker process sharing the key-value
// store: a delivery holds one of its host's slots while it is in flight and
// starts no earlier than the start time its host's rate gave it.  One that
// must wait goes back to the outbox queue, holding no worker and spending
// no attempt; without an outbox queue it waits where it is.
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import {
  createKeyRate,
  createKeySlots,
  type HeldKeySlot,
  type KeyRate,
  type KeySlots,
} from "../../processing/limits/mod.ts";
import { RunPostponedError } from "../../processing/run-postponed.ts";
import { hostNameOf } from "../host-policy/host-name.ts";
import type { ResolvedHostPolicy } from "../host-policy/options.ts";
import type { ResolvedHostRate } from "../host-policy/limits-options.ts";
import type { HostLimitState, OutboxMessage } from "./messages.ts";

const logger = getLogger(["fedwork", "federation", "outbox"]);

/**
 * How long a slot is held without renewal: a worker that dies in flight
 * frees its slot after this long.
 */
export const HOST_SLOT_LEASE_MS = 30_000;
/** How often a delivery in flight renews its slot. */
const RENEW_EVERY_MS = HOST_SLOT_LEASE_MS / 3;
/** The first look again after a host's slots were all taken, doubled per wait. */
const FIRST_SLOT_WAIT_MS = 100;
/** The longest time between two looks at a host's slots. */
const MAX_SLOT_WAIT_MS = 5_000;
/** A start this close is waited for in place rather than in the queue. */
const IN_PLACE_START_MS = 20;
/** How late a delivery may start after its reserved time and still use it. */
const MIN_LATE_START_MS = 250;
const MAX_LATE_START_MS = 1_000;
/** A carried start time further ahead than this is taken as corrupt. */
const MAX_RESERVED_AHEAD_MS = 7 * 24 * 60 * 60_000;
/** Without an outbox queue, the longest a delivery waits for its host. */
const MAX_IN_PLACE_WAIT_MS = 60_000;

/**
 * The host's limits as deliveries apply them.  Internal.
 * @since 0.4.0
 */
export class DeliveryHostLimits {
  readonly #concurrencyOf: ResolvedHostPolicy["concurrencyOf"];
  readonly #rateOf: ResolvedHostPolicy["rateOf"];
  readonly #slots: KeySlots | undefined;
  readonly #rate: KeyRate | undefined;
  readonly #queued: boolean;

  /**
   * @param policy The resolved option.
   * @param kv The store the slots and start times are kept in; it has
   *           `cas()` (checked with the options).
   * @param queued Whether deliveries have an outbox queue to wait in;
   *               without one they wait where they are.
   */
  constructor(policy: ResolvedHostPolicy, kv: KvStore, queued: boolean) {
    this.#concurrencyOf = policy.concurrencyOf;
    this.#rateOf = policy.rateOf;
    this.#slots = policy.concurrencyOf == null
      ? undefined
      : createKeySlots(kv, ["fedwork", "host-policy", "slots"]);
    this.#rate = policy.rateOf == null
      ? undefined
      : createKeyRate(kv, ["fedwork", "host-policy", "rate"]);
    this.#queued = queued;
  }

  /** Whether any limit is set. */
  get active(): boolean {
    return this.#slots != null || this.#rate != null;
  }

  /**
   * Runs a delivery's attempt within its host's limits.
   * @param message The delivery.
   * @param signal Aborts a wait in place.
   * @param attempt Makes the attempt.
   * @throws {RunPostponedError} When the delivery must wait in its queue.
   * @throws What `attempt` throws otherwise.
   */
  async run(
    message: OutboxMessage,
    signal: AbortSignal,
    attempt: () => Promise<void>,
  ): Promise<void> {
    const inbox = new URL(message.inbox);
    const name = hostNameOf(inbox);
    const limit = this.#concurrencyOf?.(name);
    const rate = this.#rateOf?.(name);
    if (limit == null && rate == null) return await attempt();
    // Host health and Retry-After key a host by its name and port; so do these.
    const host = inbox.host;
    const state = stateOf(message);
    const began = Date.now();
    let slot: HeldKeySlot | undefined;
    for (let slotWaits = state?.slotWaits ?? 0;; slotWaits++) {
      if (limit != null) {
        const taken = await this.#slots!.acquire(host, message.id, limit, HOST_SLOT_LEASE_MS);
        if (!taken.acquired) {
          const waitMs = slotWait(slotWaits, taken.retryAfterMs);
          if (this.#queued) {
            throw postponed(
              message,
              "concurrency",
              `All ${limit} delivery slots of ${host} are taken (hostPolicy.concurrency).`,
              waitMs,
              { attempt: message.attempt, slotWaits: slotWaits + 1 },
            );
          }
          await this.#waitInPlace(waitMs, began, signal, host);
          continue;
        }
        slot = taken;
      }
      break;
    }
    try {
      if (rate != null) await this.#awaitStart(message, host, rate, state, slot, began, signal);
      await holding(slot, host, attempt);
    } finally {
      await giveBack(slot, host);
    }
  }

  /**
   * Returns once the delivery may start under its host's rate, or throws
   * a wait, giving its slot back first.
   */
  async #awaitStart(
    message: OutboxMessage,
    host: string,
    rate: ResolvedHostRate,
    state: HostLimitState | undefined,
    slot: HeldKeySlot | undefined,
    began: number,
    signal: AbortSignal,
  ): Promise<void> {
    const interval = rate.periodMs / rate.limit;
    const lateMs = Math.min(MAX_LATE_START_MS, Math.max(interval, MIN_LATE_START_MS));
    let startAt = state?.startAt;
    const now = Date.now();
    // A start time it reserved before and is (nearly) on time for is its
    // own; one it is too late for is lost: starting then could bunch it
    // with the starts reserved after it.
    if (startAt == null || now - startAt > lateMs) {
      startAt = (await this.#rate!.reserve(host, rate.limit, rate.periodMs)).startAt;
    }
    const waitMs = startAt - Date.now();
    if (waitMs <= IN_PLACE_START_MS) {
      // Under a millisecond (a fast rate's next start is a fraction of one
      // away) is now: a timer would take a whole millisecond or more.
      if (waitMs >= 1) await sleep(waitMs, signal);
      return;
    }
    if (!this.#queued) {
      await this.#waitInPlace(waitMs, began, signal, host);
      return;
    }
    await giveBack(slot, host);
    throw postponed(
      message,
      "rate",
      `The next start for ${host} under hostPolicy.rate (${rate.limit} per ${rate.periodMs} ms) ` +
        `is in ${waitMs} ms.`,
      waitMs,
      { attempt: message.attempt, slotWaits: 0, startAt },
    );
  }

  async #waitInPlace(ms: number, began: number, signal: AbortSignal, host: string) {
    if (Date.now() + ms - began > MAX_IN_PLACE_WAIT_MS) {
      throw new Error(
        `Waited ${MAX_IN_PLACE_WAIT_MS} ms for the limits of ${host} (hostPolicy); without an ` +
          "outbox queue a delivery waits no longer.",
      );
    }
    await sleep(ms, signal);
  }
}

/**
 * The state a delivery carries for this attempt; a queue row is checked
 * like any input: what is not a sane state is none.
 */
function stateOf(message: OutboxMessage): HostLimitState | undefined {
  const state = message.hostLimits as Partial<HostLimitState> | undefined;
  if (typeof state !== "object" || state == null || state.attempt !== message.attempt) {
    return undefined;
  }
  const slotWaits = Number.isSafeInteger(state.slotWaits) && state.slotWaits! >= 0
    ? Math.min(state.slotWaits!, 64)
    : 0;
  const startAt = typeof state.startAt === "number" && Number.isFinite(state.startAt) &&
      state.startAt < Date.now() + MAX_RESERVED_AHEAD_MS
    ? state.startAt
    : undefined;
  return { attempt: message.attempt, slotWaits, ...(startAt == null ? {} : { startAt }) };
}

/** The wait after `slotWaits` looks found every slot taken: doubling, with jitter. */
function slotWait(slotWaits: number, untilLeaseEnds: number): number {
  const backoff = Math.min(MAX_SLOT_WAIT_MS, FIRST_SLOT_WAIT_MS * 2 ** Math.min(slotWaits, 16));
  // Spread the waiters of one host, so that they do not all look at once.
  return Math.max(1, Math.min(untilLeaseEnds, Math.round(backoff * (0.5 + Math.random()))));
}

function postponed(
  message: OutboxMessage,
  waitFor: "concurrency" | "rate",
  reason: string,
  delayMs: number,
  hostLimits: HostLimitState,
): RunPostponedError {
  logger.debug("Delivery {messageId} to {inbox} waits {delayMs} ms: {reason}", {
    messageId: message.id,
    inbox: message.inbox,
    delayMs,
    reason,
    waitFor,
  });
  return new RunPostponedError(reason, delayMs, {
    waitFor,
    counted: false,
    messageFields: { hostLimits },
  });
}

/**
 * Gives a slot back.  A release the store refuses must not hide the
 * attempt's outcome or its wait: the slot's lease runs out by itself.
 */
async function giveBack(slot: HeldKeySlot | undefined, host: string): Promise<void> {
  try {
    await slot?.release();
  } catch (error) {
    logger.warn(
      "Could not give back a delivery slot of {host}; it frees itself when its lease runs " +
        "out: {error}",
      { host, error },
    );
  }
}

/** Runs the attempt, renewing the slot's lease while it is in flight. */
async function holding(
  slot: HeldKeySlot | undefined,
  host: string,
  attempt: () => Promise<void>,
): Promise<void> {
  if (slot == null) return await attempt();
  const timer = setInterval(() => {
    slot.renew().then(
      (kept) => {
        if (!kept) {
          logger.warn(
            "A delivery to {host} lost its slot (its lease ran out and the slots were taken); " +
              "the host has one delivery more in flight than hostPolicy.concurrency allows.",
            { host },
          );
        }
      },
      (error) => logger.warn("Could not renew a delivery slot of {host}: {error}", { host, error }),
    );
  }, RENEW_EVERY_MS);
  try {
    await attempt();
  } finally {
    clearInterval(timer);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
