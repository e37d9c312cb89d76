import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { TaskOptions } from "../tasks/definition.ts";
import type { TaskRegistry as GenericTaskRegistry } from "../tasks/registry.ts";
import type { TaskRunInfo } from "../tasks/run-info.ts";
import { type Context, type ContextHost, ContextImpl } from "./context.ts";

/**
 * The context a task handler (and its `onError`) gets: a {@link Context}
 * for the base URL the task was enqueued from, plus `task`, what the
 * handler knows about its run (attempt, message id, enqueue time and an
 * `AbortSignal` that fires at shutdown).
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface TaskContext<TContextData> extends Context<TContextData> {
  /** The run this handler is in. */
  readonly task: TaskRunInfo;
}

/**
 * What {@link TaskRegistry.defineTask} takes besides the task's name: the
 * schema, the handler, and optional retry policy, `onError` hook, queue and
 * lifecycle event listeners.
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TSchema The payload's Standard Schema.
 * @since 0.1.0
 */
export type TaskDefinitionOptions<TContextData, TSchema extends StandardSchemaV1> = TaskOptions<
  TaskContext<TContextData>,
  TSchema
>;

/**
 * Where typed background tasks are defined.  `Federation` and
 * `FederationBuilder` implement it (through `Federatable`).
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.1.0
 */
export type TaskRegistry<TContextData> = GenericTaskRegistry<
  TContextData,
  TaskContext<TContextData>
>;

/**
 * The {@link TaskContext} implementation.  Internal.
 * @since 0.2.0
 */
export class TaskContextImpl<TContextData> extends ContextImpl<TContextData>
  implements TaskContext<TContextData> {
  readonly task: TaskRunInfo;

  /**
   * @param host The federation's internals.
   * @param url The base URL the task was enqueued from.
   * @param data The application data.
   * @param task The run information.
   */
  constructor(host: ContextHost<TContextData>, url: URL, data: TContextData, task: TaskRunInfo) {
    super(host, url, data);
    this.task = task;
  }
}
