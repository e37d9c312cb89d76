import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { Context } from "../federation/context.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { createExponentialBackoffPolicy } from "../retry/exponential-backoff.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { decodeTaskPayload } from "./codec.ts";
import { TaskValidationError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskStore } from "./registry.ts";
import { validateTaskPayload } from "./validation.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * What {@link processTaskMessage} needs from the federation.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.1.0
 */
export interface ProcessTaskMessageOptions<TContextData> {
  /** The federation's tasks, looked up by the message's `taskName`. */
  readonly registry: TaskStore<TContextData>;
  /**
   * Builds the context the handler (and `onError`) gets.
   * @param baseUrl The message's base URL.
   * @param message The message.
   */
  readonly createContext: (
    baseUrl: URL,
    message: TaskMessage,
  ) => Context<TContextData> | Promise<Context<TContextData>>;
  /** Loads the documents vocabulary objects in payloads refer to. */
  readonly documentLoader: DocumentLoader;
  /** Loads JSON-LD contexts; `documentLoader` by default. */
  readonly contextLoader?: DocumentLoader;
  /**
   * The queue the message came from.  A failed task is re-enqueued into it,
   * unless it retries natively (`nativeRetrial`), in which case the
   * handler's error is rethrown to it.
   */
  readonly queue: MessageQueue;
  /**
   * The federation's `taskRetryPolicy`, used for tasks without a retry
   * policy of their own.  `createExponentialBackoffPolicy()` by default.
   */
  readonly retryPolicy?: RetryPolicy;
}

/**
 * What became of a task message.
 * - `"completed"`: the handler succeeded.
 * - `"dropped"`: the message was discarded without running the handler
 *   (unknown task, undecodable or invalid payload); never retried.
 * - `"retried"`: the handler failed and a retry was enqueued.
 * - `"exhausted"`: the handler failed and the retry policy gave up.
 * @since 0.1.0
 */
export type TaskMessageOutcome = "completed" | "dropped" | "retried" | "exhausted";

let defaultRetryPolicy: RetryPolicy | undefined;

/**
 * Runs one task message on a worker: the implementation of the `"task"`
 * branch of the federation's queue listener.
 *
 * It looks the task up by name (an unknown name is logged as a warning and
 * the message dropped), decodes and validates the payload (a failure is
 * logged as an error and the message dropped, without retry: another
 * attempt would fail the same way), builds a context and calls the handler
 * with the schema's output.  When the handler throws, `onError` is called;
 * then the error is rethrown if the queue retries natively, else the retry
 * policy (the task's, else `retryPolicy`, else exponential backoff) decides
 * whether a copy with `attempt + 1` is enqueued after a delay.
 * @param message The task message.
 * @param options The federation's tasks, context factory, document loader,
 *                queue and default retry policy.
 * @returns What became of the message.
 * @throws {unknown} The handler's error, when the queue retries natively;
 *         an error from re-enqueueing.
 * @since 0.1.0
 */
export async function processTaskMessage<TContextData>(
  message: TaskMessage,
  options: ProcessTaskMessageOptions<TContextData>,
): Promise<TaskMessageOutcome> {
  const properties = {
    taskName: message?.taskName,
    messageId: message?.id,
    attempt: message?.attempt,
  };
  if (!isTaskMessage(message)) {
    logger.error("Dropped a malformed task message.", { ...properties, message });
    return "dropped";
  }
  const task = options.registry.get(message.taskName);
  if (task == null) {
    logger.warn(
      "Dropped a message for the unknown task {taskName}; is it defined on this federation?",
      properties,
    );
    return "dropped";
  }
  let decoded: unknown;
  try {
    decoded = await decodeTaskPayload(message.data, {
      documentLoader: options.documentLoader,
      contextLoader: options.contextLoader,
    });
  } catch (error) {
    logger.error(
      "Dropped a message for the task {taskName} whose payload cannot be decoded: {reason}",
      { ...properties, reason: error instanceof Error ? error.message : String(error), error },
    );
    return "dropped";
  }
  let data: unknown;
  try {
    data = await validateTaskPayload(task, decoded);
  } catch (error) {
    if (!(error instanceof TaskValidationError)) {
      // A schema that throws instead of reporting issues would throw again.
      logger.error(
        "Dropped a message for the task {taskName} whose schema threw: {reason}",
        { ...properties, reason: error instanceof Error ? error.message : String(error), error },
      );
      return "dropped";
    }
    logger.error(
      "Dropped a message for the task {taskName} whose payload does not match the " +
        "schema: {reason}",
      {
        ...properties,
        reason: error.message,
        issues: error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
      },
    );
    return "dropped";
  }
  const ctx = await options.createContext(new URL(message.baseUrl), message);
  try {
    await task.handler(ctx, data);
    logger.debug("Ran the task {taskName}.", properties);
    return "completed";
  } catch (error) {
    logger.warn(
      "The task {taskName} failed on attempt {attempt}: {error}",
      { ...properties, error },
    );
    if (task.onError != null) {
      try {
        await task.onError(ctx, error, data);
      } catch (onErrorError) {
        logger.error(
          "The onError hook of the task {taskName} threw: {error}",
          { ...properties, error: onErrorError },
        );
      }
    }
    if (options.queue.nativeRetrial) throw error;
    const policy = task.retryPolicy ?? options.retryPolicy ??
      (defaultRetryPolicy ??= createExponentialBackoffPolicy());
    const attempts = message.attempt + 1;
    const startedAt = Date.parse(message.started);
    const elapsedTime = millisecondsToDuration(
      Number.isNaN(startedAt) ? 0 : Math.max(0, Date.now() - startedAt),
    );
    const delay = policy({ attempts, elapsedTime });
    if (delay == null) {
      logger.error(
        "Gave up on the task {taskName} (message {messageId}) after {attempts} attempts.",
        { ...properties, attempts, error },
      );
      return "exhausted";
    }
    const retry: TaskMessage = { ...message, attempt: attempts };
    await options.queue.enqueue(retry, {
      delay,
      ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
    });
    logger.info(
      "Scheduled attempt {nextAttempt} of the task {taskName} in {delay}.",
      { ...properties, nextAttempt: attempts, delay: delay.toString() },
    );
    return "retried";
  }
}

/**
 * Tells whether a queue message is a well-formed {@link TaskMessage}.
 * @param message The message.
 * @returns `true` for an object of type `"task"` with the required fields.
 * @since 0.1.0
 */
export function isTaskMessage(message: unknown): message is TaskMessage {
  if (message == null || typeof message !== "object") return false;
  const m = message as Partial<Record<keyof TaskMessage, unknown>>;
  return m.type === "task" && typeof m.id === "string" && typeof m.baseUrl === "string" &&
    URL.canParse(m.baseUrl) && typeof m.taskName === "string" && typeof m.data === "string" &&
    typeof m.started === "string" && typeof m.attempt === "number" &&
    Number.isInteger(m.attempt) && m.attempt >= 0 &&
    (m.orderingKey == null || typeof m.orderingKey === "string") &&
    m.traceContext != null && typeof m.traceContext === "object";
}
