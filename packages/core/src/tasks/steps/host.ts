// What a step runner needs from the federation, and what it tells it:
// interfaces only (the federation's wiring implements them).
import type { DocumentLoader } from "@fedify/vocab";
import type { Tracer } from "@opentelemetry/api";
import type { KvStore } from "../../kv/kv-store.ts";
import type { TaskDefinition } from "../definition.ts";
import type { TaskMessage } from "../message.ts";
import type { StepKind } from "./state.ts";

/**
 * How a child task ended, as its `CHILD_ENDED_EVENT` carries it.  Internal.
 * @since 0.4.0
 */
export interface ChildEnding {
  readonly state: "completed" | "failed" | "dropped" | "cancelled";
  readonly result?: unknown;
  readonly reason?: string;
}

/**
 * What a step's life looks like to those who watch it.  Internal.
 * @since 0.4.0
 */
export interface StepNotice {
  readonly id: string;
  readonly kind: StepKind;
  /** `"started"` (about to run), `"recorded"` (done), `"suspended"` (sleeping or waiting). */
  readonly phase: "started" | "recorded" | "suspended";
  /**
   * Whether the status record is to be written now: always for a sleep or
   * wait, at most once a second for steps that start, never for one
   * recorded (the next write, or the run's end, shows it).
   */
  readonly write: boolean;
  /** The ids of the steps recorded so far. */
  readonly recorded: readonly string[];
}

/**
 * What step runners need from the federation.  Internal.
 * @since 0.4.0
 */
export interface StepRunnerHost {
  readonly kv: KvStore;
  readonly documentLoader: DocumentLoader;
  readonly contextLoader: DocumentLoader;
  /** How long records are kept past their last write, in milliseconds. */
  readonly retentionMs: number;
  /** Enqueues a child task with the given id (deduplicated by it). */
  enqueueChild(
    task: TaskDefinition<unknown, unknown, unknown, unknown>,
    data: unknown,
    childId: string,
    parent: TaskMessage,
  ): Promise<void>;
  /**
   * How a task ended, from its status record; `"pending"` while it has a
   * record but has not ended; `undefined` without a record.
   */
  childEnding(childId: string): Promise<ChildEnding | "pending" | undefined>;
  /** Told of each step's phases (the status record). */
  notice?(message: TaskMessage, notice: StepNotice): void | Promise<void>;
  /**
   * Registers a `waitForActivity()` on an activity type (its id), which
   * waits until `until` (epoch ms) at the latest, so that inboxes keep
   * activities of that type.  Without it, inboxes keep every type.
   */
  registerActivityWait?(typeId: string, until: number): Promise<void>;
  /** Where each step that does something in a run gets a span. */
  readonly tracer?: Tracer;
}
