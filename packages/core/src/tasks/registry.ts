import type { StandardSchemaV1 } from "@standard-schema/spec";
import {
  createTaskDefinition,
  type RegisteredTask,
  type TaskDefinition,
  type TaskManyOptions,
  type TaskOptions,
} from "./definition.ts";
import { TaskDefinitionError } from "./errors.ts";
import type { TaskResultValue } from "./result.ts";

/**
 * Where typed background tasks are defined.  `Federation` and
 * `FederationBuilder` implement it (through `Federatable`).
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TContext The context type task handlers get (the federation's
 *                     `TaskContext<TContextData>`).
 * @since 0.1.0
 */
export interface TaskRegistry<TContextData, TContext = unknown> {
  /**
   * Defines a task: a named job whose payload is described by a Standard
   * Schema and which a worker runs with `handler`.
   *
   * @example
   * ```ts
   * import { z } from "zod";
   *
   * const sendDigest = federation.defineTask("send-digest", {
   *   schema: z.object({ userId: z.string(), since: z.date() }),
   *   async handler(ctx, { userId, since }) {
   *     // ...
   *   },
   * });
   * await ctx.enqueueTask(sendDigest, { userId: "alice", since: new Date() });
   * ```
   * @param name The task's name: a non-empty, case-sensitive string, unique
   *             within the federation.  It identifies the task in queue
   *             messages, so keep it stable across deployments.
   * @param options The payload schema, the handler and optional retry
   *                policy, error hook and queue.
   * @returns The task's handle, to pass to `Context.enqueueTask()`; it
   *          carries the handler's result type (since 0.3.0) for
   *          `getTaskStatus(task, id)` and `watchTask(task, id)`.
   * @throws {TaskDefinitionError} When the name is empty or already
   *         defined, or an option is invalid.
   * @since 0.1.0
   */
  defineTask<TSchema extends StandardSchemaV1, TResult extends TaskResultValue | void = void>(
    name: string,
    options: TaskOptions<TContext, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  /**
   * Defines a task whose handler gets many payloads per run
   * (`handleMany: { size, wait }`): a worker collects up to `size` of the
   * task's messages, waiting at most `wait` after the first, and calls the
   * handler once with all of them; each item keeps its own outcome.
   *
   * @example
   * ```ts
   * import { z } from "zod";
   *
   * const indexPost = federation.defineTask("index-post", {
   *   schema: z.object({ postId: z.string() }),
   *   handleMany: { size: 50, wait: { milliseconds: 20 } },
   *   async handler(ctx, items) {
   *     await searchIndex.addAll(items.map((item) => item.data.postId));
   *   },
   * });
   * ```
   * @param name The task's name, as for a plain task.
   * @param options The payload schema, `handleMany`, the handler of many
   *                items and the plain task's other options.
   * @returns The task's handle; each payload is enqueued on its own.
   * @throws {TaskDefinitionError} When the name is empty or already
   *         defined, or an option is invalid.
   * @since 0.4.0
   */
  defineTask<TSchema extends StandardSchemaV1, TResult extends TaskResultValue | void = void>(
    name: string,
    options: TaskManyOptions<TContext, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
}

/**
 * The tasks defined on one federation (or builder), by name.  Internal: the
 * federation delegates `defineTask()` to it and its worker looks tasks up
 * in it.
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TContext The context type task handlers get.
 * @since 0.1.0
 */
export class TaskStore<TContextData, TContext = unknown>
  implements TaskRegistry<TContextData, TContext> {
  // A Map, not an object: names such as "constructor" or "__proto__" must
  // behave like any other name.
  readonly #tasks: Map<string, RegisteredTask<TContextData, TContext>>;

  /**
   * @param tasks Registrations to start with (used by {@link clone}).
   */
  constructor(tasks: Iterable<RegisteredTask<TContextData, TContext>> = []) {
    this.#tasks = new Map();
    for (const task of tasks) this.#tasks.set(task.name, task);
  }

  /**
   * Defines a task; see {@link TaskRegistry.defineTask}.
   * @param name The task's name.
   * @param options The task's options.
   * @returns The task's handle.
   * @throws {TaskDefinitionError} When the name is taken or invalid, or an
   *         option is invalid.
   */
  defineTask<TSchema extends StandardSchemaV1, TResult extends TaskResultValue | void = void>(
    name: string,
    options: TaskOptions<TContext, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  defineTask<TSchema extends StandardSchemaV1, TResult extends TaskResultValue | void = void>(
    name: string,
    options: TaskManyOptions<TContext, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  defineTask<TSchema extends StandardSchemaV1, TResult extends TaskResultValue | void = void>(
    name: string,
    options: TaskOptions<TContext, TSchema, TResult> | TaskManyOptions<TContext, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  > {
    return this.define(name, options).definition as TaskDefinition<
      TContextData,
      StandardSchemaV1.InferOutput<TSchema>,
      StandardSchemaV1.InferInput<TSchema>,
      TResult
    >;
  }

  /**
   * Checks and registers a task.
   * @param name The task's name.
   * @param options The task's options.
   * @returns The registered task.
   * @throws {TaskDefinitionError} When the name is taken or invalid, or an
   *         option is invalid.
   */
  define<TSchema extends StandardSchemaV1>(
    name: string,
    options: TaskOptions<TContext, TSchema> | TaskManyOptions<TContext, TSchema>,
  ): RegisteredTask<TContextData, TContext> {
    if (typeof name === "string" && this.#tasks.has(name)) {
      throw new TaskDefinitionError(
        name,
        "name",
        `A task named ${JSON.stringify(name)} is already defined; task names must be unique.`,
      );
    }
    const task = createTaskDefinition<TContextData, TContext, TSchema>(name, options);
    this.#tasks.set(name, task);
    return task;
  }

  /**
   * Looks a task up by name, as a worker does with a message's `taskName`.
   * @param name The task's name.
   * @returns The registered task, or `undefined`.
   */
  get(name: string): RegisteredTask<TContextData, TContext> | undefined {
    return this.#tasks.get(name);
  }

  /**
   * Looks a task up by its handle: the handle must be the very object this
   * store's `defineTask()` returned, not merely one with the same name.
   * @param handle The task's handle.
   * @returns The registered task, or `undefined`.
   */
  resolve(
    handle: TaskDefinition<TContextData, unknown, unknown>,
  ): RegisteredTask<TContextData, TContext> | undefined {
    if (handle == null || typeof handle.name !== "string") return undefined;
    const task = this.#tasks.get(handle.name);
    return task?.definition === handle ? task : undefined;
  }

  /**
   * Tells whether a handle was defined by this store (by identity).
   * @param handle The task's handle.
   * @returns `true` if this store's `defineTask()` returned it.
   */
  has(handle: TaskDefinition<TContextData, unknown, unknown>): boolean {
    return this.resolve(handle) != null;
  }

  /** The names of the defined tasks, in definition order. */
  get names(): string[] {
    return [...this.#tasks.keys()];
  }

  /**
   * Copies the registrations into a new store, so that a builder can give
   * each federation it builds its own tasks: definitions made later on
   * either store do not show up in the other.  Handles stay shared, so a
   * handle from the builder can be enqueued on every built federation.
   * @returns The copy.
   */
  clone(): TaskStore<TContextData, TContext> {
    return new TaskStore<TContextData, TContext>(this.#tasks.values());
  }
}
