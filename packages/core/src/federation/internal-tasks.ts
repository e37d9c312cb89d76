// Fedwork's own tasks (webhook requests, host probes): a hand-written
// Standard Schema for their JSON payloads, and enqueueing them from places
// that have no context (dispatcher observers, delivery), without starting
// workers.
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { MessageProducer } from "../processing/producer.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../tasks/definition.ts";
import { prepareTaskMessages } from "../tasks/enqueue.ts";
import type { TaskEnqueuer } from "../tasks/enqueuer.ts";
import type { DurationInput } from "../time/duration.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { FederationRegistry } from "./registry.ts";

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

/** What {@link enqueueInternalTask} needs from the federation. */
export interface InternalTaskHost<TContextData> {
  readonly options: ResolvedFederationOptions;
  readonly registry: FederationRegistry<TContextData>;
  /** Puts messages into queues (span, trace context, metrics). */
  readonly producer: MessageProducer<TContextData>;
  /** Enqueues task messages (deduplication, status records, producer). */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
}

/**
 * Enqueues one of Fedwork's own tasks through the task enqueuer, like any
 * task (deduplication, status record, span, trace context, metrics), never
 * starting workers.
 * @param host The federation.
 * @param task The task's handle.
 * @param data The payload.
 * @param options The base URL of its context, a delay and a deduplication
 *                key.
 * @returns The result.
 */
export async function enqueueInternalTask<TContextData, TData>(
  host: InternalTaskHost<TContextData>,
  task: TaskDefinition<TContextData, TData, TData>,
  data: TData,
  options: {
    readonly baseUrl: string;
    readonly delay?: DurationInput;
    readonly deduplicationKey?: string;
  },
): Promise<TaskEnqueueResult> {
  const { queues, taskQueueResolution } = host.options;
  const prepared = await prepareTaskMessages({
    registry: host.registry.tasks,
    task: task as TaskDefinition<TContextData, unknown, unknown>,
    payloads: [data],
    options: {
      ...(options.delay == null ? {} : { delay: options.delay }),
      ...(options.deduplicationKey == null ? {} : { deduplicationKey: options.deduplicationKey }),
    },
    queues: { taskQueue: queues.task, outboxQueue: queues.outbox, resolution: taskQueueResolution },
    baseUrl: new URL("/", options.baseUrl),
  });
  const [result] = await host.taskEnqueuer.enqueue(prepared);
  return result;
}
