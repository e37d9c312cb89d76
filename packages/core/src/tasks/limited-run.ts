// What a run of a task with `concurrency` or `rateLimit` does before its
// handler: reserve a start time under the rate (and, when it is later,
// wait for it in the queue), then take a slot of its concurrency key (and,
// when every slot is taken, wait in the queue and look again).  A run that
// waits holds no worker: its message goes back into its queue, delayed,
// without spending an attempt (RunPostponedError).
import type { KvStore } from "../kv/kv-store.ts";
import { createKeyRate, type KeyRate } from "../processing/limits/key-rate.ts";
import { createKeySlots, type HeldKeySlot, type KeySlots } from "../processing/limits/key-slots.ts";
import { RunPostponedError } from "../processing/run-postponed.ts";
import { unrefTimer } from "../time/timer-ref.ts";
import type { RegisteredTask } from "./definition.ts";
import { MAX_TASK_LIMIT_KEY_LENGTH } from "./limit-options.ts";
import type { TaskMessage } from "./message.ts";

/**
 * How long a run's concurrency slot lasts unless renewed: a worker that
 * dies frees its slots within this time.  The running worker renews it
 * every third of it.
 */
export const TASK_CONCURRENCY_LEASE_MS = 30_000;
const RENEW_EVERY_MS = TASK_CONCURRENCY_LEASE_MS / 3;

/**
 * How long a run whose concurrency key is full waits before it looks
 * again: 50 ms the first time, doubling with each wait of the message up
 * to 2 s, each spread by ±50% so that the waiters of a key do not all
 * look at once; never longer than until the key's earliest lease ends.
 * The cap keeps the churn of a long line bounded (each look is a
 * re-enqueue): 200 runs waiting for one key cost about 100 re-enqueues a
 * second, where 0.5 s saturated SQLite on a loaded machine.
 * A bounded re-check rather than a wake-up: a wake-up would need the
 * releasing run to bring a delayed message forward in its queue, which no
 * queue offers, and a second copy of it, which could run twice.
 */
const FIRST_RECHECK_MS = 50;
const MAX_RECHECK_MS = 2000;

/**
 * The delay before a waiting run looks at its concurrency key again.
 * @param waits How many times its message has waited already.
 * @param retryAfterMs When the key's earliest lease ends.
 * @returns Milliseconds.
 */
export function concurrencyRecheckMs(waits: number, retryAfterMs: number): number {
  const base = Math.min(FIRST_RECHECK_MS * 2 ** Math.min(waits, 10), MAX_RECHECK_MS);
  return Math.max(1, Math.min(retryAfterMs, Math.round(base * (0.5 + Math.random()))));
}

/**
 * A reserved start that is at most this far ahead runs at once: waiting in
 * the queue for less would cost more than it keeps.
 */
const RATE_SLACK_MS = 5;

/** A run that took a concurrency slot: `end()` gives it back. */
export interface LimitedRun {
  end(): Promise<void>;
}

/**
 * The federation's limiter of task runs: one per federation, on its
 * key–value store.  Internal.
 * @since 0.4.0
 */
export class TaskRunLimiter {
  readonly #kv: KvStore;
  readonly #slots = new Map<string, KeySlots>();
  readonly #rates = new Map<string, KeyRate>();

  /**
   * @param kv The federation's store; it must have `cas()` (checked when a
   *           task with limits is defined).
   */
  constructor(kv: KvStore) {
    this.#kv = kv;
  }

  /**
   * Waits for a task run's rate and takes its concurrency slot, or throws
   * a {@link RunPostponedError} saying how long it waits in its queue.
   * Called only for tasks with `concurrency` or `rateLimit`.
   * @param task The task.
   * @param message The message.
   * @param data The payload, as the handler gets it.
   * @returns The held slot, to end when the run ends; `undefined` without
   *          `concurrency`.
   * @throws {RunPostponedError} When the run must wait.
   * @throws {TypeError} When a key function returns no proper key.
   */
  async begin(
    task: Pick<RegisteredTask<unknown, unknown>, "name" | "concurrency" | "rateLimit">,
    message: TaskMessage,
    data: unknown,
  ): Promise<LimitedRun | undefined> {
    const { rateLimit, concurrency } = task;
    if (rateLimit != null) {
      const slot = message.rateSlot;
      let at: number;
      if (slot != null && slot.attempt === message.attempt && typeof slot.at === "number") {
        at = slot.at;
      } else {
        const key = rateLimit.key == null ? "" : keyOf(rateLimit.key, data, "rateLimit.key");
        ({ startAt: at } = await this.#rateOf(task.name).reserve(
          key,
          rateLimit.limit,
          rateLimit.periodMs,
        ));
      }
      const waitMs = at - Date.now();
      if (waitMs > RATE_SLACK_MS) {
        throw new RunPostponedError(
          `The task ${JSON.stringify(task.name)} waits for its rate limit ` +
            `(${rateLimit.limit} per ${rateLimit.periodMs} ms).`,
          waitMs,
          { waitFor: "rate", messageFields: { rateSlot: { attempt: message.attempt, at } } },
        );
      }
    }
    if (concurrency == null) return undefined;
    const key = keyOf(concurrency.key, data, "concurrency.key");
    // One holder per run, not per message: should a queue hand one
    // message out twice at once (a lease that ran out), each copy counts.
    const slot = await this.#slotsOf(task.name).acquire(
      key,
      `${message.id}:${crypto.randomUUID()}`,
      concurrency.limit,
      TASK_CONCURRENCY_LEASE_MS,
    );
    if (!slot.acquired) {
      throw new RunPostponedError(
        `The task ${JSON.stringify(task.name)} waits for a slot of its concurrency key ` +
          `${JSON.stringify(key)} (${concurrency.limit} at once).`,
        concurrencyRecheckMs(message.waits ?? 0, slot.retryAfterMs),
        { waitFor: "concurrency" },
      );
    }
    return renewWhileRunning(slot);
  }

  #slotsOf(taskName: string): KeySlots {
    let slots = this.#slots.get(taskName);
    if (slots == null) {
      slots = createKeySlots(this.#kv, ["fedwork", "task-concurrency", taskName]);
      this.#slots.set(taskName, slots);
    }
    return slots;
  }

  #rateOf(taskName: string): KeyRate {
    let rate = this.#rates.get(taskName);
    if (rate == null) {
      rate = createKeyRate(this.#kv, ["fedwork", "task-rate", taskName]);
      this.#rates.set(taskName, rate);
    }
    return rate;
  }
}

/** Renews a slot's lease while its run goes on; `end()` releases it. */
function renewWhileRunning(slot: HeldKeySlot): LimitedRun {
  const timer = setInterval(() => {
    // A failed renewal is logged by the slots; the run goes on.
    slot.renew().catch(() => {});
  }, RENEW_EVERY_MS);
  unrefTimer(timer);
  return {
    end() {
      clearInterval(timer);
      return slot.release();
    },
  };
}

function keyOf(key: (data: unknown) => string, data: unknown, option: string): string {
  const value = key(data);
  if (typeof value !== "string" || value === "" || value.length > MAX_TASK_LIMIT_KEY_LENGTH) {
    throw new TypeError(
      `The ${option} function must return a non-empty string of at most ` +
        `${MAX_TASK_LIMIT_KEY_LENGTH} characters; got ${
          typeof value === "string" ? `${value.length} characters` : typeof value
        }.`,
    );
  }
  return value;
}
