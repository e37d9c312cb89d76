// How a cancellation reaches the task it is for: a marker in the key–value
// store, which a worker reads before it runs a task (a queued task is never
// run), and a request on the pub/sub transport, which aborts the task's
// signal in whichever process runs it right now.  Markers are read only
// once some cancellation was requested in the federation: a flag in the
// store says so (see CancellationFlag), so that a federation that never
// cancels reads no marker.
import { type InFlightHandle, InFlightList } from "../../processing/in-flight-list.ts";
import { followSignal } from "../../processing/signal-followers.ts";
import { getLogger } from "@logtape/logtape";
import type { Temporal } from "@js-temporal/polyfill";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import {
  isInMemoryKvStore,
  type MemoryKvStore,
  readInMemoryNow,
} from "../../kv/memory-kv-store.ts";
import { MicrotaskBatcher } from "../../kv/microtask-batcher.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import { toTemporalDuration } from "../../time/duration.ts";
import { TaskCancelledError } from "../../tasks/errors.ts";
import type { TaskCancelWatch } from "../../tasks/cancel-watch.ts";
import { CancellationFlag, type CancellationFlagOptions } from "./flag.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * The pub/sub topic cancellation requests are published on; the payload is
 * `{"id": …, "reason": …}` as JSON.
 * @since 0.3.0
 */
export const TASK_CANCEL_TOPIC = "fedwork:task-cancel";

/** A cancellation marker as stored. */
interface StoredCancellation {
  readonly reason?: string;
  readonly at: string;
}

/** A marker read waiting to be sent with the others of its turn. */
interface PendingRead {
  readonly id: string;
  readonly run: WatchedRun;
}

/** The subscription to cancellation requests, and how many hold it. */
interface Subscription {
  readonly controller: AbortController;
  readonly ready: Promise<void>;
  /** Whether `ready` has settled: runs then need not wait for it. */
  active: boolean;
  holders: number;
}

/** A run of a task this process watches. */
interface WatchedRun {
  /** The task's id. */
  readonly id: string;
  readonly controller: AbortController;
  /** Set when the task is cancelled, even if the signal had aborted already. */
  cancelled: boolean;
  /** The cancellation's reason, if given. */
  reason: string | undefined;
}

/**
 * The {@link TaskCancelWatch} of one run, which is also the run as the
 * list of watched runs holds it: one object, a class rather than object
 * literals with getters and an `end` closure, made for every task run.
 */
class RunWatch implements TaskCancelWatch, WatchedRun {
  readonly id: string;
  readonly controller: AbortController;
  cancelled = false;
  reason: string | undefined = undefined;
  /** Set by `begin()` once the run is listed (it then reads the marker). */
  checked: Promise<void> | undefined = undefined;
  readonly #running: InFlightList<WatchedRun>;
  readonly #entry: InFlightHandle<WatchedRun>;
  readonly #parent: AbortSignal;
  /** The controllers following the parent, this one among them, once it follows. */
  #following: InFlightList<AbortController> | undefined = undefined;
  #followHandle: InFlightHandle<AbortController> | undefined = undefined;

  /** Lists the run in `running`. */
  constructor(
    running: InFlightList<WatchedRun>,
    id: string,
    controller: AbortController,
    parent: AbortSignal,
  ) {
    this.id = id;
    this.controller = controller;
    this.#running = running;
    this.#parent = parent;
    this.#entry = running.add(this);
  }

  /**
   * Aborts the run's controller, which is not the parent's, when the
   * parent signal aborts: one controller linked by hand, as
   * `AbortSignal.any()` costs several times as much, on every task, and
   * through the list of the parent's followers, as a listener of its own
   * on the parent cost about a microsecond more (see signal-followers.ts).
   */
  followParent(): void {
    const following = this.#following = followSignal(this.#parent, this.controller);
    this.#followHandle = following?.add(this.controller);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  end(): void {
    if (this.#followHandle != null) this.#following!.remove(this.#followHandle);
    this.#running.remove(this.#entry);
  }
}

/**
 * Cancellation markers and requests, and the runs of this process watched
 * for them.  Internal.
 * @since 0.3.0
 */
export class TaskCancellations {
  readonly #kv: KvStore;
  readonly #pubsub: PubSub;
  readonly #enabled: boolean;
  /** The store when it is a `MemoryKvStore` itself, read at once. */
  readonly #memory: MemoryKvStore | undefined;
  /** Whether other marker reads go through {@link TaskCancellations.#reads}. */
  readonly #batched: boolean;
  /**
   * The runs of this process.  A list, not a map by task id: every run is
   * added and removed, while a request to find one by id is rare, and a
   * map with an entry set and deleted per run rehashes every few runs.  A
   * request scans the list, which holds no more runs than the workers'
   * concurrency.
   */
  readonly #running = new InFlightList<WatchedRun>();
  /** The open subscription and how many worker groups hold it. */
  #subscription: Subscription | undefined;
  /** Whether some cancellation was requested: whether markers are read at all. */
  readonly #flag: CancellationFlag;
  /** Gathers the marker reads asked for in one turn (see #readMarker()). */
  readonly #reads = new MicrotaskBatcher<PendingRead>((reads) =>
    reads.length > 1 ? this.#readBatch(reads) : this.#readOne(reads[0].id, reads[0].run)
  );

  /**
   * @param kv Where markers are kept.
   * @param pubsub Where requests are published.
   * @param enabled Whether cancellation is possible at all (the federation
   *                keeps task status records); when not, runs are not
   *                watched and cost nothing.
   * @param flag The clock and the flag's cache bound, for tests.
   */
  constructor(
    kv: KvStore,
    pubsub: PubSub,
    enabled: boolean,
    flag: CancellationFlagOptions = {},
  ) {
    this.#kv = kv;
    this.#pubsub = pubsub;
    this.#enabled = enabled;
    // A MemoryKvStore answers at once: a batch would only add hops.
    this.#memory = isInMemoryKvStore(kv) ? kv : undefined;
    this.#batched = typeof kv.getMany === "function";
    this.#flag = new CancellationFlag(kv, flag);
  }

  /**
   * Marks a task cancelled and asks whichever process runs it to abort it.
   * @param id The task's id.
   * @param reason Why, if said.
   * @param ttl How long the marker is kept.
   */
  async request(id: string, reason: string | undefined, ttl: Temporal.Duration): Promise<void> {
    const stored: StoredCancellation = {
      ...(reason == null ? {} : { reason }),
      at: new Date().toISOString(),
    };
    // The flag first, known to every worker before the marker is written
    // (see CancellationFlag.raise()); then the marker, before the request
    // is published: a run that starts after the request was published
    // reads it (see begin()).
    await this.#flag.raise(ttl);
    await this.#kv.set(markerKey(id), stored, { ttl });
    this.#abortLocal(id, reason);
    await this.#pubsub.publish(TASK_CANCEL_TOPIC, JSON.stringify({ id, reason })).catch(
      (error) => {
        logger.warn("Could not publish the cancellation of task {messageId}: {error}", {
          messageId: id,
          error,
        });
      },
    );
  }

  /**
   * Subscribes to cancellation requests until `signal` aborts; the workers
   * hold it while they run.  Resolves once the subscription is active.
   * @param signal Ends this hold.
   */
  async listen(signal: AbortSignal | undefined): Promise<void> {
    if (!this.#enabled || signal?.aborted) return;
    let subscription = this.#subscription;
    if (subscription == null) {
      const controller = new AbortController();
      const ready = this.#pubsub.subscribe(TASK_CANCEL_TOPIC, (payload) => {
        const request = decodeRequest(payload);
        if (request == null) return;
        // Another process cancelled: this one need not wait for its cached
        // flag to age before it reads markers.
        this.#flag.heard();
        this.#abortLocal(request.id, request.reason);
      }, { signal: controller.signal }).catch((error) => {
        logger.warn(
          "Could not subscribe to task cancellations; running tasks are cancelled only " +
            "when they start: {error}",
          { error },
        );
      });
      const created: Subscription = { controller, ready, active: false, holders: 0 };
      void ready.then(() => created.active = true);
      subscription = this.#subscription = created;
    }
    subscription.holders++;
    const held = subscription;
    signal?.addEventListener("abort", () => this.#release(held), { once: true });
    await subscription.ready;
  }

  /**
   * Ends one hold of the subscription: the workers stopped.
   * @param subscription The subscription held.
   */
  #release(subscription: Subscription): void {
    if (--subscription.holders > 0 || this.#subscription !== subscription) return;
    this.#subscription = undefined;
    subscription.controller.abort();
  }

  /**
   * Starts watching a run of a task: its signal aborts when `parent` does
   * or the task is cancelled, and `cancelled` becomes true, once `checked`
   * settles, when it was cancelled before.  The marker is read without
   * waiting for it here, so that the read overlaps the run's decoding and
   * validation; the run registers first, so that a request published
   * while the read is under way reaches it (and one published before left
   * the marker the read finds).
   * @param id The task's id.
   * @param parent The worker's signal for the run.
   * @param own The controller of `parent` when that signal is the run's own
   *            (see `MessageRun.controller`): a cancellation aborts it, and
   *            no other signal is made.
   * @returns The watch, or `undefined` when cancellation is off.
   */
  begin(id: string, parent: AbortSignal, own?: AbortController): TaskCancelWatch | undefined {
    if (!this.#enabled) return undefined;
    const ownSignal = own != null && own.signal === parent;
    const run = new RunWatch(this.#running, id, ownSignal ? own : new AbortController(), parent);
    if (!ownSignal) run.followParent();
    // A run waits for the subscription the workers opened (only while it
    // is being opened): a request published once it runs reaches it.
    const subscription = this.#subscription;
    run.checked = subscription == null || subscription.active
      ? this.#check(id, run)
      : subscription.ready.then(() => this.#check(id, run));
    return run;
  }

  /**
   * Reads a run's marker when some cancellation was requested in the
   * federation, and reads none otherwise.
   * @param id The task's id.
   * @param run The run.
   * @returns Settles once checked; never rejects.  `undefined` when
   *          checked at once.
   */
  #check(id: string, run: WatchedRun): Promise<void> | undefined {
    const raised = this.#flag.raised();
    if (raised === false) return undefined;
    if (raised === true) return this.#readMarker(id, run);
    return raised.then((yes) => yes ? this.#readMarker(id, run) : undefined);
  }

  /**
   * Reads a task's cancellation marker and cancels the run when there is
   * one; a failed read is logged (the run goes ahead).
   *
   * On a store with `getMany()`, the reads asked for in the same turn
   * share a round trip (see `MicrotaskBatcher`): the runs a lease listener
   * starts from one claimed batch, or that a parallel queue starts
   * together, have their markers read with one `get()` (the first, sent at
   * once) and one `getMany()` for the rest, in flight together.  That
   * needs no hook in any queue, and a lone run (concurrency 1) reads with
   * its own `get()` as before, at no extra cost.  The guarantee is
   * unchanged: the run is registered before its read is sent, and its
   * handler waits for the read.
   * @param id The task's id.
   * @param run The run.
   * @returns Settles once read; never rejects.  `undefined` when read at
   *          once (a `MemoryKvStore`).
   */
  #readMarker(id: string, run: WatchedRun): Promise<void> | undefined {
    if (this.#memory != null) {
      // Read at once: a promise for a read that is already done would
      // cost the run two turns of the microtask queue.
      try {
        applyMarker(run, id, readInMemoryNow(this.#memory, markerKey(id)));
      } catch (error) {
        logger.warn("Could not read whether task {messageId} was cancelled: {error}", {
          messageId: id,
          error,
        });
      }
      return undefined;
    }
    if (!this.#batched || this.#reads.first()) return this.#readOne(id, run);
    return this.#reads.push({ id, run });
  }

  /**
   * Reads the markers of a batch of runs with one `getMany()` call.
   * @param reads The batch; more than one read.
   * @returns Settles once read; never rejects.
   */
  #readBatch(reads: readonly PendingRead[]): Promise<void> {
    const keys = reads.map((read) => markerKey(read.id));
    let batch: Promise<readonly unknown[]>;
    try {
      batch = this.#kv.getMany!(keys);
    } catch (error) {
      batch = Promise.reject(error);
    }
    return batch.then((markers) => {
      if (!Array.isArray(markers)) throw new TypeError("getMany() did not return an array.");
      for (let i = 0; i < reads.length; i++) applyMarker(reads[i].run, reads[i].id, markers[i]);
    }).catch((error) => {
      logger.warn("Could not read whether {count} tasks were cancelled: {error}", {
        count: reads.length,
        messageIds: reads.map((read) => read.id),
        error,
      });
    });
  }

  /**
   * Reads one task's marker with `get()`.
   * @param id The task's id.
   * @param run The run.
   * @returns Settles once read; never rejects.
   */
  #readOne(id: string, run: WatchedRun): Promise<void> {
    let read: Promise<unknown>;
    try {
      read = this.#kv.get(markerKey(id));
    } catch (error) {
      read = Promise.reject(error);
    }
    return read.then((marker) => applyMarker(run, id, marker), (error) => {
      logger.warn("Could not read whether task {messageId} was cancelled: {error}", {
        messageId: id,
        error,
      });
    });
  }

  #abortLocal(id: string, reason: string | undefined): void {
    // Every run of the task: it may run twice at once (a redelivery).
    for (const run of this.#running.values()) if (run.id === id) cancelRun(run, id, reason);
  }
}

/** Cancels a run when its marker, as read, is there. */
function applyMarker(run: WatchedRun, id: string, marker: unknown): void {
  if (marker == null) return;
  const reason = (marker as Partial<StoredCancellation>).reason;
  cancelRun(run, id, typeof reason === "string" ? reason : undefined);
}

function cancelRun(run: WatchedRun, id: string, reason: string | undefined): void {
  if (run.cancelled) return;
  run.cancelled = true;
  if (reason != null) run.reason = reason;
  if (!run.controller.signal.aborted) run.controller.abort(new TaskCancelledError(id, reason));
}

/**
 * How long a cancellation marker is kept: as long as the task's status
 * record, and at least 30 days, for a task delayed that long.
 * @param statusRetentionMs The status records' retention.
 * @returns The marker's TTL.
 * @since 0.3.0
 */
export function cancellationMarkerTtl(statusRetentionMs: number): Temporal.Duration {
  return toTemporalDuration(
    { milliseconds: Math.max(statusRetentionMs, 30 * 24 * 60 * 60 * 1000) },
    "ttl",
  );
}

function markerKey(id: string): KvKey {
  return ["fedwork", "task-cancelled", id];
}

function decodeRequest(payload: string): { id: string; reason?: string } | undefined {
  try {
    const value = JSON.parse(payload) as { id?: unknown; reason?: unknown };
    if (typeof value?.id !== "string") return undefined;
    return typeof value.reason === "string" ? { id: value.id, reason: value.reason } : {
      id: value.id,
    };
  } catch {
    return undefined;
  }
}
