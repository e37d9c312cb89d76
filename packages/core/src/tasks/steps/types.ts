// The public shape of durable steps: what `ctx.step` offers a task handler
// and what `sendEvent()` takes.  Interfaces only; runner.ts implements them.
import type { Activity } from "@fedify/vocab";
import type { RetryPolicy } from "../../retry/retry-policy.ts";
import type { DurationInput } from "../../time/duration.ts";
import type { TaskDefinition } from "../definition.ts";

/**
 * Options of one {@link TaskSteps.run} step.
 * @since 0.4.0
 */
export interface StepRunOptions {
  /**
   * The step's own retry policy: when its function throws, the task waits
   * the policy's delay and runs again from its recorded steps, without
   * spending one of the task's attempts; when the policy gives up, the task
   * fails permanently.  Without it, a failed step fails the run, which the
   * task's retry policy retries.
   */
  readonly retry?: RetryPolicy;
}

/**
 * Options of {@link TaskSteps.waitForEvent}.
 * @since 0.4.0
 */
export interface WaitForEventOptions {
  /** The event's name, as `sendEvent()` is called with it (at most 200 characters). */
  readonly event: string;
  /** The key that tells which event is meant, e.g. an object's id (at most 500 characters). */
  readonly key: string;
  /**
   * How long to wait at most; the wait then resolves to `null`.  At most
   * {@link MAX_STEP_WAIT_MS} (365 days).
   */
  readonly timeout: DurationInput;
}

/**
 * An Activity Vocabulary activity class of `@fedify/vocab`, e.g. `Accept`,
 * as {@link WaitForActivityOptions.type} takes it.
 * @typeParam TActivity The activity.
 * @since 0.4.0
 */
export type ActivityType<TActivity extends Activity> = {
  // deno-lint-ignore no-explicit-any
  new (...args: any[]): TActivity;
  /** The type's IRI, e.g. `https://www.w3.org/ns/activitystreams#Accept`. */
  readonly typeId: URL;
};

/**
 * Something a {@link WaitForActivityOptions} matches by id: a URL, an
 * absolute URL string, or an object with an `id` (a vocabulary object).
 * @since 0.4.0
 */
export type ActivityMatchTarget = URL | string | { readonly id: URL | null };

/**
 * Options of {@link TaskSteps.waitForActivity}.  At least one of `object`
 * and `actor` is needed, so that a wait cannot be resolved by any
 * server's activity of the type.
 * @typeParam TActivity The activity waited for.
 * @since 0.4.0
 */
export interface WaitForActivityOptions<TActivity extends Activity> {
  /**
   * The activity's class, e.g. `Accept`.  An activity of a subclass
   * (`TentativeAccept` for `Accept`) matches too.
   */
  readonly type: ActivityType<TActivity>;
  /**
   * The activity's object, compared by id: e.g. the `Follow` this task sent,
   * for its `Accept`.  An activity with several objects matches no wait on
   * an object.
   */
  readonly object?: ActivityMatchTarget;
  /**
   * The activity's actor, compared with the actor whose signature the
   * inbox verified: give it whenever it is known, so that no one else can
   * resolve the wait.
   */
  readonly actor?: ActivityMatchTarget;
  /**
   * How long to wait at most; the wait then resolves to `null`.  At most
   * {@link MAX_STEP_WAIT_MS} (365 days).
   */
  readonly timeout: DurationInput;
}

/**
 * Options of `sendEvent()`.
 * @typeParam TData The event's data.
 * @since 0.4.0
 */
export interface SendEventOptions<TData = unknown> {
  /** The key waits listen on (at most 500 characters). */
  readonly key: string;
  /**
   * The event's data, through the task codec (vocabulary objects, `Date`,
   * `Map` survive), at most {@link MAX_STEP_RECORD_BYTES} encoded.  `null`
   * by default.
   */
  readonly data?: TData;
  /**
   * How long the event is kept for waits that start after it was sent
   * (the window in which an early event is not lost).
   * @default {@link DEFAULT_STEP_EVENT_WINDOW_MS} (1 hour); at most 30 days.
   */
  readonly keepFor?: DurationInput;
}

/**
 * What `sendEvent()` did.
 * @since 0.4.0
 */
export interface SendEventResult {
  /** How many waiting tasks were woken up. */
  readonly resumed: number;
}

/**
 * Durable steps, as `ctx.step` in a task handler.  A handler made of
 * steps runs again from the start after every retry, crash, sleep or wait;
 * each step that was recorded returns its recorded result without running
 * again.  Steps are told apart by their ids, which must be unique within a
 * run and must come in the same order on every run.  Do not catch the
 * errors steps throw to end a run (a sleep, a wait): let them out of the
 * handler.
 * @since 0.4.0
 */
export interface TaskSteps {
  /**
   * Runs `fn` once: its result is recorded (through the task codec, at
   * most {@link MAX_STEP_RECORD_BYTES} encoded) before this resolves, and a
   * later run of the task returns the recorded result without calling
   * `fn`.
   * @param id The step's id, unique within the run (at most 200 characters).
   * @param fn What the step does.
   * @param options The step's own retry policy.
   * @returns What `fn` returned (on a later run, a decoded copy of it).
   * @throws {TaskStepError} When the id is a duplicate, the recorded steps
   *         do not match the code, or the result cannot be recorded.
   * @throws {unknown} What `fn` threw, when the step has no retry policy.
   * @example
   * ```ts ignore
   * const actor = await ctx.step.run("look-up", () => ctx.lookupObject(handle));
   * ```
   */
  run<T>(id: string, fn: () => T | Promise<T>, options?: StepRunOptions): Promise<Awaited<T>>;

  /**
   * Sleeps durably: the run ends, its worker takes other messages, and
   * the task runs again after `duration` (days are fine), from its
   * recorded steps.  No attempt is spent.
   * @param id The step's id.
   * @param duration How long, at most {@link MAX_STEP_WAIT_MS} (365 days).
   * @returns Resolves on the run after the sleep.
   * @throws {TaskStepError} When the id is a duplicate or out of order.
   * @throws {RangeError} When the duration is negative or too long.
   */
  sleep(id: string, duration: DurationInput): Promise<void>;

  /**
   * Waits durably for an event sent with `sendEvent(event, { key })` from
   * any process sharing the key–value store and queues; an event sent up
   * to its `keepFor` window before the wait started counts too.
   * @param id The step's id.
   * @param options The event's name and key and the timeout.
   * @returns The event's data, or `null` when the timeout passed first.
   * @throws {TaskStepError} When the id is a duplicate or out of order.
   */
  waitForEvent<T = unknown>(id: string, options: WaitForEventOptions): Promise<T | null>;

  /**
   * Waits durably for an activity to arrive in one of the federation's
   * inboxes, e.g. the `Accept` of a `Follow` this task sent, without an
   * inbox listener: the inbox sends each activity whose signature it
   * verified to the waits it matches (its type, its object by id, its
   * actor, which must be the signer).  An activity that arrived up to an
   * hour ({@link DEFAULT_STEP_EVENT_WINDOW_MS}) before the wait started
   * counts too.  Activities the inbox did not verify (with
   * `skipSignatureVerification`) resolve no wait.
   * @param id The step's id.
   * @param options The activity's type, object and actor, and the timeout.
   * @returns The activity (on a later run, a copy rebuilt from its record),
   *          or `null` when the timeout passed first.
   * @throws {TaskStepError} When the id is a duplicate or out of order.
   * @throws {TypeError} When the type is not an activity class, or neither
   *         an object nor an actor is given.
   * @example
   * ```ts ignore
   * const follow = await ctx.step.run("follow", () => sendFollow(ctx, followee));
   * const accept = await ctx.step.waitForActivity("accepted", {
   *   type: Accept,
   *   object: follow,
   *   actor: followee,
   *   timeout: { days: 7 },
   * });
   * ```
   */
  waitForActivity<TActivity extends Activity>(
    id: string,
    options: WaitForActivityOptions<TActivity>,
  ): Promise<TActivity | null>;

  /**
   * Enqueues a child task and waits durably for its result.
   * @param id The step's id.
   * @param task The child task.
   * @param data The child's payload.
   * @returns The child's result.
   * @throws {TaskStepInvokeError} When the child failed, was dropped or
   *         was cancelled.
   */
  invoke<TInput, TResult>(
    id: string,
    // deno-lint-ignore no-explicit-any
    task: TaskDefinition<any, unknown, TInput, TResult>,
    data: NoInfer<TInput>,
  ): Promise<TResult>;
}

/**
 * The durable steps of a task, as its status record shows them
 * (`TaskStatus.steps`).
 * @since 0.4.0
 */
export interface TaskStepsStatus {
  /** The step that runs, sleeps or waits now; absent between steps and once done. */
  readonly current?: {
    /** The step's id. */
    readonly id: string;
    /** What kind of step it is. */
    readonly kind: "run" | "sleep" | "wait" | "activity" | "invoke";
    /** What it does: runs its function, sleeps, or waits (for an event, an activity or a child). */
    readonly phase: "running" | "sleeping" | "waiting";
  };
  /**
   * The ids of the recorded (finished) steps, in order: the last 50 of
   * them (`MAX_STATUS_STEP_IDS`).
   */
  readonly recorded: readonly string[];
  /** How many steps are recorded in all. */
  readonly recordedCount: number;
}
