// Enqueues prepared messages under `debounce` or `throttle`: one message at
// a time, in payload order, so that a batch behaves as the same enqueues
// made one after another.
import type { KvStore } from "../kv/kv-store.ts";
import type { EpochClock } from "../time/clock-seam.ts";
import type { TaskEnqueueResult } from "./definition.ts";
import { enqueueDebounced, type TaskMessageEnqueue } from "./debounce.ts";
import type { PreparedTaskFlow, PreparedTaskMessages } from "./enqueue.ts";
import { closeThrottlePeriod, openThrottlePeriod } from "./throttle.ts";

/**
 * Enqueues prepared messages that carry a `flow`.  Internal.
 * @param prepared The messages, with their flow.
 * @param kv The federation's store.
 * @param holdMs How long a debounce burst is kept after its last enqueue,
 *               besides its delay and maximum wait.
 * @param enqueue Where the messages go.
 * @param now The clock; `Date.now` by default.
 * @returns One result per message, in order.
 * @throws {TypeError} When the store has no `cas()`.
 * @since 0.4.0
 */
export async function enqueueFlowControlled(
  prepared: PreparedTaskMessages & { readonly flow: PreparedTaskFlow },
  kv: KvStore,
  holdMs: number,
  enqueue: TaskMessageEnqueue,
  now: EpochClock = Date.now,
): Promise<TaskEnqueueResult[]> {
  const { messages, queueOptions, flow } = prepared;
  if (kv.cas == null) {
    throw new TypeError(
      `The ${flow.kind} option needs a KvStore with cas(); the federation's store has none.`,
    );
  }
  const results: TaskEnqueueResult[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    const key = flow.keys[index];
    if (flow.kind === "debounce") {
      const due = await enqueueDebounced(
        kv,
        message,
        flow.debounce,
        queueOptions,
        enqueue,
        holdMs,
        now,
      );
      results.push({
        status: "debounced",
        messageId: message.id,
        debounceKey: key,
        dueAt: new Date(due),
      });
      continue;
    }
    const period = await openThrottlePeriod(
      kv,
      message.taskName,
      key,
      message.id,
      flow.periodMs,
      now,
    );
    if (!period.opened) {
      results.push({ status: "throttled", throttleKey: key, until: new Date(period.until) });
      continue;
    }
    try {
      await enqueue([message], queueOptions);
    } catch (error) {
      await closeThrottlePeriod(kv, message.taskName, key, message.id);
      throw error;
    }
    results.push({ status: "enqueued", messageId: message.id });
  }
  return results;
}
