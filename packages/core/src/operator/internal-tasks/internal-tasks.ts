// Fedwork's own tasks (webhook requests, host probes): a hand-written
// Standard Schema for their JSON payloads, and enqueueing them from places
// that have no context (dispatcher observers, delivery), without starting
// workers.
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { TaskDefinition, TaskEnqueueResult } from "../../tasks/definition.ts";
import { prepareTaskMessages } from "../../tasks/enqueue.ts";
import type { TaskEnqueuer } from "../../tasks/enqueuer.ts";
import type { DurationInput } from "../../time/duration.ts";
import type { TaskStore } from "../../tasks/registry.ts";
import type { TaskQueueRoutingOptions } from "../../tasks/routing.ts";

/** The prefix of the names of Fedwork's own tasks. */
export const INTERNAL_TASK_PREFIX = "fedwork:";

/**
 * A Standard Schema for an object whose listed fields are strings.
 * @param fields The required string fields.
 * @returns The schema.
 */
export function stringRecordSchema<const TField extends string>(
  fields: readonly TField[],
): StandardSchemaV1<Record<TField, string>> {
  return {
    "~standard": {
      version: 1,
      vendor: "fedwork",
      validate(value) {
        if (typeof value !== "object" || value == null) {
          return { issues: [{ message: "must be an object" }] };
        }
        for (const field of fields) {
          if (typeof (value as Record<string, unknown>)[field] !== "string") {
            return { issues: [{ message: "must be a string", path: [field] }] };
          }
        }
        return { value: value as Record<TField, string> };
      },
    },
  };
}

/**
 * What Fedwork's own tasks need from the federation: where tasks are
 * defined, how they are routed to a queue, and the task enqueuer.
 * Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface InternalTaskPort<TContextData> {
  /** The federation's tasks, among which Fedwork's own are defined. */
  // deno-lint-ignore no-explicit-any
  readonly tasks: TaskStore<TContextData, any>;
  /** The federation's queues and task queue resolution policy. */
  readonly routing: TaskQueueRoutingOptions;
  /** Enqueues task messages (deduplication, status records, producer). */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
}

/**
 * Enqueues one of Fedwork's own tasks through the task enqueuer, like any
 * task (deduplication, status record, span, trace context, metrics), never
 * starting workers.
 * @param port The tasks, their routing and the task enqueuer.
 * @param task The task's handle.
 * @param data The payload.
 * @param options The base URL of its context, a delay and a deduplication
 *                key.
 * @returns The result.
 */
export async function enqueueInternalTask<TContextData, TData>(
  port: InternalTaskPort<TContextData>,
  task: TaskDefinition<TContextData, TData, TData>,
  data: TData,
  options: {
    readonly baseUrl: string;
    readonly delay?: DurationInput;
    readonly deduplicationKey?: string;
  },
): Promise<TaskEnqueueResult> {
  const prepared = await prepareTaskMessages({
    registry: port.tasks,
    task: task as TaskDefinition<TContextData, unknown, unknown>,
    payloads: [data],
    options: {
      ...(options.delay == null ? {} : { delay: options.delay }),
      ...(options.deduplicationKey == null ? {} : { deduplicationKey: options.deduplicationKey }),
    },
    queues: port.routing,
    baseUrl: new URL("/", options.baseUrl),
  });
  const [result] = await port.taskEnqueuer.enqueue(prepared);
  return result;
}
