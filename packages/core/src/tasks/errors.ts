import type { StandardSchemaV1 } from "@standard-schema/spec";

/**
 * Thrown by `defineTask()` when a task name or option is missing or
 * invalid.  The message names the task and the option.
 * @since 0.1.0
 */
export class TaskDefinitionError extends TypeError {
  /** The name of the task, as given. */
  readonly taskName: string;
  /** The name of the offending option, e.g. `"schema"`, or `"name"`. */
  readonly option: string;

  /**
   * @param taskName The task's name.
   * @param option The offending option.
   * @param message What is wrong and how to fix it.
   */
  constructor(taskName: string, option: string, message: string) {
    super(message);
    this.name = "TaskDefinitionError";
    this.taskName = taskName;
    this.option = option;
  }
}

/**
 * Thrown when a task payload does not satisfy the task's schema, when it is
 * enqueued (so nothing is enqueued) or when a worker decodes it.
 * @since 0.1.0
 */
export class TaskValidationError extends TypeError {
  /** The name of the task whose schema rejected the payload. */
  readonly taskName: string;
  /** The issues the schema reported, as the schema reported them. */
  readonly issues: readonly StandardSchemaV1.Issue[];

  /**
   * @param taskName The task's name.
   * @param issues The schema's issues.
   */
  constructor(taskName: string, issues: readonly StandardSchemaV1.Issue[]) {
    const lines = issues.map((issue) => `  - ${formatIssue(issue)}`);
    super(
      `The payload for the task ${JSON.stringify(taskName)} does not match its schema:\n` +
        lines.join("\n"),
    );
    this.name = "TaskValidationError";
    this.taskName = taskName;
    this.issues = issues;
  }
}

/**
 * Thrown (as a rejection) when a task payload holds a value the task codec
 * cannot carry: a function, a symbol, or an instance of a class that is
 * neither a built-in the codec knows nor an Activity Vocabulary object.
 * @since 0.1.0
 */
export class TaskPayloadEncodingError extends TypeError {
  /**
   * Where the offending value sits in the payload, starting at `data`, e.g.
   * `data.items[2].callback` or `data.get("key")`.
   */
  readonly path: string;

  /**
   * @param path The offending value's path.
   * @param reason Why the value cannot be encoded.
   * @param options The underlying error, if any.
   */
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super(
      `Cannot encode the task payload at ${path}: ${reason}  A task payload may hold ` +
        "JSON values, undefined, bigint, Date, RegExp, Map, Set, URL, typed arrays and " +
        "Activity Vocabulary objects.",
      options,
    );
    this.name = "TaskPayloadEncodingError";
    this.path = path;
  }
}

/**
 * Thrown (as a rejection) when a task message's wire string cannot be
 * decoded: it is not a string the task codec wrote, or an Activity
 * Vocabulary object in it cannot be rebuilt from its JSON-LD.
 * @since 0.1.0
 */
export class TaskPayloadDecodingError extends TypeError {
  /**
   * @param reason Why the payload cannot be decoded.
   * @param options The underlying error, if any.
   */
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`Cannot decode the task payload: ${reason}`, options);
    this.name = "TaskPayloadDecodingError";
  }
}

/**
 * Thrown (as a rejection) by `decodeTaskPayload()` when the document loader
 * or the context loader failed while an Activity Vocabulary object in the
 * payload was being rebuilt.  Unlike a {@link TaskPayloadDecodingError},
 * which means the message itself is unusable, this is usually transient
 * (the network, a cache), so a worker should retry the message rather than
 * drop it.
 * @since 0.2.0
 */
export class TaskPayloadLoadError extends Error {
  /** The URL whose loading failed, when the loader was given one. */
  readonly url?: string;

  /**
   * @param url The URL whose loading failed, if known.
   * @param options The loader's error, as `cause`.
   */
  constructor(url: string | undefined, options: { cause: unknown }) {
    const cause = options.cause;
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Cannot decode the task payload: loading ${
        url == null ? "a JSON-LD document" : `<${url}>`
      } failed (${reason.replace(/\.$/, "")}).  This is usually transient; retrying the ` +
        "message may succeed.",
      options,
    );
    this.name = "TaskPayloadLoadError";
    if (url != null) this.url = url;
  }
}

/**
 * Thrown when a task is enqueued but no queue is configured for it.  The
 * message names the task and says how to configure a queue.
 * @since 0.1.0
 */
export class TaskQueueNotConfiguredError extends Error {
  /** The name of the task. */
  readonly taskName: string;

  /**
   * @param taskName The task's name.
   * @param strict Whether the outbox queue fallback was turned off.
   * @param message Replaces the default message (since 0.2.0).
   */
  constructor(taskName: string, strict: boolean, message?: string) {
    super(
      message ?? `No message queue is configured for the task ${JSON.stringify(taskName)}.  ` +
          "Pass a task queue to the federation (`queue: { task: ... }`) or give the task " +
          "its own queue (`defineTask(name, { queue, ... })`)" +
          (strict
            ? '; the outbox queue is not used because taskQueueResolution is "strict".'
            : "."),
    );
    this.name = "TaskQueueNotConfiguredError";
    this.taskName = taskName;
  }
}

/**
 * Thrown by `enqueueTask()` when the task handle was not defined by the
 * federation it is enqueued on (for example, a handle from another
 * federation that happens to use the same name).
 * @since 0.1.0
 */
export class TaskNotDefinedError extends Error {
  /** The name of the task. */
  readonly taskName: string;

  /**
   * @param taskName The task's name.
   */
  constructor(taskName: string) {
    super(
      `The task ${JSON.stringify(taskName)} was not defined on this federation.  Enqueue ` +
        "the handle that this federation's defineTask() returned.",
    );
    this.name = "TaskNotDefinedError";
    this.taskName = taskName;
  }
}

/**
 * The reason `ctx.task.signal` aborts with when `cancelTask()` cancelled
 * the running task.  Whatever the handler does after that (returns,
 * throws), the task ends as `cancelled` and is not retried.
 * @since 0.3.0
 */
export class TaskCancelledError extends Error {
  /** The task's id. */
  readonly taskId: string;
  /** The reason given to `cancelTask()`, if any. */
  readonly reason: string | undefined;

  /**
   * @param taskId The task's id.
   * @param reason The reason given to `cancelTask()`, if any.
   */
  constructor(taskId: string, reason?: string) {
    super(`The task ${taskId} was cancelled${reason == null ? "" : `: ${reason}`}.`);
    this.name = "TaskCancelledError";
    this.taskId = taskId;
    this.reason = reason;
  }
}

/**
 * Formats a Standard Schema issue path the way it would be written in
 * JavaScript, e.g. `items[0].name`.  An empty path formats as `(root)`.
 * @param path The issue's path.
 * @returns The formatted path.
 * @since 0.1.0
 */
export function formatIssuePath(
  path: StandardSchemaV1.Issue["path"],
): string {
  if (path == null || path.length === 0) return "(root)";
  let formatted = "";
  for (const segment of path) {
    const key = typeof segment === "object" && segment != null ? segment.key : segment;
    if (typeof key === "number") formatted += `[${key}]`;
    else if (typeof key === "symbol") formatted += `[${String(key)}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) {
      formatted += formatted === "" ? key : `.${key}`;
    } else formatted += `[${JSON.stringify(key)}]`;
  }
  return formatted;
}

function formatIssue(issue: StandardSchemaV1.Issue): string {
  return `${formatIssuePath(issue.path)}: ${issue.message}`;
}

/**
 * Thrown by `enqueueTask()` and `enqueueTaskMany()` when a payload has a
 * `deduplicationKey` but neither its queue deduplicates natively nor the
 * federation's key–value store has `cas()`, so the key could not be held
 * atomically.  Nothing is enqueued.
 * @since 0.2.0
 */
export class TaskDeduplicationNotSupportedError extends Error {
  /** The name of the task. */
  readonly taskName: string;

  /**
   * @param taskName The task's name.
   */
  constructor(taskName: string) {
    super(
      `The task ${JSON.stringify(taskName)} was enqueued with a deduplicationKey, but its ` +
        "queue does not deduplicate natively (nativeDeduplication) and the federation's " +
        "KvStore has no cas() method to reserve the key atomically. Use a queue that " +
        "deduplicates (SqliteMessageQueue, PostgresMessageQueue, RedisMessageQueue) or a " +
        "KvStore with cas(), or enqueue without a deduplicationKey.",
    );
    this.name = "TaskDeduplicationNotSupportedError";
    this.taskName = taskName;
  }
}

/**
 * Thrown by `retryFailedTask()` when there is no failed task with the id
 * (never failed, already retried or discarded, or past its retention).
 * @since 0.2.0
 */
export class FailedTaskNotFoundError extends Error {
  /** The id that was looked up. */
  readonly id: string;

  /**
   * @param id The failed task's id.
   */
  constructor(id: string) {
    super(
      `There is no failed task with the id ${JSON.stringify(id)}: it was retried or ` +
        "discarded already, is past the failedTaskRetention, or never failed. List the " +
        "failed tasks with listFailedTasks().",
    );
    this.name = "FailedTaskNotFoundError";
    this.id = id;
  }
}
