import { getLogger } from "@logtape/logtape";
import { HandlerTimeoutError } from "../processing/errors.ts";
import {
  DEFAULT_TIMEOUT_GRACE_PERIOD_MS,
  runWithinTimeLimit,
  SharedTimeLimitError,
} from "../processing/time-limit.ts";
import type { RegisteredTask } from "./definition.ts";
import type { TaskItem } from "./handle-many.ts";
import type { HandleManySettings } from "./handle-many-options.ts";
import { TaskItemFailure } from "./item-failure.ts";
import type { TaskMessage } from "./message.ts";
import { normalizeTaskProgress, type TaskProgressInput } from "./progress.ts";
import { checkTaskResult, setTaskResult } from "./result.ts";
import type { TaskRunInfo } from "./run-info.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * One message of a `handleMany` task waiting in a worker for its run, as
 * the task message handler hands it over.  Internal.
 * @since 0.4.0
 */
export interface TaskItemEntry<TContextData> {
  /** The item's message. */
  readonly message: TaskMessage;
  /** The payload, decoded and validated. */
  readonly data: unknown;
  /** The item's own signal (its cancellation and the worker's shutdown). */
  readonly signal: AbortSignal;
  /** The worker's signal (its shutdown), not the item's. */
  readonly workerSignal: AbortSignal;
  /** The task's time limit in milliseconds, or `null` for none: its run's. */
  readonly limitMs: number | null;
  /** The worker's context data. */
  readonly contextData: TContextData;
  /** The message's base URL, parsed. */
  readonly baseUrl: URL;
  /** The run information a plain task would get in `ctx.task`. */
  readonly info: TaskRunInfo;
  /** Set to `true` when the item's run starts. */
  readonly state: { started: boolean };
  /** Gives the item's listener slot up while it waits, if the queue can. */
  readonly yieldSlot?: (() => () => void) | undefined;
}

/** Takes nothing back: the default of an item that kept its slot. */
const KEEP_SLOT = (): void => {};

/**
 * An entry once collected: it settles when its run has decided it.  A
 * class, and its own abort listener (`handleEvent`), rather than a spread
 * of the entry and closures: one is made for every item of every run.
 */
class CollectedItem<TContextData> implements TaskItemEntry<TContextData> {
  readonly message: TaskMessage;
  readonly data: unknown;
  readonly signal: AbortSignal;
  readonly workerSignal: AbortSignal;
  readonly limitMs: number | null;
  readonly contextData: TContextData;
  readonly baseUrl: URL;
  readonly info: TaskRunInfo;
  readonly state: { started: boolean };
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  /** Takes the item's listener slot back, if it gave it up. */
  takeBack: () => void = KEEP_SLOT;
  /** Whether the item kept its listener slot (it did not give it up). */
  holdsSlot = true;
  readonly #leave: (item: CollectedItem<TContextData>) => void;

  constructor(
    entry: TaskItemEntry<TContextData>,
    resolve: () => void,
    reject: (error: unknown) => void,
    leave: (item: CollectedItem<TContextData>) => void,
  ) {
    this.message = entry.message;
    this.data = entry.data;
    this.signal = entry.signal;
    this.workerSignal = entry.workerSignal;
    this.limitMs = entry.limitMs;
    this.contextData = entry.contextData;
    this.baseUrl = entry.baseUrl;
    this.info = entry.info;
    this.state = entry.state;
    this.resolve = resolve;
    this.reject = reject;
    this.#leave = leave;
  }

  /** Whether the item listens to its signal (see {@link watch}). */
  #watching = false;

  /**
   * Starts watching the item's signal, or leaves at once when it aborted
   * already.  Called once the item has waited a turn: an item whose run
   * fills and starts in the turn it came in (a claim's worth of messages)
   * never pays for a listener.
   */
  watch(): void {
    if (this.#watching) return;
    if (this.signal.aborted) {
      this.#leave(this);
      return;
    }
    this.#watching = true;
    this.signal.addEventListener("abort", this);
  }

  /** The item's signal aborted while it waited: it leaves its group. */
  handleEvent(): void {
    this.#leave(this);
  }

  /** Stops watching the item's signal. */
  unwatch(): void {
    if (!this.#watching) return;
    this.#watching = false;
    this.signal.removeEventListener("abort", this);
  }
}

/** What {@link TaskItemCollector} needs to run the items it collected. */
export interface TaskItemRunner<TContextData, TContext> {
  /** Builds the context of a run, as for a plain task. */
  readonly createContext: (
    message: TaskMessage,
    baseUrl: URL,
    task: TaskRunInfo,
    contextData: TContextData,
  ) => TContext | Promise<TContext>;
  /** Stores and publishes one item's progress; optional. */
  readonly reportProgress?: (
    message: TaskMessage,
    progress: { readonly percent?: number; readonly data?: unknown },
  ) => Promise<void>;
  /**
   * How long a run whose time limit passed gets to settle before its
   * items are decided without it, in milliseconds; 5 seconds by default.
   */
  readonly timeoutGraceMs?: number;
}

/** How a run ended, before the time limit had its say. */
type RunEnd =
  /** The run failed: every item fails with `error`. */
  | { readonly failed: true; readonly error: unknown }
  /** The handler returned: nothing, or one entry per item. */
  | { readonly failed: false; readonly returned: readonly unknown[] | undefined };

/**
 * Collects the messages of one `handleMany` task that a worker is running
 * and calls the task's handler once per group: when `size` of them are
 * there, or `wait` after the first.  Each message still has its own
 * dispatch (outcome, retry, records, events); the promise {@link add}
 * returns settles with that item's part of the run.  The run has the
 * task's time limit, counted from its start, and its items have none of
 * their own: when it passes, every item's part is a timeout (a
 * {@link SharedTimeLimitError}).  An item whose signal aborts while it
 * waits (cancelled, the worker stopping) leaves the group: at once when it
 * has waited a turn (its signal is watched from then on), else when the
 * group would start its run.
 * Internal.
 * @since 0.4.0
 */
export class TaskItemCollector<TContextData, TContext> {
  readonly #task: RegisteredTask<TContextData, TContext>;
  readonly #settings: HandleManySettings;
  readonly #runner: TaskItemRunner<TContextData, TContext>;
  #pending: CollectedItem<TContextData>[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Set while a turn is scheduled to watch the signals of the items waiting. */
  #watchTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param task The task, with its `handleMany` settings.
   * @param settings The task's `handleMany` settings.
   * @param runner Builds contexts and reports progress.
   */
  constructor(
    task: RegisteredTask<TContextData, TContext>,
    settings: HandleManySettings,
    runner: TaskItemRunner<TContextData, TContext>,
  ) {
    this.#task = task;
    this.#settings = settings;
    this.#runner = runner;
  }

  /** How many items wait for their run right now. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Adds an item to the next run.
   * @param entry The item.
   * @returns Settles when the run has decided the item: resolves when it
   *          completed, rejects with its error otherwise (the run's, its
   *          {@link TaskItemFailure}'s, or its signal's reason when it
   *          left the group before the run).
   */
  add(entry: TaskItemEntry<TContextData>): Promise<void> {
    if (entry.signal.aborted) return Promise.reject(entry.signal.reason);
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const settled = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const item = new CollectedItem(entry, resolve, reject, this.#leave);
    this.#pending.push(item);
    if (this.#pending.length >= this.#settings.size && this.#fullWithoutAborted()) this.#flush();
    else {
      if (this.#timer === undefined) {
        this.#timer = setTimeout(this.#flushLater, this.#settings.waitMs);
      }
      // The items still waiting a turn from now watch their signals then
      // (one timer for all of them); a run that fills before needs none.
      this.#watchTimer ??= setTimeout(this.#watchPending, 0);
      // The listener may start another message (of this task, likely) in
      // the slot this one waits in: what fills a run beyond the queue's
      // concurrency.
      const takeBack = entry.yieldSlot?.();
      if (takeBack != null) {
        item.takeBack = takeBack;
        item.holdsSlot = false;
      }
    }
    return settled;
  }

  /** The timer's callback, made once. */
  readonly #flushLater = (): void => this.#flush();

  /**
   * Takes the items whose signals aborted before they watched them out of
   * the group (they leave, as they would have when their signals
   * aborted), and tells whether it is still full.
   */
  #fullWithoutAborted(): boolean {
    this.#dropAborted();
    return this.#pending.length >= this.#settings.size;
  }

  /** Makes the waiting items whose signals aborted leave. */
  #dropAborted(): void {
    if (!this.#pending.some((item) => item.signal.aborted)) return;
    for (const item of this.#pending.filter((each) => each.signal.aborted)) this.#leave(item);
  }

  /** Makes the items waiting watch their signals (each item once). */
  readonly #watchPending = (): void => {
    this.#watchTimer = undefined;
    // A copy: an item that aborted already leaves the list as it goes.
    for (const item of [...this.#pending]) item.watch();
  };

  /** Takes an item whose signal aborted out of the group it waits in. */
  readonly #leave = (item: CollectedItem<TContextData>): void => {
    const index = this.#pending.indexOf(item);
    if (index < 0) return;
    this.#pending.splice(index, 1);
    item.unwatch();
    item.takeBack();
    if (this.#pending.length === 0) this.#clearTimer();
    item.reject(item.signal.reason);
  };

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #flush(): void {
    this.#clearTimer();
    // An item whose signal aborted before it watched it leaves now, as it
    // would have when its signal aborted.
    this.#dropAborted();
    const items = this.#pending;
    this.#pending = [];
    if (items.length === 0) return;
    // The run takes one slot, its first item's: the others stay without
    // one until they settle, so that a listener's concurrency counts runs
    // (and plain handlers), and the next run fills meanwhile.
    if (!items.some((item) => item.holdsSlot)) items[0].takeBack();
    for (const item of items) {
      item.unwatch();
      item.state.started = true;
    }
    this.#run(items).catch((error) => {
      // #run settles every item itself; this is a bug's last resort, so
      // that no dispatch waits for ever.
      for (const item of items) item.reject(error);
    });
  }

  async #run(items: readonly CollectedItem<TContextData>[]): Promise<void> {
    const task = this.#task;
    const first = items[0];
    // One time limit for the run (its first item's: one task, one worker),
    // on the deadline list every time limit shares; the run's signal is
    // the worker's when there is none.
    const limitMs = first.limitMs;
    const timed = runWithinTimeLimit((signal) => this.#runWith(items, signal), {
      limitMs,
      graceMs: this.#runner.timeoutGraceMs ?? DEFAULT_TIMEOUT_GRACE_PERIOD_MS,
      signal: first.workerSignal,
      timeoutError: () => timeoutErrorOf(task.name, first.message, limitMs!),
    });
    let end: RunEnd;
    try {
      end = await timed.promise;
    } catch (error) {
      const timedOut = timed.timedOut;
      if (timedOut == null) throw error;
      // Every item ran out of time with the run, each with an error that
      // names it; the first also speaks for the run, so that an abandoned
      // run is logged once.
      for (const item of items) {
        item.reject(
          item === first
            ? new SharedTimeLimitError(timedOut, items.length)
            : new SharedTimeLimitError({
              ...timedOut,
              error: timeoutErrorOf(task.name, item.message, limitMs!),
            }),
        );
      }
      return;
    }
    if (end.failed) {
      for (const item of items) item.reject(end.error);
      return;
    }
    const { returned } = end;
    for (let i = 0; i < items.length; i++) {
      const entry = returned?.[i];
      if (entry instanceof TaskItemFailure) {
        items[i].reject(entry.error);
        continue;
      }
      if (entry !== undefined) keepTaskResult(task, items[i].message, entry);
      items[i].resolve();
    }
  }

  /**
   * Calls the handler (and `onError`) once for the items, under the run's
   * signal; settles no item itself, so that the time limit decides first.
   */
  async #runWith(
    items: readonly CollectedItem<TContextData>[],
    signal: AbortSignal,
  ): Promise<RunEnd> {
    const task = this.#task;
    const first = items[0];
    const runItems: TaskItem<unknown>[] = items.map((item) =>
      Object.freeze({
        data: item.data,
        id: item.message.id,
        attempt: item.message.attempt,
        enqueuedAt: item.info.enqueuedAt,
        signal: item.signal,
      })
    );
    Object.freeze(runItems);
    const report = this.#runner.reportProgress;
    const info: TaskRunInfo = {
      ...first.info,
      signal,
      reportProgress: async (progress: TaskProgressInput) => {
        const normal = normalizeTaskProgress(progress);
        if (report == null) return;
        await Promise.all(items.map((item) => report(item.message, normal)));
      },
    };
    let ctx: TContext | undefined;
    let returned: unknown;
    try {
      const made = this.#runner.createContext(
        first.message,
        first.baseUrl,
        info,
        first.contextData,
      );
      ctx = made instanceof Promise ? await made : made;
      returned = await task.handler(ctx as TContext, runItems);
    } catch (error) {
      if (ctx !== undefined && task.onError != null) {
        try {
          await task.onError(ctx, error, runItems);
        } catch (onErrorError) {
          logger.error("The onError hook of the task {taskName} threw: {error}", {
            taskName: task.name,
            messageId: first.message.id,
            error: onErrorError,
          });
        }
      }
      return { failed: true, error };
    }
    if (returned !== undefined && (!Array.isArray(returned) || returned.length !== items.length)) {
      const error = new TypeError(
        `The handler of the task ${JSON.stringify(task.name)} (handleMany) returned ` +
          `${Array.isArray(returned) ? `${returned.length} entries` : typeof returned} for ` +
          `${items.length} items; return nothing, or one entry per item in their order.`,
      );
      logger.error("{error}", { taskName: task.name, items: items.length, error });
      return { failed: true, error };
    }
    return { failed: false, returned: returned as readonly unknown[] | undefined };
  }
}

/** The timeout error of one item of a run whose time limit passed. */
function timeoutErrorOf(
  taskName: string,
  message: TaskMessage,
  timeoutMs: number,
): HandlerTimeoutError {
  return new HandlerTimeoutError({ messageId: message.id, kind: "task", taskName, timeoutMs });
}

/**
 * Checks a handler's result and keeps it for the message's status record,
 * or logs why it is not kept.  Internal.
 * @param task The task (its name and `maxResultBytes`).
 * @param message The message the result is for.
 * @param returned What the handler returned for it, not `undefined`.
 * @since 0.4.0
 */
export function keepTaskResult(
  task: { readonly name: string; readonly maxResultBytes: number },
  message: TaskMessage,
  returned: unknown,
): void {
  const checked = checkTaskResult(returned, task.maxResultBytes);
  if (checked.omitted != null) {
    logger.warn(
      "The result of task {taskName} ({messageId}) is not kept: {reason}  The task " +
        "completed; its status says resultOmitted instead.",
      {
        taskName: task.name,
        messageId: message.id,
        reason: checked.omitted.message,
        bytes: checked.omitted.bytes,
        limit: checked.omitted.limit,
      },
    );
  }
  setTaskResult(message, checked);
}
