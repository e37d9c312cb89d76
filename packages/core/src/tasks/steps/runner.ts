// One run's durable steps: replays the recorded ones, runs and records the
// new ones, and ends the run (a RunPostponedError the dispatcher stores as
// a wait) for sleeps and waits.  The handler makes one per run of a task
// and the task context hands it out as `ctx.step`.
import type { Activity } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { MalformedMessageError, PermanentError } from "../../processing/errors.ts";
import { RunPostponedError } from "../../processing/run-postponed.ts";
import type { RetryPolicy } from "../../retry/retry-policy.ts";
import { durationToMilliseconds, millisecondsToDuration } from "../../time/duration.ts";
import type { DurationInput } from "../../time/duration.ts";
import { decodeTaskPayload, encodeTaskPayload } from "../codec/mod.ts";
import type { TaskDefinition } from "../definition.ts";
import type { TaskMessage } from "../message.ts";
import { ACTIVITY_EVENT, activityTypeIdOf, activityWaitKey } from "./activities.ts";
import { TaskStepError, TaskStepInvokeError } from "./errors.ts";
import {
  checkEventAddress,
  CHILD_ENDED_EVENT,
  getStepEvent,
  registerStepWaiter,
} from "./events.ts";
import {
  INVOKE_RECHECK_MS,
  MAX_STEP_ID_LENGTH,
  MAX_STEP_RECORD_BYTES,
  MAX_STEP_WAIT_MS,
  MAX_TASK_STEPS,
} from "./limits.ts";
import {
  loadStepState,
  type StepKind,
  type StepRecord,
  type StepState,
  stepStateKey,
} from "./state.ts";
import type {
  StepRunOptions,
  TaskSteps,
  WaitForActivityOptions,
  WaitForEventOptions,
} from "./types.ts";
import type { ChildEnding, StepNotice, StepRunnerHost } from "./host.ts";
import { tracedStep } from "./step-span.ts";
import { deriveChildId, waitMilliseconds } from "./step-values.ts";

const logger = getLogger(["fedwork", "task", "steps"]);

/** How often a run's steps that start rewrite the status record, at most. */
const NOTICE_INTERVAL_MS = 1000;

/**
 * The durable steps of one run of one task.  Internal.
 * @since 0.4.0
 */
export class StepRunner implements TaskSteps {
  readonly #host: StepRunnerHost;
  readonly #message: TaskMessage;
  #state: Promise<StepState> | undefined;
  #index = 0;
  readonly #seen = new Set<string>();
  #saving: Promise<void> = Promise.resolve();
  #noticeWrittenAt = Number.NEGATIVE_INFINITY;
  /** Whether this run read or wrote step records (they are cleaned up after). */
  used = false;
  /**
   * The sleep or wait that ended this run, if one did: the run ends with it
   * even when the handler caught it.
   */
  suspension: RunPostponedError | undefined;

  /**
   * @param host The store and hooks.
   * @param message The run's message.
   */
  constructor(host: StepRunnerHost, message: TaskMessage) {
    this.#host = host;
    this.#message = message;
  }

  /**
   * Checks a continuing message against the records before the handler
   * runs: one of an older generation (superseded by a wake-up), or of a
   * task whose records are gone (it ended), is dropped as stale.
   * @throws {MalformedMessageError} When the message is stale.
   */
  async prepare(): Promise<void> {
    const gen = this.#message.steps?.gen;
    if (typeof gen !== "number") return;
    const state = await this.#load();
    if (state.gen > gen || state.stale.includes(gen) || (state.steps.length < 1 && gen > 0)) {
      throw new MalformedMessageError(
        `another copy of the message continues its steps (generation ${gen}; the newest ` +
          `that ran is ${state.gen})`,
        { level: "info", stale: true },
      );
    }
    if (state.gen < gen) {
      state.gen = gen;
      await this.#save(state, 0);
    }
  }

  #load(): Promise<StepState> {
    this.used = true;
    return this.#state ??= loadStepState(this.#host.kv, this.#message.id).then(({ state }) =>
      state
    );
  }

  /**
   * Writes the records (after any write under way), kept for the retention
   * past `extraMs` and past the end of any sleep or wait still pending:
   * records must outlive the wait they are for.
   */
  #save(state: StepState, extraMs: number): Promise<void> {
    const now = Date.now();
    let pendingMs = extraMs;
    for (const step of state.steps) {
      if (step != null && !step.done && step.until != null) {
        pendingMs = Math.max(pendingMs, step.until - now);
      }
    }
    const write = () =>
      this.#host.kv.set(stepStateKey(this.#message.id), state, {
        ttl: { milliseconds: this.#host.retentionMs + pendingMs },
      });
    return this.#saving = this.#saving.then(write, write);
  }

  /** Claims the next position for a step, synchronously (steps may run side by side). */
  #claim(id: unknown): number {
    if (typeof id !== "string" || id === "" || id.length > MAX_STEP_ID_LENGTH) {
      throw this.#error(
        String(id),
        "invalid",
        `A step id must be a non-empty string of at most ${MAX_STEP_ID_LENGTH} characters.`,
      );
    }
    if (this.#seen.has(id)) {
      throw this.#error(
        id,
        "duplicate",
        `The step id ${JSON.stringify(id)} is used twice in one run of the task ` +
          `${JSON.stringify(this.#message.taskName)}; give each step its own id.`,
      );
    }
    if (this.#index >= MAX_TASK_STEPS) {
      throw this.#error(
        id,
        "too-many",
        `The task ${JSON.stringify(this.#message.taskName)} has more than ${MAX_TASK_STEPS} ` +
          "steps; split it into child tasks (ctx.step.invoke()).",
      );
    }
    this.#seen.add(id);
    return this.#index++;
  }

  /** The record at a position, checked against the code's step there. */
  async #recorded(index: number, id: string, kind: StepKind): Promise<StepRecord | undefined> {
    const state = await this.#load();
    const record = state.steps[index];
    if (record == null) return undefined;
    if (record.id !== id || record.kind !== kind) {
      throw this.#error(
        id,
        "mismatch",
        `The recorded steps of the task ${JSON.stringify(this.#message.taskName)} ` +
          `(${this.#message.id}) do not match its code: step ${index + 1} was recorded as ` +
          `${record.kind} ${JSON.stringify(record.id)}, but the code now runs ${kind} ` +
          `${JSON.stringify(id)} there (renamed or reordered after a deploy?).  Finish or ` +
          "cancel the tasks that started before the change, or keep the old steps in order.",
      );
    }
    return record;
  }

  #error(id: string, problem: TaskStepError["problem"], message: string, cause?: unknown) {
    return new TaskStepError(
      this.#message.taskName,
      id,
      problem,
      message,
      cause === undefined ? undefined : { cause },
    );
  }

  async #encode(id: string, value: unknown): Promise<string | undefined> {
    if (value === undefined) return undefined;
    try {
      return await encodeTaskPayload(value, { maxSize: MAX_STEP_RECORD_BYTES });
    } catch (error) {
      throw this.#error(
        id,
        "unrecordable",
        `The result of the step ${JSON.stringify(id)} of the task ` +
          `${JSON.stringify(this.#message.taskName)} cannot be recorded: ${
            error instanceof Error ? error.message : String(error)
          }  Return a smaller value (at most ${MAX_STEP_RECORD_BYTES} bytes encoded) or a ` +
          "reference to where the data is kept.",
        error,
      );
    }
  }

  #decode(text: string | undefined): Promise<unknown> {
    if (text == null) return Promise.resolve(undefined);
    return decodeTaskPayload(text, {
      documentLoader: this.#host.documentLoader,
      contextLoader: this.#host.contextLoader,
      maxSize: MAX_STEP_RECORD_BYTES,
    });
  }

  /**
   * Tells the host where the steps are.  Not awaited by the steps: the
   * status record is written in the background, in order, so that a
   * step costs one write of its record and nothing more.
   */
  #notice(id: string, kind: StepKind, phase: StepNotice["phase"]): void {
    if (this.#host.notice == null || this.#state == null) return;
    const now = Date.now();
    const write = phase === "suspended" ||
      (phase === "started" && now - this.#noticeWrittenAt >= NOTICE_INTERVAL_MS);
    if (write) this.#noticeWrittenAt = now;
    const notify = (state: StepState) => {
      const recorded: string[] = [];
      for (const step of state.steps) if (step?.done) recorded.push(step.id);
      return this.#host.notice!(this.#message, { id, kind, phase, recorded, write });
    };
    this.#state.then(notify).catch((error) => {
      logger.warn("Could not report the step {stepId} of task {taskId}: {error}", {
        stepId: id,
        taskId: this.#message.id,
        error,
      });
    });
  }

  /**
   * Ends the run: the task runs again from its records after `delayMs`,
   * its continuation with a new generation (or `gen`, a wait's own), which
   * is recorded before the run ends.
   */
  async #suspend(
    reason: string,
    delayMs: number,
    state: StepState,
    gen = ++state.seq,
  ): Promise<RunPostponedError> {
    await this.#save(state, delayMs);
    return this.suspension ??= new RunPostponedError(reason, delayMs, {
      messageFields: { steps: { gen } },
      waitFor: "step",
      // A step's sleep or wait is the task's own: it must not use up the
      // waits a host's Retry-After may cause.
      counted: false,
    });
  }

  #traced<T>(id: string, kind: StepKind, body: () => Promise<T>): Promise<T> {
    return tracedStep(this.#host.tracer, id, kind, this.#message, body);
  }

  async run<T>(
    id: string,
    fn: () => T | Promise<T>,
    options?: StepRunOptions,
  ): Promise<Awaited<T>> {
    const index = this.#claim(id);
    if (typeof fn !== "function") {
      throw this.#error(id, "invalid", `The step ${JSON.stringify(id)} needs a function to run.`);
    }
    const record = await this.#recorded(index, id, "run");
    if (record?.done) return await this.#decode(record.value) as Awaited<T>;
    return await this.#traced(id, "run", async () => {
      const state = await this.#load();
      this.#notice(id, "run", "started");
      let value: Awaited<T>;
      try {
        value = await fn();
      } catch (error) {
        const retry: RetryPolicy | undefined = options?.retry;
        if (retry == null) throw error;
        const failures = (record?.failures ?? 0) + 1;
        const delay = retry({
          elapsedTime: millisecondsToDuration(Math.max(0, Date.now() - (record?.at ?? Date.now()))),
          attempts: failures,
        });
        if (delay == null) {
          throw new PermanentError(
            `The step ${JSON.stringify(id)} of the task ${
              JSON.stringify(this.#message.taskName)
            } failed ${failures} times; its retry policy gave up: ${
              error instanceof Error ? error.message : String(error)
            }`,
            { cause: error },
          );
        }
        state.steps[index] = {
          id,
          kind: "run",
          done: false,
          failures,
          at: record?.at ?? Date.now(),
        };
        const delayMs = durationToMilliseconds(delay, "delay");
        throw await this.#suspend(`the step ${JSON.stringify(id)} retries`, delayMs, state);
      }
      const text = await this.#encode(id, value);
      state.steps[index] = {
        id,
        kind: "run",
        done: true,
        ...(text == null ? {} : { value: text }),
        at: Date.now(),
      };
      await this.#save(state, 0);
      this.#notice(id, "run", "recorded");
      return value;
    });
  }

  async sleep(id: string, duration: DurationInput): Promise<void> {
    const index = this.#claim(id);
    const ms = waitMilliseconds(duration, "sleep()");
    const record = await this.#recorded(index, id, "sleep");
    if (record?.done) return;
    return await this.#traced(id, "sleep", async () => {
      const state = await this.#load();
      const now = Date.now();
      if (record == null) {
        state.steps[index] = { id, kind: "sleep", done: false, until: now + ms, at: now };
        const suspension = await this.#suspend(`the step ${JSON.stringify(id)} sleeps`, ms, state);
        this.#notice(id, "sleep", "suspended");
        throw suspension;
      }
      if (now < record.until!) {
        throw await this.#suspend(
          `the step ${JSON.stringify(id)} sleeps`,
          record.until! - now,
          state,
        );
      }
      record.done = true;
      await this.#save(state, 0);
      this.#notice(id, "sleep", "recorded");
    });
  }

  async waitForEvent<T = unknown>(id: string, options: WaitForEventOptions): Promise<T | null> {
    const index = this.#claim(id);
    if (options == null || typeof options !== "object") {
      throw new TypeError("waitForEvent() needs options: { event, key, timeout }.");
    }
    checkEventAddress("waitForEvent()", options.event, options.key);
    const ms = waitMilliseconds(options.timeout, "waitForEvent()");
    const value = await this.#wait(index, id, "wait", options.event, options.key, ms);
    return (value === undefined ? null : value) as T | null;
  }

  async waitForActivity<TActivity extends Activity>(
    id: string,
    options: WaitForActivityOptions<TActivity>,
  ): Promise<TActivity | null> {
    const index = this.#claim(id);
    if (options == null || typeof options !== "object") {
      throw new TypeError("waitForActivity() needs options: { type, object?, actor?, timeout }.");
    }
    const key = await activityWaitKey(options);
    const ms = waitMilliseconds(options.timeout, "waitForActivity()");
    // Before the wait registers: the inboxes keep activities of its type
    // from then on (see activity-waits.ts).
    await this.#host.registerActivityWait?.(activityTypeIdOf(options.type)!, Date.now() + ms);
    const value = await this.#wait(index, id, "activity", ACTIVITY_EVENT, key, ms);
    return (value === undefined ? null : value) as TActivity | null;
  }

  /**
   * A durable wait on an event key: resolves to the event's decoded data
   * (`undefined` when the timeout passed), or ends the run until the event
   * or the timeout.
   */
  async #wait(
    index: number,
    id: string,
    kind: "wait" | "activity" | "invoke",
    event: string,
    key: string,
    ms: number,
    child?: {
      readonly id: string;
      readonly start: (
        record: StepRecord,
        save: () => Promise<void>,
      ) => Promise<string | undefined>;
    },
  ): Promise<unknown> {
    let record = await this.#recorded(index, id, kind);
    if (record?.done) return await this.#decode(record.value);
    return await this.#traced(id, kind, async () => {
      const state = await this.#load();
      const now = Date.now();
      if (record == null) {
        record = {
          id,
          kind,
          done: false,
          until: now + ms,
          // Two copies may continue the task: one due at the timeout, and
          // one a wake-up sends.  Whichever records the outcome first makes
          // the other stale.
          delayed: ++state.seq,
          wake: ++state.seq,
          ...(child == null ? {} : { child: child.id }),
          at: now,
        };
        state.steps[index] = record;
        await this.#save(state, ms);
      }
      const woken = this.#message.steps?.woken;
      const resolve = async (data: string | undefined) => {
        record!.done = true;
        if (data != null) record!.value = data;
        // The woken copy, unless it is this run, is stale from now on; the
        // copy due at the timeout is older than the woken one, or this run.
        if ((this.#message.steps?.gen ?? 0) !== record!.wake) {
          state.stale = [...state.stale.slice(-15), record!.wake!];
        }
        await this.#save(state, 0);
        this.#notice(id, kind, "recorded");
        return await this.#decode(data);
      };
      if (child != null) {
        const ended = await child.start(record, () => this.#save(state, 0));
        if (ended != null) return await resolve(ended);
      }
      if (woken?.step === id) return await resolve(woken.data);
      const sent = await getStepEvent(this.#host.kv, event, key);
      if (sent != null) return await resolve(sent.data);
      if (now >= record.until!) return await resolve(undefined);
      await registerStepWaiter(this.#host.kv, event, key, {
        task: this.#message.id,
        step: id,
        gen: record.wake!,
        until: record.until!,
        message: this.#message,
      });
      // Sent after the first look, before the registration: the sender did
      // not see this waiter, so look once more.
      const late = await getStepEvent(this.#host.kv, event, key);
      if (late != null) return await resolve(late.data);
      const delayMs = Math.min(
        record.until! - now,
        kind === "invoke" ? INVOKE_RECHECK_MS : Infinity,
      );
      const suspension = await this.#suspend(
        `the step ${JSON.stringify(id)} waits for ${event}`,
        delayMs,
        state,
        record.delayed!,
      );
      this.#notice(id, kind, "suspended");
      throw suspension;
    });
  }

  async invoke<TInput, TResult>(
    id: string,
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, TInput, TResult>,
    data: NoInfer<TInput>,
  ): Promise<TResult> {
    const index = this.#claim(id);
    const childId = await deriveChildId(this.#message.id, id);
    const start = async (record: StepRecord, save: () => Promise<void>) => {
      const ended = await this.#host.childEnding(childId);
      if (ended !== undefined && ended !== "pending") return await encodeTaskPayload(ended);
      // Enqueued again after a crash only if it never reached its queue: a
      // child with a status record, or one recorded as enqueued, did.
      if (ended === undefined && !record.enqueued) {
        await this.#host.enqueueChild(
          task as TaskDefinition<unknown, unknown, unknown, unknown>,
          data,
          childId,
          this.#message,
        );
        record.enqueued = true;
        await save();
      }
      return undefined;
    };
    const ending = await this.#wait(
      index,
      id,
      "invoke",
      CHILD_ENDED_EVENT,
      childId,
      MAX_STEP_WAIT_MS,
      {
        id: childId,
        start,
      },
    ) as ChildEnding | undefined;
    if (ending == null) {
      throw new TaskStepInvokeError(id, childId, "failed", "it did not end within 365 days");
    }
    if (ending.state !== "completed") {
      throw new TaskStepInvokeError(id, childId, ending.state, ending.reason);
    }
    return ending.result as TResult;
  }
}
