// The kit's public types: what a test sees of the federation and contexts it
// makes, and of what ran.
import type { Activity, DocumentLoader, Recipient } from "@fedify/vocab";
import type {
  Context,
  Federation,
  FederationOptions,
  MessageEvent,
  RequestContext,
  SenderIdentity,
} from "@fedwork/core";
import type { TestClock } from "./clock.ts";
import type { MockInboxListenerSetters, MockOutboxListenerSetters } from "./listener-types.ts";
import type { PendingMessage } from "./message-queue.ts";

/**
 * An activity a test federation's contexts sent, as Fedify's
 * `@fedify/testing` records it, plus who sent it to whom.
 * @since 0.4.0
 */
export interface SentActivity {
  /** Whether the federation's queue had been started (Fedify's meaning). */
  readonly queued: boolean;
  /** `"outbox"` when {@link SentActivity.queued}. */
  readonly queue?: "inbox" | "outbox" | "fanout";
  /** The activity, as given to `sendActivity()`. */
  readonly activity: Activity;
  /** The `rawActivity` option of `sendActivity()`, if given. */
  readonly rawActivity?: unknown;
  /** 1 for the first activity sent, and so on; `reset()` does not restart it. */
  readonly sentOrder: number;
  /** The sender given to `sendActivity()`. */
  readonly sender: SenderIdentity;
  /** The recipients given to `sendActivity()`. */
  readonly recipients: Recipient | readonly Recipient[] | "followers";
  /**
   * `true` when it was a listener's `forwardActivity()`: the activity is
   * the one received, `sender` the forwarder and `rawActivity` the
   * activity's JSON-LD.
   */
  readonly forwarded?: boolean;
}

/**
 * What a test context's `getSentActivities()` returns, one per
 * `sendActivity()` call on that context.
 * @since 0.4.0
 */
export interface ContextSentActivity {
  /** The sender. */
  readonly sender: SenderIdentity;
  /** The recipients. */
  readonly recipients: Recipient | readonly Recipient[] | "followers";
  /** The activity. */
  readonly activity: Activity;
  /** The `rawActivity` option, if given. */
  readonly rawActivity?: unknown;
  /** `true` when it was `forwardActivity()`. */
  readonly forwarded?: boolean;
}

/**
 * What the kit adds to every context it hands out (the ones a test makes
 * and the ones listeners, dispatchers and task handlers receive).
 * @since 0.4.0
 */
export interface TestContextMethods<TContextData> {
  /** The test federation the context belongs to. */
  readonly federation: MockFederation<TContextData>;
  /**
   * The activities this context sent, in order.
   * @returns A copy of the list.
   */
  getSentActivities(): ContextSentActivity[];
  /** Forgets the activities this context sent. */
  reset(): void;
}

/**
 * A context of a test federation: a real Fedwork `Context` whose
 * `sendActivity()` records the activity instead of delivering it.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export type MockContext<TContextData> =
  & Omit<Context<TContextData>, "federation" | "clone">
  & TestContextMethods<TContextData>
  & {
    /**
     * The same context with other data; its sent activities start empty.
     * @param data The data.
     * @returns The new context.
     */
    clone(data: TContextData): MockContext<TContextData>;
  };

/**
 * A request context of a test federation.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export type MockRequestContext<TContextData> =
  & Omit<RequestContext<TContextData>, "federation" | "clone">
  & TestContextMethods<TContextData>
  & {
    /**
     * The same context with other data.
     * @param data The data.
     * @returns The new context.
     */
    clone(data: TContextData): MockRequestContext<TContextData>;
  };

/**
 * One message the kit ran: a task attempt, most often.
 * @since 0.4.0
 */
export interface TaskRun {
  /** The message's id: a task's `ctx.task.id`, the same for each attempt. */
  readonly messageId: string;
  /** The message's kind: `"task"`, `"inbox"`, `"outbox"`, `"fanout"`. */
  readonly kind: string;
  /** The task's name, for a task. */
  readonly taskName?: string;
  /** The attempt, 0 for the first. */
  readonly attempt: number;
  /**
   * How the attempt ended: the lifecycle event's type (`"completed"`,
   * `"retrying"`, `"failed"`, `"dropped"`, `"cancelled"`, `"unhandled"`).
   */
  readonly outcome: MessageEvent["type"];
  /** The lifecycle event itself, with the error, the next delay, … */
  readonly event: MessageEvent;
}

/**
 * Options of {@link MockFederation.runPendingTasks}.
 * @since 0.4.0
 */
export interface RunPendingTasksOptions {
  /**
   * How many messages one call runs at most, so that a task that keeps
   * enqueueing itself fails the test instead of hanging it.  A positive
   * integer.
   * @default `1000`
   */
  readonly maxRuns?: number;
}

/**
 * Options of {@link MockFederation.receiveActivity}.
 * @since 0.4.0
 */
export interface ReceiveActivityOptions {
  /**
   * The identifier of the personal inbox it arrives at, or `null` for the
   * shared inbox.
   * @default `null`
   */
  readonly recipient?: string | null;
}

/**
 * Options of {@link MockFederation.postOutboxActivity}.
 * @since 0.4.0
 */
export interface PostOutboxActivityOptions {
  /**
   * Headers of the POST, e.g. the `Authorization` the outbox's
   * `authorize()` predicate checks.
   * @default none
   */
  readonly headers?: HeadersInit;
}

/**
 * Options of {@link createFederation}.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface MockFederationOptions<TContextData> {
  /**
   * The data of the contexts inbox listeners and task handlers receive,
   * until `startQueue(data)` gives other data.
   */
  readonly contextData?: TContextData;
  /**
   * The origin contexts get when no URL is given (`receiveActivity()`,
   * `createContext()` helpers).
   * @default `"https://example.com"`
   */
  readonly origin?: string;
  /**
   * The document loader the federation uses (and `receiveActivity()` for
   * anything but the activity itself).  By default one that loads nothing
   * and throws, so that a test never reaches the network by accident.
   */
  readonly documentLoader?: DocumentLoader;
  /**
   * Where the clock starts.
   * @default the wall clock's time
   */
  readonly now?: number | Date;
  /**
   * Further options of the real federation under the kit (retry policies,
   * `taskStatusRetention`, …); `kv`, `queue` and `manuallyStartQueue` are
   * the kit's own.
   */
  readonly federation?: Omit<
    FederationOptions<TContextData>,
    "kv" | "queue" | "manuallyStartQueue" | "documentLoader"
  >;
}

/**
 * A test federation: a real Fedwork {@link Federation} (routing, URI
 * builders, dispatchers, inbox listeners, tasks, retries, status records)
 * on an in-memory store and a queue that runs nothing by itself, with the
 * members of Fedify's `@fedify/testing` mock and what Fedwork adds.
 * @typeParam TContextData The application data.
 * @since 0.4.0
 */
export interface MockFederation<TContextData> extends
  Omit<
    Federation<TContextData>,
    "createContext" | "setInboxListeners" | "setOutboxListeners"
  > {
  /** Every activity the federation's contexts sent, in order. */
  readonly sentActivities: SentActivity[];
  /** Whether `startQueue()` was called. */
  readonly queueStarted: boolean;
  /** How many activities were sent in all. */
  readonly sentCounter: number;
  /** The clock that delays, retries and times to live run on. */
  readonly clock: TestClock;
  /** The messages waiting in the queue: tasks, retries, delayed work. */
  readonly pendingMessages: readonly PendingMessage[];
  /**
   * Makes a context.
   * @param baseUrl The base URL.
   * @param contextData The data.
   * @returns The context.
   */
  createContext(baseUrl: URL, contextData: TContextData): MockContext<TContextData>;
  /**
   * Makes a request context.
   * @param request The request.
   * @param contextData The data.
   * @returns The context.
   */
  createContext(request: Request, contextData: TContextData): MockRequestContext<TContextData>;
  /**
   * Delivers an activity to the inbox listeners, through the real inbox
   * pipeline (type dispatch, idempotency, the error handler), and resolves
   * when they have run.
   * @param activity The activity; it needs an actor.  Without an id it gets
   *                 one on its actor's origin.
   * @param options The personal inbox it arrives at.
   * @throws What a listener throws.
   */
  receiveActivity(activity: Activity, options?: ReceiveActivityOptions): Promise<void>;
  /**
   * Posts an activity to a local actor's outbox, as a client-to-server
   * client would, through the real outbox route (`authorize()`, the actor
   * dispatcher, the owner check, the listener for the activity's class, the
   * error handler), and resolves when the listener has run.
   * @param identifier The outbox owner's identifier.
   * @param activity The activity; its actor must be the owner.
   * @param options Headers of the POST (the credentials `authorize()`
   *                checks).
   * @throws {TypeError} When `activity` is not an `Activity`.
   * @throws {Error} When the outbox refuses the POST (no outbox listeners,
   *         unauthorized, no such actor, the actor is not the owner).
   * @throws What the listener throws.
   */
  postOutboxActivity(
    identifier: string,
    activity: Activity,
    options?: PostOutboxActivityOptions,
  ): Promise<void>;
  /**
   * Registers the inbox routes; the listeners get test contexts.
   * @param inboxPath The personal inbox path, with `{identifier}`.
   * @param sharedInboxPath The shared inbox path.
   * @returns The setters.
   */
  setInboxListeners(
    inboxPath: string,
    sharedInboxPath?: string,
  ): MockInboxListenerSetters<TContextData>;
  /**
   * Registers the outbox listeners' route; the listeners get test contexts.
   * @param outboxPath The outbox path, with `{identifier}`.
   * @returns The setters.
   */
  setOutboxListeners(outboxPath: string): MockOutboxListenerSetters<TContextData>;
  /**
   * Runs every message that is due on the clock, one at a time, including
   * those that become due while they run (a retry without delay, a task a
   * task enqueued).  Nothing runs otherwise.
   * @param options The run limit.
   * @returns What ran, in order.
   */
  runPendingTasks(options?: RunPendingTasksOptions): Promise<readonly TaskRun[]>;
  /** Forgets the sent activities (Fedify's `reset()`). */
  reset(): void;
}
