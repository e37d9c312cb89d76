// Events for durable waits: `sendEvent()` keeps the event for a window (so
// that a wait that starts later still sees it) and wakes the tasks waiting
// on its key, which registered themselves before they went to sleep.
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { durationToMilliseconds } from "../../time/duration.ts";
import { encodeTaskPayload } from "../codec/mod.ts";
import type { TaskMessage } from "../message.ts";
import {
  DEFAULT_STEP_EVENT_WINDOW_MS,
  MAX_EVENT_KEY_LENGTH,
  MAX_STEP_EVENT_WINDOW_MS,
  MAX_STEP_ID_LENGTH,
  MAX_STEP_RECORD_BYTES,
  MAX_WAITERS_PER_KEY,
} from "./limits.ts";
import type { SendEventOptions, SendEventResult } from "./types.ts";
import { assertKnownOptions } from "../../options/known-options.ts";

const logger = getLogger(["fedwork", "task", "steps"]);

/**
 * The name of the internal event a child task of `ctx.step.invoke()` sends
 * when it ends, keyed by its id.  Internal.
 * @since 0.4.0
 */
export const CHILD_ENDED_EVENT = "fedwork:task-ended";

/**
 * A sent event, as kept.  Internal.
 * @since 0.4.0
 */
export interface StoredStepEvent {
  /** The encoded data. */
  readonly data: string;
  /** When it was sent, in epoch milliseconds. */
  readonly sentAt: number;
}

/**
 * A task waiting on an event key.  Internal.
 * @since 0.4.0
 */
export interface StepWaiter {
  /** The waiting task's id. */
  readonly task: string;
  /** The waiting step's id. */
  readonly step: string;
  /** The generation the woken message carries. */
  readonly gen: number;
  /** When the wait times out, in epoch milliseconds. */
  readonly until: number;
  /** The task's message, to enqueue again when woken. */
  readonly message: TaskMessage;
}

/** Puts a woken task's message into its task's queue. */
export type WakeTask = (message: TaskMessage) => Promise<void>;

function eventKey(event: string, key: string): KvKey {
  return ["fedwork", "steps", "event", event, key];
}

function waitersKey(event: string, key: string): KvKey {
  return ["fedwork", "steps", "waiters", event, key];
}

/**
 * Checks an event name and key.
 * @param where The caller, for the message.
 * @param event The event's name.
 * @param key The key.
 * @throws {TypeError} When either is not a non-empty string or too long.
 * @since 0.4.0
 */
export function checkEventAddress(where: string, event: unknown, key: unknown): void {
  if (typeof event !== "string" || event === "" || event.length > MAX_STEP_ID_LENGTH) {
    throw new TypeError(
      `${where} needs an event name: a non-empty string of at most ${MAX_STEP_ID_LENGTH} ` +
        `characters; got ${
          typeof event === "string" ? `${event.length} characters` : typeof event
        }.`,
    );
  }
  if (typeof key !== "string" || key === "" || key.length > MAX_EVENT_KEY_LENGTH) {
    throw new TypeError(
      `The key option of ${where} must be a non-empty string of at most ` +
        `${MAX_EVENT_KEY_LENGTH} characters; got ${
          typeof key === "string" ? `${key.length} characters` : typeof key
        }.`,
    );
  }
}

/**
 * Sends an event: keeps it for its window and wakes the tasks waiting on
 * its key.  What `federation.sendEvent()` does.
 * @param kv The store.
 * @param wake Puts a woken task's message into its queue.
 * @param event The event's name.
 * @param options The key, data and window.
 * @returns How many tasks were woken.
 * @throws {TypeError} When an argument or option is invalid.
 * @throws {TaskPayloadEncodingError} When the data cannot be encoded or is
 *         over {@link MAX_STEP_RECORD_BYTES}.
 * @since 0.4.0
 */
export async function sendStepEvent(
  kv: KvStore,
  wake: WakeTask,
  event: string,
  options: SendEventOptions,
): Promise<SendEventResult> {
  if (options == null || typeof options !== "object") {
    throw new TypeError("sendEvent() needs options with a key: sendEvent(event, { key, data }).");
  }
  assertKnownOptions(options, ["key", "data", "keepFor"], { where: "sendEvent()" });
  checkEventAddress("sendEvent()", event, options.key);
  let keepMs = DEFAULT_STEP_EVENT_WINDOW_MS;
  if (options.keepFor != null) {
    keepMs = durationToMilliseconds(options.keepFor, "keepFor");
    if (!(keepMs > 0 && keepMs <= MAX_STEP_EVENT_WINDOW_MS)) {
      throw new RangeError(
        `The keepFor option of sendEvent() must be more than 0 and at most 30 days; got ` +
          `${keepMs} ms.`,
      );
    }
  }
  const data = await encodeTaskPayload(options.data ?? null, { maxSize: MAX_STEP_RECORD_BYTES });
  return await publishStepEvent(kv, wake, event, options.key, data, keepMs);
}

/**
 * Keeps an encoded event and wakes its waiters.  Internal.
 * @param kv The store.
 * @param wake Puts a woken task's message into its queue.
 * @param event The event's name.
 * @param key The key.
 * @param data The encoded data.
 * @param keepMs The window, in milliseconds.
 * @returns How many tasks were woken.
 * @since 0.4.0
 */
export async function publishStepEvent(
  kv: KvStore,
  wake: WakeTask,
  event: string,
  key: string,
  data: string,
  keepMs: number,
): Promise<SendEventResult> {
  const stored: StoredStepEvent = { data, sentAt: Date.now() };
  // Kept before the waiters are read: a wait that registers after this
  // read looks for the event once registered, and finds it.
  await kv.set(eventKey(event, key), stored, { ttl: { milliseconds: keepMs } });
  const waiters = await kv.get<StepWaiter[]>(waitersKey(event, key));
  if (!Array.isArray(waiters) || waiters.length < 1) return { resumed: 0 };
  const now = Date.now();
  let resumed = 0;
  for (const waiter of waiters) {
    // A wait past its timeout has its own message on the way.
    if (waiter.until <= now) continue;
    try {
      await wake({
        ...waiter.message,
        steps: { gen: waiter.gen, woken: { step: waiter.step, data } },
      });
      resumed++;
    } catch (error) {
      logger.error(
        "Could not wake task {taskId}, which waits for the event {event}; it resumes at its " +
          "timeout, or when the event is sent again: {error}",
        { taskId: waiter.task, event, key, error },
      );
    }
  }
  await kv.delete(waitersKey(event, key));
  return { resumed };
}

/**
 * Reads a kept event.  Internal.
 * @param kv The store.
 * @param event The event's name.
 * @param key The key.
 * @returns The event, or `undefined`.
 * @since 0.4.0
 */
export async function getStepEvent(
  kv: KvStore,
  event: string,
  key: string,
): Promise<StoredStepEvent | undefined> {
  const stored = await kv.get<StoredStepEvent>(eventKey(event, key));
  return stored != null && typeof stored.data === "string" ? stored : undefined;
}

/**
 * Registers a task as waiting on an event key (replacing its earlier
 * registration), dropping registrations past their timeout.  Internal.
 * @param kv The store.
 * @param event The event's name.
 * @param key The key.
 * @param waiter The waiting task.
 * @throws {RangeError} When {@link MAX_WAITERS_PER_KEY} tasks wait on the key.
 * @since 0.4.0
 */
export async function registerStepWaiter(
  kv: KvStore,
  event: string,
  key: string,
  waiter: StepWaiter,
): Promise<void> {
  const storeKey = waitersKey(event, key);
  // With cas, concurrent registrations on one key do not overwrite each
  // other; a store without it gets a plain read-then-write.
  for (let round = 0; round < 16; round++) {
    const current = await kv.get<StepWaiter[]>(storeKey);
    const now = Date.now();
    const next = (Array.isArray(current) ? current : []).filter((other) =>
      other.until > now && other.task !== waiter.task
    );
    if (next.length >= MAX_WAITERS_PER_KEY) {
      throw new RangeError(
        `${MAX_WAITERS_PER_KEY} tasks already wait for the event ${JSON.stringify(event)} with ` +
          `the key ${JSON.stringify(key)}; use more specific keys.`,
      );
    }
    next.push(waiter);
    const latest = Math.max(...next.map((other) => other.until));
    const ttl = { milliseconds: Math.max(1000, latest - now + 60_000) };
    if (kv.cas == null) {
      await kv.set(storeKey, next, { ttl });
      return;
    }
    if (await kv.cas(storeKey, current, next, { ttl })) return;
  }
  throw new Error(`Could not register a wait for the event ${JSON.stringify(event)}: too busy.`);
}
