import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { assertPrioritySupported, checkMessagePriority } from "../queue/priority.ts";
import { toTemporalDuration } from "../time/duration.ts";
import { encodeTaskPayloads, type TaskPayloadLimits } from "./codec/mod.ts";
import { checkTaskDebounce, type ResolvedTaskDebounce } from "./debounce.ts";
import {
  checkEnqueueCapabilities,
  type TaskDefinition,
  type TaskEnqueueManyOptions,
  type TaskEnqueueOptions,
} from "./definition.ts";
import { TaskNotDefinedError, TaskValidationError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskStore } from "./registry.ts";
import { resolveTaskQueue, type TaskQueueRoutingOptions } from "./routing.ts";
import { checkTaskThrottle } from "./throttle.ts";

/**
 * What {@link prepareTaskMessages} needs: the task, its payloads, and what the
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
  readonly options?: TaskEnqueueOptions | TaskEnqueueManyOptions<unknown>;
  /** The federation's queues and task queue resolution policy. */
  readonly queues: TaskQueueRoutingOptions;
  /** The base URL of the context that enqueues, e.g. `https://example.com/`. */
  readonly baseUrl: string | URL;
  /** The W3C trace context to carry to the worker.  Empty by default. */
  readonly traceContext?: Readonly<Record<string, string>>;
  /**
   * The limits payloads are encoded within.  The codec's defaults (256
   * levels, 1 MiB) by default.
   * @since 0.2.0
   */
  readonly payloadLimits?: TaskPayloadLimits;
  /**
   * The clock of the messages' enqueue time (`started`); `Date.now` by
   * default.
   * @since 0.4.0
   */
  readonly now?: () => number;
}

// Shared by messages enqueued without trace context; the federation stamps
// its own into the messages it enqueues.
const noTraceContext: Readonly<Record<string, string>> = Object.freeze({});

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
  /** The `delay`, `orderingKey` and `priority` to pass to the queue. */
  readonly queueOptions: MessageQueueEnqueueOptions;
  /**
   * Whether some message carries a deduplication key (then it must go
   * through `enqueueTaskMessages()` of `dedup.ts`).
   * @since 0.2.0
   */
  readonly deduplicated: boolean;
  /**
   * The checked `debounce` or `throttle` option, with each message's key
   * (then they go through `enqueueFlowControlled()`).  None by default.
   * @since 0.4.0
   */
  readonly flow?: PreparedTaskFlow;
}

/**
 * The checked `debounce` or `throttle` option of prepared messages, with
 * each message's key.  Internal.
 * @since 0.4.0
 */
export type PreparedTaskFlow =
  | {
    readonly kind: "debounce";
    readonly debounce: ResolvedTaskDebounce;
    readonly keys: readonly string[];
  }
  | { readonly kind: "throttle"; readonly periodMs: number; readonly keys: readonly string[] };

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
 * @throws {RangeError} When `delay` is negative or `priority` is not an
 *         integer from -5 to 5.
 * @throws {TypeError} When `capabilities` is not an array of non-empty
 *         strings, or the queue cannot derive the sibling queue for them.
 * @throws {TaskQueueNotConfiguredError} When no queue is configured.
 * @throws {TypeError} When `priority` is not 0 and the queue does not order
 *         by priority.
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
  const queueOptions: {
    -readonly [K in keyof MessageQueueEnqueueOptions]: MessageQueueEnqueueOptions[K];
  } = {};
  if (delay != null) queueOptions.delay = delay;
  if (orderingKey != null) queueOptions.orderingKey = orderingKey;
  const priority = enqueueOptions.priority === undefined
    ? task.priority ?? 0
    : checkMessagePriority(enqueueOptions.priority);
  if (priority !== 0) queueOptions.priority = priority;
  if (!Array.isArray(options.payloads)) {
    throw new TypeError("The payloads must be an array.");
  }
  const keys = deduplicationKeys(enqueueOptions.deduplicationKey, options.payloads);
  // Checked only when given: an enqueue without them pays one property read.
  const flowOption = enqueueOptions.debounce != null || enqueueOptions.throttle != null
    ? checkFlowOptions(enqueueOptions)
    : undefined;
  // The job's own capabilities add to the definition's: the union routes
  // it to the sibling queue of that set, as a definition's set would.
  const jobCapabilities = checkEnqueueCapabilities(enqueueOptions.capabilities, "enqueueTask()");
  const queue: MessageQueue = resolveTaskQueue(
    jobCapabilities.length === 0 ? task : {
      name: task.name,
      ...(task.queue == null ? {} : { queue: task.queue }),
      capabilities: [...new Set([...task.capabilities, ...jobCapabilities])].sort(),
    },
    options.queues,
  );
  assertPrioritySupported(priority, queue, `The queue of the task ${JSON.stringify(task.name)}`);
  const via = queue.nativeDeduplication && typeof queue.enqueueDeduplicated === "function"
    ? "queue"
    : "kv";
  // Validate every payload before encoding any, and encode every payload
  // before enqueueing any: one bad payload enqueues nothing.
  const { payloads } = options;
  // A synchronous schema and a payload without vocabulary objects (the
  // common case) cost no promise: each await would take a turn of the
  // event loop's microtask queue per enqueue.
  const validated = validateTaskPayloads(task, payloads);
  if (validated != null) await validated;
  // Encoded together so that a vocabulary object shared by several
  // payloads (one activity for many recipients) becomes JSON-LD once.
  const encodedOrPending = encodeTaskPayloads(payloads, options.payloadLimits);
  const encoded = Array.isArray(encodedOrPending) ? encodedOrPending : await encodedOrPending;
  const baseUrl = typeof options.baseUrl === "string" ? options.baseUrl : options.baseUrl.href;
  const started = timestamp(options.now ?? Date.now);
  const traceContext = options.traceContext == null ? noTraceContext : { ...options.traceContext };
  const taskName = task.name;
  const messages: TaskMessage[] = new Array(encoded.length);
  for (let i = 0; i < encoded.length; i++) {
    // Two literals rather than a spread of an optional orderingKey: one
    // object per message, and one shape per queue.
    messages[i] = orderingKey == null
      ? {
        type: "task",
        id: crypto.randomUUID(),
        baseUrl,
        taskName,
        data: encoded[i],
        started,
        attempt: 0,
        traceContext,
      }
      : {
        type: "task",
        id: crypto.randomUUID(),
        baseUrl,
        taskName,
        data: encoded[i],
        started,
        attempt: 0,
        orderingKey,
        traceContext,
      };
  }
  // Carried in the message too, so that a retry re-enqueued by the
  // dispatcher keeps it.
  if (priority !== 0) {
    for (let i = 0; i < messages.length; i++) messages[i] = { ...messages[i], priority };
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key != null) messages[i] = { ...messages[i], deduplication: { key, via } };
  }
  const deduplicated = keys.some((key) => key != null);
  if (flowOption == null) return { queue, messages, queueOptions, deduplicated };
  const flowKeys = payloads.map((payload, index) => flowKey(flowOption, payload, index));
  if (flowOption.kind === "debounce") {
    for (let i = 0; i < messages.length; i++) {
      messages[i] = { ...messages[i], debounce: { key: flowKeys[i] } };
    }
  }
  const flow: PreparedTaskFlow = flowOption.kind === "debounce"
    ? { kind: "debounce", debounce: flowOption.debounce, keys: flowKeys }
    : { kind: "throttle", periodMs: flowOption.periodMs, keys: flowKeys };
  return { queue, messages, queueOptions, deduplicated, flow };
}

type FlowOption =
  | { readonly kind: "debounce"; readonly debounce: ResolvedTaskDebounce; readonly key: unknown }
  | { readonly kind: "throttle"; readonly periodMs: number; readonly key: unknown };

/**
 * Checks `debounce` and `throttle` and what they cannot be combined with.
 * @throws {TypeError} When both are given, or with an option they exclude.
 */
function checkFlowOptions(
  options: TaskEnqueueOptions | TaskEnqueueManyOptions<unknown>,
): FlowOption {
  const { debounce, throttle, deduplicationKey, delay } = options as {
    readonly debounce?: { readonly key?: unknown };
    readonly throttle?: { readonly key?: unknown };
    readonly deduplicationKey?: unknown;
    readonly delay?: unknown;
  };
  if (debounce != null && throttle != null) {
    throw new TypeError("The debounce and throttle options cannot be used together.");
  }
  const name = debounce != null ? "debounce" : "throttle";
  if (deduplicationKey != null) {
    throw new TypeError(`The ${name} option cannot be used with deduplicationKey.`);
  }
  if (debounce != null) {
    if (delay != null) {
      throw new TypeError(
        "The debounce option cannot be used with delay; debounce.delay sets when it runs.",
      );
    }
    return { kind: "debounce", debounce: checkTaskDebounce(debounce), key: debounce.key };
  }
  return { kind: "throttle", ...checkTaskThrottle(throttle), key: throttle!.key };
}

/** A payload's debounce or throttle key, checked. */
function flowKey(option: FlowOption, payload: unknown, index: number): string {
  const key: unknown = typeof option.key === "function" ? option.key(payload, index) : option.key;
  if (typeof key !== "string" || key === "") {
    throw new TypeError(
      `The ${option.kind}.key of payload ${index} must be a non-empty string; got ${
        JSON.stringify(key) ?? typeof key
      }.`,
    );
  }
  return key;
}

/**
 * The priority fields of a task message that is rebuilt rather than
 * prepared (a schedule's tick, a retried failed task): the task's own
 * default, for both the message and the queue options.  Internal.
 * @param task The task.
 * @param queue The queue it goes into.
 * @returns `{ priority }`, or nothing for priority 0.
 * @throws {TypeError} When the task has a priority and the queue does not
 *         order by priority.
 * @since 0.3.0
 */
export function defaultTaskPriority(
  task: { readonly name: string; readonly priority?: number },
  queue: MessageQueue,
): { readonly priority?: number } {
  const priority = task.priority ?? 0;
  assertPrioritySupported(priority, queue, `The queue of the task ${JSON.stringify(task.name)}`);
  return priority === 0 ? {} : { priority };
}

/**
 * The deduplication key of each payload, checked.
 * @throws {TypeError} When a key is not a non-empty string.
 */
function deduplicationKeys(
  option: TaskEnqueueManyOptions<unknown>["deduplicationKey"],
  payloads: readonly unknown[],
): (string | undefined)[] {
  if (option == null) return payloads.map(() => undefined);
  if (typeof option !== "string" && typeof option !== "function") {
    throw new TypeError(
      `The deduplicationKey option must be a string or a function of each payload; got ${typeof option}.`,
    );
  }
  return payloads.map((payload, index) => {
    const key: unknown = typeof option === "function" ? option(payload, index) : option;
    if (key == null) return undefined;
    if (typeof key !== "string" || key === "") {
      throw new TypeError(
        `The deduplication key of payload ${index} must be a non-empty string; got ${
          JSON.stringify(key) ?? typeof key
        }.`,
      );
    }
    return key;
  });
}

let lastMillisecond = Number.NaN;
let lastTimestamp = "";

/** The current time as an ISO 8601 timestamp, formatted once per millisecond. */
function timestamp(clock: () => number): string {
  const now = clock();
  if (now !== lastMillisecond) {
    lastMillisecond = now;
    lastTimestamp = new Date(now).toISOString();
  }
  return lastTimestamp;
}

/** What validation needs of a task. */
interface SchemaOwner {
  readonly name: string;
  readonly schema: StandardSchemaV1<unknown, unknown>;
}

/**
 * Validates every payload, synchronously when the schema is synchronous.
 * @returns A promise when some validation is asynchronous, else nothing.
 * @throws {TaskValidationError} When a payload does not match the schema
 *         (thrown, or as a rejection from the returned promise).
 */
function validateTaskPayloads(
  task: SchemaOwner,
  payloads: readonly unknown[],
): Promise<unknown> | undefined {
  let pending: Promise<unknown>[] | undefined;
  try {
    for (const payload of payloads) {
      const result = task.schema["~standard"].validate(payload);
      if (typeof (result as { then?: unknown }).then === "function") {
        (pending ??= []).push(
          Promise.resolve(result).then((settled) => checkValidation(task, settled)),
        );
      } else checkValidation(task, result as StandardSchemaV1.Result<unknown>);
    }
  } catch (error) {
    // The validations already under way are abandoned: keep their failures
    // from surfacing as unhandled rejections.
    for (const promise of pending ?? []) promise.catch(() => {});
    throw error;
  }
  return pending == null ? undefined : Promise.all(pending);
}

function checkValidation(
  task: SchemaOwner,
  result: StandardSchemaV1.Result<unknown>,
): void {
  if (result.issues != null) throw new TaskValidationError(task.name, result.issues);
}
