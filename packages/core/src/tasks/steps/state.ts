// How a task's step records live in the key–value store: one entry per
// task, holding its generation and its steps in the order the code ran
// them.  One entry (not one per step) so that a run reads its records in
// one round trip on every engine, without a prefix scan.
import type { KvKey, KvStore } from "../../kv/kv-store.ts";

/**
 * One recorded step.  `done` steps have their result (`value`, encoded);
 * pending ones what they wait for.  Internal.
 * @since 0.4.0
 */
export interface StepRecord {
  readonly id: string;
  readonly kind: StepKind;
  /** Whether the step finished (its result is `value`). */
  done: boolean;
  /** The encoded result, for a done step (absent for `undefined`/`null`). */
  value?: string;
  /** For a sleep or wait, when it ends, in epoch milliseconds. */
  until?: number;
  /** For a wait: the generation its woken message carries. */
  wake?: number;
  /** For a wait: the generation of its message due at the timeout. */
  delayed?: number;
  /** For a failed `run` step with a retry policy: its failures so far. */
  failures?: number;
  /** For an `invoke`: the child task's id. */
  child?: string;
  /** For an `invoke`: whether the child reached its queue. */
  enqueued?: boolean;
  /** When the step was recorded, in epoch milliseconds. */
  at: number;
}

/**
 * The kinds of steps.
 * @since 0.4.0
 */
export type StepKind = "run" | "sleep" | "wait" | "activity" | "invoke";

/**
 * A task's step records.  Internal.
 * @since 0.4.0
 */
export interface StepState {
  /** The format version. */
  readonly v: 1;
  /**
   * The generation of the newest message that ran: continuation messages
   * of an older one are stale and dropped.
   */
  gen: number;
  /** The highest generation given to a continuation message so far. */
  seq: number;
  /**
   * Generations superseded although not older (the woken copy of a wait
   * that its timeout's copy resolved first): dropped too.  The last 16.
   */
  stale: number[];
  /** The steps, by position. */
  steps: (StepRecord | null)[];
}

/**
 * The key of a task's step records.
 * @param taskId The task's id.
 * @returns The key.
 * @since 0.4.0
 */
export function stepStateKey(taskId: string): KvKey {
  return ["fedwork", "steps", "state", taskId];
}

/**
 * Reads a task's step records, or fresh ones.
 * @param kv The store.
 * @param taskId The task's id.
 * @returns The records and whether they were there.
 * @since 0.4.0
 */
export async function loadStepState(
  kv: KvStore,
  taskId: string,
): Promise<{ readonly state: StepState; readonly found: boolean }> {
  const stored = await kv.get<StepState>(stepStateKey(taskId));
  if (isStepState(stored)) {
    return {
      state: {
        v: 1,
        gen: stored.gen,
        seq: typeof stored.seq === "number" ? Math.max(stored.seq, stored.gen) : stored.gen,
        stale: Array.isArray(stored.stale) ? [...stored.stale] : [],
        steps: [...stored.steps],
      },
      found: true,
    };
  }
  return { state: { v: 1, gen: 0, seq: 0, stale: [], steps: [] }, found: false };
}

function isStepState(value: unknown): value is StepState {
  if (value == null || typeof value !== "object") return false;
  const state = value as Partial<StepState>;
  return state.v === 1 && typeof state.gen === "number" && Array.isArray(state.steps);
}
