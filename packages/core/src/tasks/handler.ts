import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import type { MessageKindHandler, MessageRun } from "../processing/dispatcher.ts";
import type { BaseMessage } from "../processing/envelope.ts";
import { MalformedMessageError, RunCancelledError } from "../processing/errors.ts";
import type { MessageEventListener, MessageEventType } from "../processing/events.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { parseTimestamp } from "../time/timestamp.ts";
import type { TaskCancelWatch } from "./cancel-watch.ts";
import { decodePayloadNow } from "./codec/decode.ts";
import { resolveLimits } from "./codec/limits.ts";
import type { RegisteredTask } from "./definition.ts";
import type { LimitedRun } from "./limited-run.ts";
import { TaskPayloadDecodingError, TaskValidationError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskStore } from "./registry.ts";
import { normalizeTaskProgress, type TaskProgressInput } from "./progress.ts";
import type { TaskRunInfo } from "./run-info.ts";
import { keepTaskResult, TaskItemCollector } from "./run-many.ts";

import { RunPostponedError } from "../processing/run-postponed.ts";
import {
  markStepsUsed,
  setStepRunner,
  StepRunner,
  type StepRunnerHost,
  stepRunnerOf,
} from "./steps/mod.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * What {@link createTaskMessageHandler} needs from the federation.
 * @typeParam TContextData The application data of contexts.
 * @typeParam TContext The context type task handlers get.
 * @since 0.2.0
 */
export interface TaskMessageHandlerOptions<TContextData, TContext> {
  /** The federation's tasks, looked up by the message's `taskName`. */
  readonly registry: TaskStore<TContextData, TContext>;
  /**
   * Builds the context the handler (and `onError`) gets.
   * @param message The message.
   * @param baseUrl The message's `baseUrl`, parsed (shared between
   *                contexts: never modify it).
   * @param task The run information for `ctx.task`.
   * @param contextData The worker's context data.
   */
  readonly createContext: (
    message: TaskMessage,
    baseUrl: URL,
    task: TaskRunInfo,
    contextData: TContextData,
  ) => TContext | Promise<TContext>;
  /** Loads the documents vocabulary objects in payloads refer to. */
  readonly documentLoader: DocumentLoader;
  /** Loads JSON-LD contexts; `documentLoader` by default. */
  readonly contextLoader?: DocumentLoader;
  /** The retry policy for tasks without one of their own. */
  readonly retryPolicy: RetryPolicy;
  /**
   * The time limit, in milliseconds, of tasks without one of their own, or
   * `null` for none.  None by default.
   * @since 0.3.0
   */
  readonly timeoutMs?: number | null;
  /**
   * How long a `handleMany` run whose time limit passed gets to settle
   * before its items are decided without it (the dispatcher's grace
   * period, which plain tasks get from the dispatcher); 5 seconds by
   * default.
   * @since 0.4.0
   */
  readonly timeoutGraceMs?: number;
  /**
   * The queue a task's retry goes to when its message did not come from a
   * queue, or `undefined`.
   */
  readonly retryQueue: (task: RegisteredTask<TContextData, TContext>) => MessageQueue | undefined;
  /**
   * Called once the payload is valid, right before the handler runs (the
   * task status goes `running`); the handler waits for a promise it
   * returns.  Optional.
   * @since 0.2.0
   */
  readonly onStart?: (message: TaskMessage) => Promise<void> | undefined;
  /**
   * Stores and publishes a checked progress report of a running task.
   * Without it, `ctx.task.reportProgress()` only checks its argument.
   * @since 0.2.0
   */
  readonly reportProgress?: (
    message: TaskMessage,
    progress: { readonly percent?: number; readonly data?: unknown },
  ) => Promise<void>;
  /**
   * Watches a run for its cancellation (`cancelTask()`): called before
   * anything else; the payload is decoded and validated while the watch
   * finds out whether the task was cancelled (`checked`), and a run
   * already cancelled does not start.  Without it, tasks cannot be
   * cancelled.
   * @since 0.3.0
   */
  /**
   * Tells whether a debounced message was superseded by a later enqueue
   * with its key; asked only for messages with a `debounce` field.  Without
   * it, every debounced message runs.
   * @since 0.4.0
   */
  readonly isSuperseded?: (message: TaskMessage) => Promise<boolean>;
  /**
   * Waits for the rate and takes the concurrency slot of a run of a task
   * with `concurrency` or `rateLimit` (a `TaskRunLimiter`'s `begin()`);
   * asked only for such tasks, once the payload is valid.  Without it,
   * their limits are not applied.
   * @since 0.4.0
   */
  readonly beginLimitedRun?: (
    task: RegisteredTask<TContextData, TContext>,
    message: TaskMessage,
    data: unknown,
  ) => Promise<LimitedRun | undefined>;
  /**
   * Where `ctx.step` keeps its records and how it enqueues children.
   * Without it, handlers have no durable steps.
   * @since 0.4.0
   */
  readonly steps?: StepRunnerHost;
  readonly watchCancellation?: (
    message: TaskMessage,
    signal: AbortSignal,
    controller: AbortController | undefined,
  ) => TaskCancelWatch | undefined;
}

/**
 * Builds the `"task"` message kind's handler for the dispatcher: look the
 * task up, decode and validate the payload, build a context with the run
 * information and call the task's handler, then its `onError` if it threw.
 * It decides no retries: an unknown task or a malformed or invalid payload
 * throws `MalformedMessageError` (dropped); a failure to load a document
 * while decoding, or the handler's error, is rethrown for the dispatcher to
 * retry (or not, for a `PermanentError`).
 * @param options The federation's tasks, context factory, loaders and
 *                retry settings.
 * @returns The handler.
 * @since 0.2.0
 */
export function createTaskMessageHandler<TContextData, TContext>(
  options: TaskMessageHandlerOptions<TContextData, TContext>,
): MessageKindHandler<TContextData, TaskMessage> {
  const taskOf = (message: TaskMessage) => options.registry.get(message.taskName);
  // A worker sees few distinct base URLs (one per origin that enqueues), and
  // parsing one costs a fifth of running a trivial task: parse each once.
  const baseUrls = new Map<string, URL | null>();
  const parseBaseUrl = (text: string): URL | null => {
    let url = baseUrls.get(text);
    if (url === undefined) {
      if (baseUrls.size >= 256) baseUrls.clear();
      url = URL.parse(text);
      baseUrls.set(text, url);
    }
    return url;
  };
  // Built once: the loaders every payload is decoded with.
  const loaders = {
    documentLoader: options.documentLoader,
    contextLoader: options.contextLoader ?? options.documentLoader,
  };
  const limits = resolveLimits(undefined);
  /** A task's time limit in milliseconds: its own, else the federation's; `null` for none. */
  const timeLimitOf = (task: { readonly timeoutMs?: number | null } | undefined): number | null => {
    const own = task?.timeoutMs;
    return own === undefined ? options.timeoutMs ?? null : own;
  };
  // One collector per handleMany task, made when its first message comes.
  const collectors = new Map<string, TaskItemCollector<TContextData, TContext>>();
  const collectorOf = (task: RegisteredTask<TContextData, TContext>) => {
    let collector = collectors.get(task.name);
    if (collector == null) {
      collector = new TaskItemCollector(task, task.many!, options);
      collectors.set(task.name, collector);
    }
    return collector;
  };

  return {
    check(message: BaseMessage): TaskMessage {
      if (!hasTaskMessageFields(message) || parseBaseUrl(message.baseUrl) == null) {
        throw new MalformedMessageError("a task message lacks taskName, data or a valid baseUrl");
      }
      if (taskOf(message) == null) {
        throw new MalformedMessageError(
          `unknown task ${JSON.stringify(message.taskName)}; is it defined on this federation?`,
          { level: "warning" },
        );
      }
      return message;
    },

    run(message: TaskMessage, run: MessageRun<TContextData>): Promise<void> {
      // Not async itself: runTask() is the one async layer of a task run.
      let watch: TaskCancelWatch | undefined;
      try {
        watch = options.watchCancellation?.(message, run.signal, run.controller);
      } catch (error) {
        return Promise.reject(error);
      }
      return runTask(message, run, watch);
    },

    retryPolicy(message: TaskMessage): RetryPolicy {
      return taskOf(message)?.retryPolicy ?? options.retryPolicy;
    },

    retryQueue(message: TaskMessage): MessageQueue | undefined {
      const task = taskOf(message);
      return task == null ? undefined : options.retryQueue(task);
    },

    timeout(message: TaskMessage): number | null {
      const task = taskOf(message);
      // A handleMany item has no time limit of its own: its run has one,
      // shared by its items (see run-many.ts).
      return task?.many != null ? null : timeLimitOf(task);
    },

    maxDeliveries(message: TaskMessage): number | undefined {
      return taskOf(message)?.maxDeliveries;
    },

    taskName(message: BaseMessage): string | undefined {
      const name = (message as Partial<TaskMessage>).taskName;
      return typeof name === "string" ? name : undefined;
    },

    listener(message: TaskMessage, type: MessageEventType): MessageEventListener | undefined {
      // A task message always has its handler: it never goes unhandled.
      if (type === "unhandled") return undefined;
      return taskOf(message)?.on[type] as MessageEventListener | undefined;
    },
  };

  /**
   * Decodes and validates a task message's payload: the payload at once
   * when decoding and the schema are synchronous (the usual case, on every
   * task run), a promise of it otherwise.  A payload is never a `Promise`
   * (the codec cannot carry one), so `instanceof Promise` tells them apart.
   * @param task The message's task.
   * @param message The message.
   * @returns The payload, or a promise of it.
   * @throws {MalformedMessageError} When it cannot be decoded or does not
   *         match the task's schema (thrown, or as a rejection).
   */
  function payloadOf(
    task: RegisteredTask<TContextData, TContext>,
    message: TaskMessage,
  ): unknown {
    let decoded: unknown;
    try {
      decoded = decodePayloadNow(message.data, limits, loaders);
    } catch (error) {
      throw decodingFailure(error);
    }
    if (decoded instanceof Promise) {
      return decoded.then((value) => validated(task, value), (error) => {
        throw decodingFailure(error);
      });
    }
    return validated(task, decoded);
  }

  function validated(task: RegisteredTask<TContextData, TContext>, value: unknown): unknown {
    let result;
    try {
      result = task.schema["~standard"].validate(value);
    } catch (error) {
      throw schemaFailure(error);
    }
    // validate() may return a promise (async refinements).
    if (result instanceof Promise) {
      return result.then((settled) => validResult(task, settled), (error) => {
        throw schemaFailure(error);
      });
    }
    return validResult(task, result);
  }

  /**
   * Runs a task message: decodes and validates its payload, builds the
   * context and calls the handler (and `onError`).  With a cancellation
   * `watch`, the run ends cancelled when the task was cancelled before it
   * started or while it ran (a handler that ignored its signal and returned
   * is cancelled all the same: its result is not kept), and the watch ends
   * with the run.
   */
  async function runTask(
    message: TaskMessage,
    run: MessageRun<TContextData>,
    watch: TaskCancelWatch | undefined,
  ): Promise<void> {
    const signal = watch?.signal ?? run.signal;
    let limited: LimitedRun | undefined;
    try {
      const task = taskOf(message)!;
      // Only debounced messages pay the store read.
      if (message.debounce != null && await options.isSuperseded?.(message)) {
        throw new MalformedMessageError(
          `superseded by a later enqueue with the debounce key ${
            JSON.stringify(message.debounce.key)
          }`,
          { level: "info" },
        );
      }
      let data: unknown;
      // Awaited only when it is a promise: on every task run.
      if (watch == null) {
        data = payloadOf(task, message);
        if (data instanceof Promise) data = await data;
      } else {
        try {
          data = payloadOf(task, message);
          if (data instanceof Promise) data = await data;
        } catch (error) {
          // A task cancelled before this run ends cancelled, whatever its
          // payload holds.
          if (watch.checked != null) await watch.checked;
          if (watch.cancelled) throw cancelled(message, watch, false);
          throw error;
        }
        if (watch.checked != null) await watch.checked;
        if (watch.cancelled) throw cancelled(message, watch, false);
      }
      // Only tasks with limits pay for them: a store swap or two.
      if (task.concurrency != null || task.rateLimit != null) {
        limited = await options.beginLimitedRun?.(task, message, data);
      }
      const started = parseTimestamp(message.started);
      // Field by field: a spread of each optional field made an object for
      // every task run.
      const info: { -readonly [K in keyof TaskRunInfo]: TaskRunInfo[K] } = {
        name: task.name,
        id: message.id,
        attempt: message.attempt,
        enqueuedAt: new Date(Number.isNaN(started) ? 0 : started),
        signal,
        // A handleMany run reports progress for all its items (see
        // run-many.ts): no closure per item for it.
        reportProgress: task.many == null
          ? async (progress: TaskProgressInput) => {
            const normal = normalizeTaskProgress(progress);
            await options.reportProgress?.(message, normal);
          }
          : reportNoProgress,
      };
      const schedule = scheduleOf(message);
      if (schedule != null) info.schedule = schedule;
      if (message.batch?.role === "member" && typeof message.batch.id === "string") {
        info.batchId = message.batch.id;
      }
      let steps: StepRunner | undefined;
      // A handleMany run shares one context among its items: steps, which
      // record one task's progress, are for tasks with one payload per run.
      // A continuation of an older generation is dropped before it runs;
      // other runs get a runner only when the handler touches `ctx.step`.
      const stepped = options.steps != null && task.many == null;
      if (stepped && message.steps != null) {
        steps = new StepRunner(options.steps!, message);
        setStepRunner(info, steps);
        await steps.prepare();
      }
      const starting = options.onStart?.(message);
      if (starting instanceof Promise) await starting;
      if (task.many != null) {
        const state = { started: false };
        try {
          await collectorOf(task).add({
            message,
            data,
            signal,
            workerSignal: run.workerSignal ?? run.signal,
            limitMs: timeLimitOf(task),
            contextData: run.contextData,
            baseUrl: parseBaseUrl(message.baseUrl)!,
            info,
            state,
            yieldSlot: run.yieldSlot,
          });
        } catch (error) {
          if (watch?.cancelled) throw cancelled(message, watch, state.started, error);
          throw error;
        }
        if (watch?.cancelled) throw cancelled(message, watch, true);
        return;
      }
      // Neither is awaited unless it returned a promise: each await is a turn
      // of the microtask queue on every task run.
      let ctx = options.createContext(
        message,
        parseBaseUrl(message.baseUrl)!,
        info,
        run.contextData,
      );
      if (ctx instanceof Promise) ctx = await ctx;
      let returned: unknown;
      try {
        returned = task.handler(ctx as TContext, data);
        if (isThenable(returned)) returned = await returned;
      } catch (error) {
        if (stepped) steps ??= stepRunnerOf(info);
        if (steps?.used) markStepsUsed(message);
        // A cancelled task's error is the cancellation's doing: no onError.
        if (watch?.cancelled) throw cancelled(message, watch, true, error);
        // A sleep or wait ends the run, even if the handler caught it: no
        // failure.
        if (steps?.suspension != null) throw steps.suspension;
        if (error instanceof RunPostponedError) throw error;
        if (task.onError != null) {
          try {
            await task.onError(ctx, error, data);
          } catch (onErrorError) {
            logger.error("The onError hook of the task {taskName} threw: {error}", {
              taskName: task.name,
              messageId: message.id,
              error: onErrorError,
            });
          }
        }
        throw error;
      }
      if (stepped) steps ??= stepRunnerOf(info);
      if (steps?.used) markStepsUsed(message);
      if (steps?.suspension != null) throw steps.suspension;
      if (returned !== undefined) keepTaskResult(task, message, returned);
      if (watch?.cancelled) throw cancelled(message, watch, true);
    } finally {
      watch?.end();
      if (limited != null) {
        await limited.end().catch((error) => {
          // The lease frees the slot by itself; the run's outcome stands.
          logger.warn("Could not release the concurrency slot of {messageId}: {error}", {
            taskName: message.taskName,
            messageId: message.id,
            error,
          });
        });
      }
    }
  }
}

/** The item-level `reportProgress` of a handleMany item, never called. */
const reportNoProgress = (): Promise<void> => Promise.resolve();

/** Whether `value` is a promise or another thenable, which `await` adopts. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value != null &&
    typeof (value as { then?: unknown }).then === "function";
}

/** The error that ends a cancelled run as `cancelled`. */
function cancelled(
  message: TaskMessage,
  watch: TaskCancelWatch,
  started: boolean,
  cause?: unknown,
): RunCancelledError {
  const reason = watch.reason;
  return new RunCancelledError(message.id, {
    ...(reason == null ? {} : { reason }),
    started,
    ...(cause === undefined ? {} : { cause }),
  });
}

function scheduleOf(message: TaskMessage): TaskRunInfo["schedule"] {
  const schedule = message.schedule;
  if (typeof schedule?.id !== "string" || typeof schedule.tick !== "string") return undefined;
  const tick = new Date(schedule.tick);
  return Number.isNaN(tick.getTime()) ? undefined : { id: schedule.id, tick };
}

/**
 * Tells whether a queue message is a well-formed {@link TaskMessage}.
 * @param message The message.
 * @returns `true` for an object of type `"task"` with the required fields.
 * @since 0.1.0
 */
export function isTaskMessage(message: unknown): message is TaskMessage {
  return hasTaskMessageFields(message) && URL.canParse(message.baseUrl);
}

function hasTaskMessageFields(message: unknown): message is TaskMessage {
  if (message == null || typeof message !== "object") return false;
  const m = message as Partial<Record<keyof TaskMessage, unknown>>;
  return m.type === "task" && typeof m.id === "string" && typeof m.baseUrl === "string" &&
    typeof m.taskName === "string" && typeof m.data === "string" &&
    typeof m.started === "string" && typeof m.attempt === "number" &&
    Number.isInteger(m.attempt) && m.attempt >= 0 &&
    (m.orderingKey == null || typeof m.orderingKey === "string") &&
    m.traceContext != null && typeof m.traceContext === "object";
}

/** The malformed-message error for a payload that cannot be decoded. */
function decodingFailure(error: unknown): unknown {
  if (error instanceof TaskPayloadDecodingError) {
    return new MalformedMessageError(`the payload cannot be decoded: ${error.message}`, {
      cause: error,
    });
  }
  // Anything else (a document that could not be loaded) is transient.
  return error;
}

/** The value of a schema's result, or the malformed-message error of its issues. */
function validResult(
  task: { readonly name: string },
  result: StandardSchemaV1.Result<unknown>,
): unknown {
  if (result.issues == null) return result.value;
  const error = new TaskValidationError(task.name, result.issues);
  throw new MalformedMessageError(`the payload does not match the schema: ${error.message}`, {
    cause: error,
    details: {
      issues: error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
    },
  });
}

/** A schema that throws instead of reporting issues would throw again. */
function schemaFailure(error: unknown): MalformedMessageError {
  return new MalformedMessageError(
    `the schema threw: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}
