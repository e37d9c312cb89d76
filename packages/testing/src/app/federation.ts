// The test federation: a real Fedwork federation on the kit's clock, store
// and queue, seen through a proxy that adds Fedify's mock members and hands
// every callback of the application a context whose sendActivity()
// records instead of delivering.  Routing, URI building, dispatchers, inbox
// listeners, tasks, their validation, codec, retries and status records are
// the federation's own, so a test exercises what production runs.
import { Activity, type DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import {
  type Context,
  createFederation as createRealFederation,
  type Federation,
  type MessageEvent,
  type MessageEventType,
  RetryNotStoredError,
  RouteNotRegisteredError,
} from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import { TestClock } from "./clock.ts";
import { TestKvStore } from "./kv-store.ts";
import { TestMessageQueue } from "./message-queue.ts";
import { ContextRecorder } from "./context.ts";
import { postOutboxActivity } from "./outbox-post.ts";
import type {
  MockFederation,
  MockFederationOptions,
  PostOutboxActivityOptions,
  ReceiveActivityOptions,
  RunPendingTasksOptions,
  SentActivity,
  TaskRun,
} from "./types.ts";

const EVENT_TYPES: readonly MessageEventType[] = [
  "completed",
  "unhandled",
  "retrying",
  "failed",
  "dropped",
  "cancelled",
];
const DEFAULT_MAX_RUNS = 1000;
const CLOCK_SEAM = Symbol.for("fedwork.testing.clock");

/** What core's clock seam hands back: its recurring schedules. */
interface ScheduleDriver {
  runSchedulesAt(now: number): Promise<number | undefined>;
}
const OPTION_NAMES = ["contextData", "origin", "documentLoader", "now", "federation"];

/** Which proxies are test federations, and their state. */
const states = new WeakMap<object, TestFederationState<unknown>>();

/**
 * Finds the state of a test federation.  Internal.
 * @param federation A value that may be a test federation.
 * @returns Its state, or `undefined`.
 */
export function testFederationStateOf<TContextData>(
  federation: unknown,
): TestFederationState<TContextData> | undefined {
  if (typeof federation !== "object" || federation == null) return undefined;
  return states.get(federation) as TestFederationState<TContextData> | undefined;
}

/**
 * Makes a test federation: Fedify's `createFederation()` from
 * `@fedify/testing`, on a real Fedwork federation.
 * @typeParam TContextData The application data.
 * @param options The context data, origin, document loader, clock start
 *                and further federation options.
 * @returns The federation.
 * @throws {UnknownOptionError} When an option is unknown (it suggests the
 *         nearest name).
 * @throws {TypeError} When an option is of the wrong type.
 * @example
 * ```ts ignore
 * import { createFederation } from "@fedwork/testing/app";
 * import { Follow } from "@fedify/vocab";
 *
 * const federation = createFederation<void>();
 * federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
 *   .on(Follow, async (ctx, follow) => { ... });
 * await federation.receiveActivity(follow);
 * console.log(federation.sentActivities);
 * ```
 * @since 0.4.0
 */
export function createFederation<TContextData>(
  options: MockFederationOptions<TContextData> = {},
): MockFederation<TContextData> {
  return new TestFederationState<TContextData>(options).proxy;
}

/**
 * The state behind one test federation.  Internal.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export class TestFederationState<TContextData> {
  readonly clock: TestClock;
  readonly queue: TestMessageQueue;
  readonly real: Federation<TContextData>;
  readonly proxy: MockFederation<TContextData>;
  readonly origin: URL;
  readonly recorder: ContextRecorder<TContextData>;
  sentActivities: SentActivity[] = [];
  sentCounter = 0;
  queueStarted = false;
  contextData: TContextData | undefined;
  readonly #documentLoader: DocumentLoader;
  #events: MessageEvent[] = [];
  #callbackErrors: unknown[] | undefined;
  #schedules: ScheduleDriver | undefined;
  #nextScheduleAt: number | undefined;

  constructor(options: MockFederationOptions<TContextData>) {
    checkOptions(options);
    this.clock = new TestClock(options.now);
    this.queue = new TestMessageQueue(this.clock);
    this.origin = new URL(options.origin ?? "https://example.com");
    this.contextData = options.contextData;
    this.#documentLoader = withPreloadedContexts(options.documentLoader ?? refuseToLoad);
    // Core's clock seam (no public option): what it stores as "now"
    // (debounce bursts, throttle periods, enqueue times) reads this clock.
    // It also hands back how to run recurring schedules as the clock moves.
    const now = Object.assign(() => this.clock.now(), {
      attach: (driver: ScheduleDriver) => void (this.#schedules = driver),
    });
    const clockSeam = { [CLOCK_SEAM]: now };
    this.real = createRealFederation<TContextData>({
      ...options.federation,
      kv: new TestKvStore(this.clock),
      queue: this.queue,
      manuallyStartQueue: true,
      documentLoader: this.#documentLoader,
      ...clockSeam,
    });
    for (const type of EVENT_TYPES) {
      this.real.on(type, (event: MessageEvent) => void this.#events.push(event));
    }
    this.clock.addTimeline({
      nextDueAt: () => this.queue.nextDueAt(),
      runDue: () => this.runPendingTasks(),
    });
    // Recurring schedules: a tick due on the clock enqueues its task, which
    // runs at once, at the tick's time.
    this.clock.addTimeline({
      nextDueAt: () => this.#nextScheduleAt,
      runDue: async () => {
        const due = this.#nextScheduleAt;
        if (due == null || due > this.clock.now()) return [];
        await this.refreshSchedules();
        return await this.runPendingTasks();
      },
    });
    this.recorder = new ContextRecorder<TContextData>(this);
    this.proxy = this.recorder.wrapFederation(this.real, {
      sentActivities: () => this.sentActivities,
      queueStarted: () => this.queueStarted,
      sentCounter: () => this.sentCounter,
      clock: () => this.clock,
      pendingMessages: () => this.queue.pending(),
      receiveActivity: () => this.receiveActivity.bind(this),
      postOutboxActivity: () => this.postOutboxActivity.bind(this),
      runPendingTasks: () => this.runPendingTasks.bind(this),
      reset: () => () => void (this.sentActivities = []),
      startQueue: () => this.startQueue.bind(this),
      scheduleTask: () => (...args: Parameters<Federation<TContextData>["scheduleTask"]>) =>
        this.#afterSchedulesChange(this.real.scheduleTask(...args)),
      unscheduleTask: () => (id: string) =>
        this.#afterSchedulesChange(this.real.unscheduleTask(id)),
    });
    states.set(this.proxy, this as TestFederationState<unknown>);
  }

  // Fedify's mock resolves at once: the kit runs messages when the test
  // says so, with the data given here.
  startQueue(contextData: TContextData, _options?: unknown): Promise<void> {
    this.contextData = contextData;
    this.queueStarted = true;
    return Promise.resolve();
  }

  // Enqueues the ticks due now and notes when the next one is.
  async refreshSchedules(): Promise<void> {
    this.#nextScheduleAt = await this.#schedules?.runSchedulesAt(this.clock.now());
  }

  async #afterSchedulesChange<T>(change: Promise<T>): Promise<T> {
    const result = await change;
    await this.refreshSchedules();
    return result;
  }

  callbackFailed(error: unknown): void {
    this.#callbackErrors?.push(error);
  }

  captureCallbackErrors(): () => unknown[] {
    const errors: unknown[] = [];
    this.#callbackErrors = errors;
    return () => {
      if (this.#callbackErrors === errors) this.#callbackErrors = undefined;
      return errors;
    };
  }

  postOutboxActivity(
    identifier: string,
    activity: Activity,
    options?: PostOutboxActivityOptions,
  ): Promise<void> {
    return postOutboxActivity(this, identifier, activity, options);
  }

  async receiveActivity(activity: Activity, options: ReceiveActivityOptions = {}): Promise<void> {
    if (!(activity instanceof Activity)) {
      throw new TypeError(
        "receiveActivity() takes an Activity from @fedify/vocab (e.g. a Create).",
      );
    }
    const actor = activity.actorIds.length === 1 ? activity.actorIds[0] : null;
    if (actor == null) {
      throw new TypeError(
        "receiveActivity() needs an activity with exactly one actor, as an inbox does.",
      );
    }
    if (activity.id == null) {
      activity = activity.clone({
        id: new URL(`/#${activity.constructor.name}/${crypto.randomUUID()}`, actor),
      });
    }
    const id = activity.id!;
    if (id.origin !== actor.origin) {
      throw new TypeError(
        `receiveActivity(): the activity's id ${id.href} is not on its actor's origin ` +
          `${actor.origin}; an inbox refuses that too.`,
      );
    }
    const document = await activity.toJsonLd();
    const fallback = this.#documentLoader;
    // The activity "is served" by its id's origin: that is how an activity
    // that came without a signed request is verified.
    const documentLoader: DocumentLoader = (url, loaderOptions) =>
      url === id.href
        ? Promise.resolve({ contextUrl: null, document, documentUrl: id.href })
        : fallback(url, loaderOptions);
    const ctx = this.real.createContext(this.origin, this.contextData as TContextData);
    const recipient = options.recipient ?? inboxFor(ctx, activity);
    const routed = await ctx.routeActivity(recipient, activity, {
      immediate: true,
      documentLoader,
    });
    if (!routed) {
      throw new Error(
        `receiveActivity(): the inbox dropped ${id.href}; the federation's log ` +
          `(["fedwork", "activitypub", "inbox"]) says why.`,
      );
    }
  }

  async runPendingTasks(options: RunPendingTasksOptions = {}): Promise<TaskRun[]> {
    const maxRuns = options.maxRuns ?? DEFAULT_MAX_RUNS;
    if (!Number.isInteger(maxRuns) || maxRuns < 1) {
      throw new RangeError(`The maxRuns option of runPendingTasks() must be a positive integer.`);
    }
    const runs: TaskRun[] = [];
    for (let count = 0;; count++) {
      const dueAt = this.queue.nextDueAt();
      if (dueAt == null || dueAt > this.clock.now()) break;
      if (count >= maxRuns) {
        throw new Error(
          `runPendingTasks() ran ${maxRuns} messages and more are due (a task that enqueues ` +
            "itself without a delay?); raise the maxRuns option if that is expected.",
        );
      }
      const message = this.queue.takeDue();
      if (message == null) break;
      runs.push(...await this.#run(message));
    }
    return runs;
  }

  async #run(message: Record<string, unknown>): Promise<TaskRun[]> {
    this.#events = [];
    try {
      await this.real.processQueuedMessage(this.contextData as TContextData, message);
    } catch (error) {
      // As a worker does: keep the message when its retry was not stored.
      if (error instanceof RetryNotStoredError) await this.queue.enqueue(message);
      throw error;
    }
    const events = this.#events;
    this.#events = [];
    return events.map((event) => ({
      messageId: event.messageId,
      kind: event.kind,
      ...(event.taskName == null ? {} : { taskName: event.taskName }),
      attempt: event.attempt,
      outcome: event.type,
      event,
    }));
  }
}

// The JSON-LD contexts of the vocabulary come from @fedify/vocab-runtime's
// copies, so that no test needs the network to read an activity.
function withPreloadedContexts(loader: DocumentLoader): DocumentLoader {
  return (url, options) =>
    Object.hasOwn(preloadedContexts, url)
      ? Promise.resolve({ contextUrl: null, document: preloadedContexts[url], documentUrl: url })
      : loader(url, options);
}

// Without a recipient an activity arrives at the shared inbox; an app that
// registered none (Fedify's mock runs its listeners anyway) gets it in the
// personal inbox of the local actor it is addressed to, or that sent it, as
// the actor dispatcher's route parses it or, without one, as the last
// segment of its URI.
function inboxFor<TContextData>(ctx: Context<TContextData>, activity: Activity): string | null {
  try {
    ctx.getInboxUri();
    return null;
  } catch (error) {
    if (!(error instanceof RouteNotRegisteredError)) throw error;
  }
  const candidates = [
    ...activity.toIds,
    ...activity.ccIds,
    ...activity.btoIds,
    ...activity.bccIds,
    ...(activity.objectId == null ? [] : [activity.objectId]),
    ...activity.actorIds,
  ];
  for (const uri of candidates) {
    const parsed = ctx.parseUri(uri);
    if (parsed?.type === "actor") return parsed.identifier;
  }
  // No actor dispatcher to parse with: the last segment of a local URI, the
  // identifier in the usual `/users/{identifier}` shape.
  for (const uri of candidates) {
    const segment = uri.pathname.split("/").at(-1);
    if (uri.origin === ctx.origin && segment) return decodeURIComponent(segment);
  }
  throw new TypeError(
    "receiveActivity(): no shared inbox is registered and the activity is addressed to no " +
      "local actor; give the recipient option, or a shared inbox path to setInboxListeners().",
  );
}

function refuseToLoad(url: string): Promise<never> {
  return Promise.reject(
    new Error(
      `The test federation loads no documents, and ${url} was asked for; give ` +
        "createFederation() a documentLoader that serves your test's documents.",
    ),
  );
}

function checkOptions(options: unknown): void {
  if (typeof options !== "object" || options == null) {
    throw new TypeError("The options of createFederation() must be an object.");
  }
  assertKnownOptions(options, OPTION_NAMES, { where: "createFederation()" });
  const { origin, documentLoader, federation } = options as MockFederationOptions<unknown>;
  for (const name of ["kv", "queue", "manuallyStartQueue", "documentLoader"]) {
    if (federation != null && Object.hasOwn(federation, name)) {
      throw new TypeError(
        `The federation.${name} option of createFederation() is the kit's own` +
          (name === "documentLoader" ? "; give documentLoader at the top level." : "."),
      );
    }
  }
  if (origin != null && URL.parse(origin) == null) {
    throw new TypeError(`The origin option of createFederation() must be a URL: ${origin}.`);
  }
  if (documentLoader != null && typeof documentLoader !== "function") {
    throw new TypeError("The documentLoader option of createFederation() must be a function.");
  }
}
