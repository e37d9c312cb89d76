import { getLogger } from "@logtape/logtape";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { toTemporalDuration } from "../time/duration.ts";
import { encodeTaskPayload } from "./codec.ts";
import type { TaskDefinition, TaskEnqueueOptions } from "./definition.ts";
import { TaskNotDefinedError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskStore } from "./registry.ts";
import { resolveTaskQueue, type TaskQueueRoutingOptions } from "./routing.ts";
import { validateTaskPayload } from "./validation.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * What {@link enqueueTasks} needs: the task, its payloads, and what the
 * federation knows about queues and the current context.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.1.0
 */
export interface EnqueueTasksOptions<TContextData> {
  /** The federation's tasks; the handle must come from it. */
  // deno-lint-ignore no-explicit-any
  readonly registry: TaskStore<TContextData, any>;
  /** The task's handle, as `defineTask()` returned it. */
  readonly task: TaskDefinition<TContextData, unknown, unknown>;
  /** The payloads, as the caller gave them (the schema's input type). */
  readonly payloads: readonly unknown[];
  /** The caller's enqueue options.  None by default. */
  readonly options?: TaskEnqueueOptions;
  /** The federation's queues and task queue resolution policy. */
  readonly queues: TaskQueueRoutingOptions;
  /** The base URL of the context that enqueues, e.g. `https://example.com/`. */
  readonly baseUrl: string | URL;
  /** The W3C trace context to carry to the worker.  Empty by default. */
  readonly traceContext?: Readonly<Record<string, string>>;
}

/**
 * The messages {@link prepareTaskMessages} built, with the queue they go
 * into and the options to enqueue them with.
 * @since 0.1.0
 */
export interface PreparedTaskMessages {
  /** The queue the task resolves to. */
  readonly queue: MessageQueue;
  /** One message per payload, in payload order. */
  readonly messages: TaskMessage[];
  /** The `delay` and `orderingKey` to pass to the queue. */
  readonly queueOptions: MessageQueueEnqueueOptions;
}

/**
 * Builds one task message per payload without enqueueing anything: the
 * part of `Context.enqueueTask()` and `Context.enqueueTaskMany()` that
 * checks.  The federation then enqueues the messages through its own
 * enqueue path, which opens the enqueue span, writes its trace context into
 * the messages and starts the workers.
 *
 * Everything that can fail is checked here: that the handle belongs to
 * `registry`, the options, that a queue is configured, that every payload
 * satisfies the schema and that every payload can be encoded.  What is
 * encoded is the caller's payload, not the schema's output, because the
 * worker validates (and transforms) it again.
 * @param options The task, the payloads and the federation's state.
 * @returns The queue, the messages and the queue options.
 * @throws {TaskNotDefinedError} When the handle is not from `registry`.
 * @throws {TypeError} When `delay` is not a duration or `orderingKey` is
 *         not a string.
 * @throws {RangeError} When `delay` is negative.
 * @throws {TaskQueueNotConfiguredError} When no queue is configured.
 * @throws {TaskValidationError} When a payload does not match the schema.
 * @throws {TaskPayloadEncodingError} When a payload cannot be encoded.
 * @since 0.1.0
 */
export async function prepareTaskMessages<TContextData>(
  options: EnqueueTasksOptions<TContextData>,
): Promise<PreparedTaskMessages> {
  const task = options.registry.resolve(options.task);
  if (task == null) throw new TaskNotDefinedError(String(options.task?.name));
  const enqueueOptions = options.options ?? {};
  // Checked here so that a bad delay fails at the call site, not in the
  // queue; and handed over as a Temporal.Duration, the one form every queue
  // adapter understands (those written for Fedify call its methods).
  const delay = enqueueOptions.delay == null
    ? undefined
    : toTemporalDuration(enqueueOptions.delay, "delay");
  const orderingKey: unknown = enqueueOptions.orderingKey;
  if (orderingKey != null && typeof orderingKey !== "string") {
    throw new TypeError(
      `The orderingKey option must be a string; got ${typeof orderingKey}.`,
    );
  }
  const queueOptions: MessageQueueEnqueueOptions = {
    ...(delay == null ? {} : { delay }),
    ...(orderingKey == null ? {} : { orderingKey }),
  };
  if (!Array.isArray(options.payloads)) {
    throw new TypeError("The payloads must be an array.");
  }
  const queue: MessageQueue = resolveTaskQueue(task, options.queues);
  // Validate every payload before encoding any, and encode every payload
  // before enqueueing any: one bad payload enqueues nothing.
  await Promise.all(options.payloads.map((payload) => validateTaskPayload(task, payload)));
  const encoded = await Promise.all(options.payloads.map((payload) => encodeTaskPayload(payload)));
  const baseUrl = typeof options.baseUrl === "string" ? options.baseUrl : options.baseUrl.href;
  const started = new Date().toISOString();
  const traceContext = { ...options.traceContext };
  const messages = encoded.map((data): TaskMessage => ({
    type: "task",
    id: crypto.randomUUID(),
    baseUrl,
    taskName: task.name,
    data,
    started,
    attempt: 0,
    ...(queueOptions.orderingKey == null ? {} : { orderingKey: queueOptions.orderingKey }),
    traceContext,
  }));
  return { queue, messages, queueOptions };
}

/**
 * Checks and enqueues one task message per payload straight into the
 * task's queue, without a span and without starting workers (the context
 * uses {@link prepareTaskMessages} and the federation's enqueue path
 * instead).  Several messages go through `enqueueMany()` when the queue has
 * it, else through parallel `enqueue()` calls.
 * @param options The task, the payloads and the federation's state.
 * @returns The messages that were enqueued.
 * @throws {TaskNotDefinedError} When the handle is not from `registry`.
 * @throws {TypeError} When `delay` is not a duration or `orderingKey` is
 *         not a string.
 * @throws {RangeError} When `delay` is negative.
 * @throws {TaskQueueNotConfiguredError} When no queue is configured.
 * @throws {TaskValidationError} When a payload does not match the schema.
 * @throws {TaskPayloadEncodingError} When a payload cannot be encoded.
 * @since 0.1.0
 */
export async function enqueueTasks<TContextData>(
  options: EnqueueTasksOptions<TContextData>,
): Promise<TaskMessage[]> {
  const { queue, messages, queueOptions } = await prepareTaskMessages(options);
  if (messages.length === 0) return messages;
  if (messages.length > 1 && typeof queue.enqueueMany === "function") {
    await queue.enqueueMany(messages, queueOptions);
  } else {
    await Promise.all(messages.map((message) => queue.enqueue(message, queueOptions)));
  }
  logger.debug("Enqueued {count} message(s) for the task {taskName}.", {
    taskName: messages[0].taskName,
    count: messages.length,
    messageIds: messages.map((message) => message.id),
    orderingKey: queueOptions.orderingKey,
  });
  return messages;
}
