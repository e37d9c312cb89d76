// The listen loop shared by Fedwork's lease-based queues (SQLite,
// PostgreSQL, Redis): claim with prefetch, heartbeat, batched
// acknowledgements, redelivery in place, back-off and shutdown.  The
// engine adapter does the storage; this module decides when.
import { getLogger, type Logger } from "@logtape/logtape";
import { durationToMilliseconds } from "../time/duration.ts";
import { listenBatchSize } from "./listen-options.ts";
import type {
  MessageQueueHandler,
  MessageRedelivery,
  MessageRedeliveryOptions,
} from "./message-queue.ts";
import { QueueClosedError } from "./queue-closed-error.ts";

/**
 * What an engine hands out for one claimed message.  The listener only
 * reads `id` (for log messages and error messages); everything else the
 * engine needs later (a lease token, whether it has an ordering key, the
 * raw payload) goes into the engine's own subtype.
 * @since 0.2.0
 */
export interface LeasedMessage {
  /** The message's id in the engine, as shown in logs. */
  readonly id: string | number;
  /**
   * How many times the engine has handed this message out, this claim
   * included (1 the first time): a stored counter the engine increments in
   * the same atomic step as the claim, resets when the message is
   * redelivered in place ({@link LeaseEngine.redeliver}), and takes back
   * when it hands back prefetched messages the handler never saw
   * ({@link LeaseEngine.release}).  Handed to the handler as
   * {@link MessageRedelivery.deliveryCount}.  Omit it when the engine does
   * not count.
   * @since 0.4.0
   */
  readonly deliveryCount?: number;
}

/**
 * One round trip the listener asks of its engine: apply the outcomes of
 * finished handlers, then claim up to `count` more messages.
 * @since 0.2.0
 */
export interface LeaseClaimRequest<M extends LeasedMessage> {
  /**
   * How many messages to claim (lease to this listener and return).  `0`
   * means claim nothing: only apply `acks` and `handBacks` (the listener
   * does so when it is full, and once more when it stops).
   */
  readonly count: number;
  /**
   * Messages whose handlers returned: delete them.  Must be idempotent
   * (the listener sends them again when the call rejects).
   */
  readonly acks: readonly M[];
  /**
   * Messages whose handlers threw (or returned after a failed
   * `redeliver()`): drop this listener's lease and make them claimable
   * again after the engine's hand-back delay, unchanged.  Only where this
   * listener still holds the lease (another worker may have taken a
   * message whose lease ran out).
   */
  readonly handBacks: readonly M[];
  /**
   * Messages this listener keeps holding after the call (running or
   * prefetched), for engines that compute {@link LeaseClaimResult.waitMs}
   * from the leases *other* workers hold.
   */
  readonly held: readonly M[];
}

/**
 * What {@link LeaseEngine.claim} returns.
 * @since 0.2.0
 */
export interface LeaseClaimResult<M extends LeasedMessage> {
  /** The claimed messages, leased to this listener, in hand-out order. */
  readonly messages: readonly M[];
  /**
   * When fewer messages than asked were claimed: how many milliseconds
   * until something may become claimable that no wake-up will announce (a
   * delay running out, another worker's lease expiring).  The listener
   * sleeps at most this long, and at most the poll interval.  Omit it (or
   * `undefined`) to sleep for the poll interval.
   */
  readonly waitMs?: number;
  /**
   * When fewer messages than asked were claimed: computes what
   * {@link LeaseClaimResult.waitMs} says, for engines that need a round
   * trip of their own for it.  The listener calls it once, after it has
   * started the claimed messages' handlers, so that they do not wait for
   * that round trip, and sleeps as for `waitMs` (which it replaces) with
   * what it resolves to.  When it rejects, the error is logged and the
   * listener claims again after a short back-off.
   * @returns How many milliseconds to sleep at most, or `undefined` for
   *          the poll interval.
   * @since 0.4.0
   */
  readonly nextWake?: () => Promise<number | undefined>;
}

/**
 * The storage side of a lease listener: what a queue backend implements to
 * get {@link runLeaseListener}'s loop.  One engine object serves one
 * `listen()` call, so it may keep per-listener state (a lease owner id, a
 * lazily opened connection or subscription).
 *
 * Every method may reject; the listener logs and retries (claims with
 * back-off) or leaves the message to its lease (heartbeats, releases), so
 * nothing is lost.  Rejecting with a {@link QueueClosedError} tells the
 * listener that the queue was disposed: it stops as if aborted.
 * @since 0.2.0
 */
export interface LeaseEngine<M extends LeasedMessage> {
  /**
   * Applies `request.acks` and `request.handBacks` and claims up to
   * `request.count` messages, in as few round trips as the engine allows
   * (one transaction or one script ideally): this is how acknowledgements
   * ride on the next claim.
   * @param request The outcomes to apply and how many to claim.
   * @returns The claimed messages and how long to sleep when short.
   */
  claim(request: LeaseClaimRequest<M>): Promise<LeaseClaimResult<M>>;
  /**
   * Hands back prefetched messages that were never given to the handler
   * (the listener is stopping): drop this listener's lease so that any
   * worker can claim them at once, keeping their place in line.  An engine
   * that counts hand-outs ({@link LeasedMessage.deliveryCount}) takes this
   * claim's count back: a message nobody started has not been handed out.
   * @param messages The messages; never empty.
   */
  release(messages: readonly M[]): Promise<void>;
  /**
   * Renews this listener's leases on `messages` (running, prefetched and
   * finished-but-not-yet-acknowledged ones).  Only where this listener
   * still holds the lease.
   * @param messages The messages; never empty.
   */
  extendLeases(messages: readonly M[]): Promise<void>;
  /**
   * Stores `payload` in place of the running message and makes it
   * claimable after `delayMs`, dropping this listener's lease but keeping
   * the message's place in its ordering key.  An engine that counts
   * hand-outs ({@link LeasedMessage.deliveryCount}) resets the count to 0
   * in the same step: an outcome was recorded.  Rejects (changing nothing)
   * when the lease is no longer this listener's, or when `payload` cannot
   * be stored (`TypeError`).  The listener has already checked the call:
   * once per delivery, before the handler settled, a valid delay.
   * @param message The running message.
   * @param payload The new version, as the handler passed it.
   * @param delayMs The delay in milliseconds, not negative.
   */
  redeliver(message: M, payload: unknown, delayMs: number): Promise<void>;
  /**
   * Turns a claimed message into the value handed to the handler.  When it
   * throws, the message is logged and acknowledged (dropped): handing it
   * out again would not make it decodable.
   * @param message The claimed message.
   * @returns The message as enqueued.
   */
  decode(message: M): unknown;
  /**
   * Subscribes to the engine's wake-ups (a local enqueue, a
   * notification): `wake` makes a sleeping listener claim at once.
   * @param wake Call whenever messages may have become claimable.
   * @returns Unsubscribes; called when the listener ends.
   */
  subscribe(wake: () => void): () => void;
  /**
   * Called once when the listener has ended (after its last
   * acknowledgements), to free per-listener resources.  Optional.
   */
  close?(): Promise<void> | void;
}

/**
 * Options of {@link runLeaseListener}: the resolved listener options
 * (see `resolveLeaseOptions()`) plus what the log messages say.
 * @since 0.2.0
 */
export interface LeaseListenerOptions {
  /** How many handlers run at once; a positive integer. */
  readonly concurrency: number;
  /**
   * How many messages to hold beyond `concurrency`: claimed, leased and
   * kept alive by the heartbeat, started as soon as a handler finishes and
   * released when the listener stops.  `0` claims only for free slots.
   */
  readonly prefetch: number;
  /**
   * How far the prefetch may grow while there is a backlog: when a
   * handler slot runs out of work although the last claim came back full
   * (the handlers outrun the round trips), or when the next claim is due
   * less than 10 ms after a full one (the handlers got through the
   * prefetched messages that quickly, so twice as many wait about as
   * long: the round trips, not the handlers, are then what costs), the
   * next claims ask for twice as many, up to `concurrency + maxPrefetch`;
   * a claim that comes back short (the backlog is gone) returns to
   * `prefetch`.  So a worker with quick handlers drains a backlog with
   * few round trips, and holds no more than `prefetch` messages from
   * other workers otherwise; slow handlers, which leave the prefetched
   * messages waiting, and a `prefetch` of 0 never make it grow.  At least
   * `prefetch`; `prefetch` itself (the default) never grows.
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;
  /**
   * The listener's `MessageQueueListenOptions.batchSize`: the
   * handler collects up to this many messages per run, so the listener
   * claims up to `max(prefetch, batchSize)` beyond its free slots (and
   * lets the prefetch grow at least that far).  A positive integer; checked
   * here, so a queue may pass what its `listen()` was given.  None by
   * default.
   * @since 0.4.0
   */
  readonly batchSize?: number;
  /** How often held leases are renewed, in milliseconds. */
  readonly heartbeatMs: number;
  /** The longest an idle listener sleeps, in milliseconds. */
  readonly pollMs: number;
  /**
   * How long a handed-back message waits before it is claimable again, in
   * milliseconds; only for log messages (the engine applies it).
   */
  readonly handBackDelayMs: number;
  /**
   * The longest the outcome (acknowledgement or hand-back) of a finished
   * handler waits for the next round trip while prefetched messages keep
   * the listener busy, in milliseconds.  Outcomes are otherwise sent when
   * half of `concurrency + prefetch` can be claimed, or when a free handler
   * slot has nothing to run.  50 by default.
   */
  readonly ackDelayMs?: number;
  /**
   * How long every handler slot may stay busy, with no handler starting
   * or finishing, before the prefetched messages are handed back
   * ({@link LeaseEngine.release}): they then count as ready again and
   * other listeners (in this process or another) take them, instead of
   * waiting behind long handlers.  The listener claims nothing beyond its
   * free slots until a handler finishes.  In milliseconds; 1,000 by
   * default, `Infinity` never.
   * @since 0.4.0
   */
  readonly stallReleaseMs?: number;
  /** What to call the queue in log messages, e.g. `SQLite table "jobs"`. */
  readonly queueName: string;
  /** Stops the listener.  Optional. */
  readonly signal?: AbortSignal;
  /** Where to log; the `["fedwork", "queue"]` category by default. */
  readonly logger?: Logger;
}

// Back-off after failed claims: doubles from the first value up to the cap.
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
// The longest a finished handler's outcome waits for a round trip.
const DEFAULT_ACK_DELAY_MS = 50;
// A backlog whose prefetched messages go quicker than this, from one full
// claim to the next, makes the prefetch grow (see maxPrefetch).
const QUICK_TURNOVER_MS = 10;
// How long full slots may hold prefetched messages (see stallReleaseMs).
const DEFAULT_STALL_RELEASE_MS = 1_000;
// How often the final acknowledgements are tried when stopping.
const FINAL_FLUSH_ATTEMPTS = 3;

interface Delivery<M> {
  readonly message: M;
  /** Whether the lease is still this listener's (false once redelivered). */
  leased: boolean;
  /** Whether the handler has returned or thrown. */
  settled: boolean;
  /** Set once `redeliver()` was called: resolves to whether it stored. */
  redelivering?: Promise<boolean>;
  /** Whether the handler gave its slot up while it waits (`yieldSlot()`). */
  yielded?: boolean;
}

/**
 * How many handlers of one listener may wait without a slot
 * (`MessageRedelivery.yieldSlot()`): the most items a `handleMany` run
 * collects, so that a listener holds at most this many messages more than
 * `concurrency + prefetch`.
 */
const MAX_YIELDED_SLOTS = 1000;

/**
 * Runs one `listen()` call of a lease-based queue until `options.signal`
 * aborts or the engine reports a {@link QueueClosedError}:
 *
 * - claims up to `concurrency + prefetch` messages per round trip (more,
 *   up to `concurrency + maxPrefetch`, while quick handlers drain a
 *   backlog), handing
 *   the acknowledgements and hand-backs of finished handlers to the same
 *   {@link LeaseEngine.claim} call; the next round trip comes when a free
 *   handler slot has nothing to run, when half of `concurrency + prefetch`
 *   can be claimed, or when an outcome has waited `ackDelayMs`;
 * - runs up to `concurrency` handlers; a finishing handler starts the next
 *   prefetched message at once, without a round trip;
 * - hands back its prefetched messages when every handler slot has been
 *   busy for `stallReleaseMs` with none finishing, so that they wait as
 *   ready messages instead of behind long handlers;
 * - renews the leases of every message it holds (running, prefetched, or
 *   finished but not yet acknowledged) every `heartbeatMs`;
 * - passes each handler a {@link MessageRedelivery} (checked once per
 *   delivery, before the handler settles, with a valid delay) carrying the
 *   engine's {@link LeasedMessage.deliveryCount};
 * - acknowledges a message whose handler returned, hands back one whose
 *   handler threw (it comes back after the engine's hand-back delay), and
 *   keeps one that was redelivered;
 * - sleeps until a wake-up, the engine's `waitMs` or `pollMs`; backs off
 *   (100 ms doubling to 5 s) after a failed claim, logging each failure;
 * - when stopping: claims nothing more, releases the prefetched messages,
 *   waits for the running handlers and applies their outcomes (three
 *   attempts; after that their leases run out and they are delivered
 *   again); a message whose handler throws once the listener is stopping
 *   (its worker shut down under it) is released like a prefetched one
 *   (since 0.4.0), for another worker at once.
 *
 * @param engine The storage side.
 * @param handler The queue user's handler.
 * @param options Concurrency, prefetch, timings, log name and signal.
 * @returns Resolves once the listener has stopped and its handlers finished.
 * @throws {RangeError} When `options.batchSize` is not a positive integer.
 * @since 0.2.0
 */
export async function runLeaseListener<M extends LeasedMessage>(
  engine: LeaseEngine<M>,
  handler: MessageQueueHandler,
  options: LeaseListenerOptions,
): Promise<void> {
  const { concurrency, heartbeatMs, pollMs, handBackDelayMs, queueName, signal } = options;
  // A handler filling runs of `batchSize` gets a run's worth per claim.
  const batchSize = listenBatchSize(options);
  const prefetch = batchSize === undefined
    ? options.prefetch
    : Math.max(options.prefetch, batchSize);
  const ackDelayMs = options.ackDelayMs ?? DEFAULT_ACK_DELAY_MS;
  const stallReleaseMs = options.stallReleaseMs ?? DEFAULT_STALL_RELEASE_MS;
  const logger = options.logger ?? getLogger(["fedwork", "queue"]);
  const running = new Set<Delivery<M>>();
  /** How many of `running` gave their slot up (`yieldSlot()`). */
  let yielded = 0;
  /** How many handlers hold a slot. */
  const busy = () => running.size - yielded;
  /** Prefetched messages, in hand-out order. */
  const buffer: M[] = [];
  let acks: M[] = [];
  let handBacks: M[] = [];
  /** Messages whose handlers threw while stopping: released at once. */
  const releases: M[] = [];
  /** Outcomes sent with the claim in flight (still ours until it commits). */
  let sending: readonly M[] = [];
  /** When the oldest outcome in `acks`/`handBacks` was recorded. */
  let pendingSince = Infinity;
  const maxPrefetch = Math.max(prefetch, options.maxPrefetch ?? prefetch);
  /** The prefetch now: `prefetch`, doubled while a backlog starves the slots. */
  let currentPrefetch = prefetch;
  /** Whether the last claim brought all it asked for: a backlog, likely. */
  let lastClaimFull = false;
  /** When the last claim came back, on the `performance.now()` clock. */
  let lastClaimAt = -Infinity;
  /** When a handler last started or finished, on the same clock. */
  let lastRunChangeAt = -Infinity;
  /**
   * Set when the prefetched messages were handed back because every slot
   * stayed busy: claim only for free slots until a handler finishes.
   */
  let prefetchHeldBack = false;
  /**
   * A slot ran out of work although the last claim came back full: the
   * handlers outrun the round trips, so claim further ahead (once per full
   * claim).
   */
  const growPrefetch = () => {
    if (prefetch > 0) currentPrefetch = Math.min(maxPrefetch, currentPrefetch * 2);
    lastClaimFull = false;
  };
  // How many free places in `concurrency + prefetch` make a claim worth
  // its round trip: half of them, so that one round trip refills and
  // acknowledges many.
  const refillAtFor = () => Math.max(1, Math.ceil((concurrency + currentPrefetch) / 2));
  /** How many messages a claim may take now: the free places in `concurrency + prefetch`. */
  const room = () =>
    concurrency + (prefetchHeldBack ? 0 : currentPrefetch) - busy() - buffer.length;
  /**
   * When the prefetched messages are due to be handed back (every slot
   * busy, none finishing), or `Infinity` when they are not held so.
   */
  const stallDeadline = () =>
    buffer.length > 0 && busy() >= concurrency ? lastRunChangeAt + stallReleaseMs : Infinity;
  /** Whether a slot is free with nothing prefetched to run in it. */
  const starving = () => busy() + buffer.length < concurrency;
  let closed = false;
  const stopped = () => closed || signal?.aborted === true;
  /** Whether the loop sleeps until the deadline of the outcomes pending. */
  let sleepCoversOutcomes = false;

  let woken = false;
  let wakeUp: (() => void) | undefined;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  /** Sleeps `ms` or until woken; `onlyStop`: only stopping cuts it short. */
  const sleep = (ms: number, onlyStop = false): Promise<void> => {
    if ((woken && !onlyStop) || stopped()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = Number.isFinite(ms)
        ? setTimeout(done, Math.max(0, Math.min(ms, 2 ** 31 - 1)))
        : undefined;
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = () => {
        if (onlyStop && !stopped()) return;
        done();
      };
    });
  };

  /**
   * `answer`, or `0` as soon as the listener is woken (a notification, a
   * finished handler, a stop): it then claims again at once, without
   * waiting for a wait it would not sleep anyway.
   */
  const answerUnlessWoken = (answer: Promise<number | undefined>): Promise<number | undefined> => {
    if (woken || stopped()) {
      answer.catch(() => {});
      return Promise.resolve(0);
    }
    return new Promise((resolve, reject) => {
      const woke = () => {
        wakeUp = undefined;
        resolve(0);
      };
      wakeUp = woke;
      // A late answer must not unhook a later sleep's wake-up.
      const unhook = () => {
        if (wakeUp === woke) wakeUp = undefined;
      };
      answer.then((value) => {
        unhook();
        resolve(value);
      }, (error) => {
        unhook();
        reject(error);
      });
    });
  };

  /** Every message whose lease this listener still holds. */
  const held = (): M[] => {
    const messages: M[] = [];
    for (const delivery of running) {
      if (delivery.leased) messages.push(delivery.message);
    }
    return messages.concat(buffer);
  };

  const heartbeat = setInterval(() => {
    const messages = held().concat(acks, handBacks, releases, sending);
    if (messages.length === 0) return;
    engine.extendLeases(messages).catch((error) => {
      logger.warn(
        "Failed to extend the leases of {count} messages of {queue}; they are handed out " +
          "again if their leases run out: {error}",
        { count: messages.length, queue: queueName, error },
      );
    });
  }, heartbeatMs);

  /**
   * Whether a slot that just freed (a finished handler, or one given up)
   * left the loop something to do: stop, run a slot with nothing to run,
   * or refill.
   */
  const loopHasWork = () => stopped() || starving() || room() >= refillAtFor();

  /** Takes a yielded slot back (see `yieldSlot()`). */
  const takeSlotBack = (delivery: Delivery<M>) => {
    if (delivery.yielded !== true) return;
    delivery.yielded = false;
    yielded--;
  };
  const redeliveryFor = (delivery: Delivery<M>): MessageRedelivery => ({
    deliveryCount: delivery.message.deliveryCount,
    yieldSlot(): () => void {
      if (delivery.settled || delivery.yielded === true || yielded >= MAX_YIELDED_SLOTS) {
        return () => {};
      }
      delivery.yielded = true;
      yielded++;
      lastRunChangeAt = performance.now();
      // The free slot takes a prefetched message; the loop is woken only
      // when that left it something to do, as after a finished handler: a
      // handleMany item yields its slot on every message it collects.
      pump();
      if (loopHasWork()) wake();
      return () => takeSlotBack(delivery);
    },
    redeliver(payload: unknown, redeliveryOptions: MessageRedeliveryOptions): Promise<void> {
      const id = delivery.message.id;
      try {
        if (delivery.redelivering !== undefined) {
          throw new TypeError(
            `redeliver() was already called for message ${id} of ${queueName}; ` +
              "call it at most once per delivery.",
          );
        }
        if (delivery.settled) {
          throw new TypeError(
            `redeliver() was called after the handler of message ${id} of ${queueName} ` +
              "had settled; call it (and await it) before the handler returns.",
          );
        }
        const delayMs = durationToMilliseconds(redeliveryOptions?.delay, "delay");
        const storing = Promise.resolve().then(() =>
          engine.redeliver(delivery.message, payload, delayMs)
        );
        delivery.redelivering = storing.then(() => {
          delivery.leased = false;
          return true;
        }, () => false);
        return storing;
      } catch (error) {
        return Promise.reject(error);
      }
    },
  });

  const settle = (delivery: Delivery<M>, failure: { error: unknown } | undefined) => {
    running.delete(delivery);
    if (pendingSince === Infinity) pendingSince = performance.now();
    const messageId = delivery.message.id;
    if (delivery.redelivering === undefined && failure == null) {
      acks.push(delivery.message);
    } else if (delivery.redelivering !== undefined && failure == null) {
      // Only reached when the redelivery failed (see run()).
      handBacks.push(delivery.message);
      logger.warn(
        "The handler of message {messageId} of {queue} returned although its redelivery " +
          "failed; the message will be handed out again in {retryMs} ms.",
        { messageId, queue: queueName, retryMs: handBackDelayMs },
      );
    } else if (stopped()) {
      // Stopping: the handler most likely ended because its worker shut
      // down under it, not by a fault of the message's, so another worker
      // may have it at once, with this hand-out not counted.
      releases.push(delivery.message);
      logger.info(
        "The handler of message {messageId} of {queue} ended while the listener stopped; " +
          "the message is released for another worker.",
        { messageId, queue: queueName },
      );
    } else {
      handBacks.push(delivery.message);
      logger.error(
        "A handler failed on message {messageId} of {queue}; the message will be handed " +
          "out again in {retryMs} ms: {error}",
        { messageId, queue: queueName, retryMs: handBackDelayMs, error: failure!.error },
      );
    }
  };

  const run = async (delivery: Delivery<M>): Promise<void> => {
    // Yield first so that the caller has recorded the delivery before it
    // can settle, even when the handler throws synchronously.
    await Promise.resolve();
    let payload: unknown;
    try {
      payload = engine.decode(delivery.message);
    } catch (error) {
      logger.error(
        "Dropping message {messageId} of {queue}: it cannot be decoded: {error}",
        { messageId: delivery.message.id, queue: queueName, error },
      );
      delivery.settled = true;
      running.delete(delivery);
      if (pendingSince === Infinity) pendingSince = performance.now();
      acks.push(delivery.message);
      return;
    }
    let failure: { error: unknown } | undefined;
    try {
      await handler(payload, redeliveryFor(delivery));
    } catch (error) {
      failure = { error };
    }
    delivery.settled = true;
    takeSlotBack(delivery);
    // A handler may return without awaiting its redeliver() call.
    const stored = delivery.redelivering === undefined ? undefined : await delivery.redelivering;
    if (stored === true) {
      running.delete(delivery);
      if (failure != null) {
        logger.error(
          "A handler failed on message {messageId} of {queue} after redelivering it; the " +
            "new version stays queued: {error}",
          { messageId: delivery.message.id, queue: queueName, error: failure.error },
        );
      }
      return;
    }
    settle(delivery, failure);
  };

  /** Starts prefetched messages while handler slots are free. */
  const pump = () => {
    while (busy() < concurrency && buffer.length > 0 && !stopped()) {
      const delivery: Delivery<M> = {
        message: buffer.shift()!,
        leased: true,
        settled: false,
      };
      running.add(delivery);
      lastRunChangeAt = performance.now();
      // then() with the same callback twice rather than finally(), which
      // makes two more promises per message; run() never rejects anyway.
      void run(delivery).then(afterRun, afterRun);
    }
  };
  /**
   * A finished handler's slot takes the next message, and the loop is woken
   * only when that gave it something to do: a free slot with nothing to
   * run, room for a refill, outcomes its sleep has no deadline for, or a
   * stop.  Waking it after every message cost a promise and a timer per
   * message while it had nothing to do but sleep again.  Made once, not per
   * message.
   */
  const afterRun = () => {
    lastRunChangeAt = performance.now();
    prefetchHeldBack = false;
    pump();
    if (
      loopHasWork() || (!sleepCoversOutcomes && acks.length + handBacks.length > 0)
    ) {
      wake();
    }
  };

  /**
   * Hands the prefetched messages back: every slot stayed busy for
   * `stallReleaseMs`, so they would only wait behind long handlers while
   * other listeners could run them.
   */
  const handBackPrefetched = async () => {
    const released = buffer.splice(0);
    prefetchHeldBack = true;
    currentPrefetch = prefetch;
    try {
      await engine.release(released);
      logger.debug(
        "Handed back {count} prefetched messages of {queue}: every handler slot stayed busy.",
        { count: released.length, queue: queueName },
      );
    } catch (error) {
      if (error instanceof QueueClosedError) return;
      logger.warn(
        "Failed to hand back {count} prefetched messages of {queue}; they are handed out " +
          "again when their leases run out: {error}",
        { count: released.length, queue: queueName, error },
      );
    }
  };

  const onAbort = () => wake();
  signal?.addEventListener("abort", onAbort);
  let unsubscribe: (() => void) | undefined;
  try {
    unsubscribe = engine.subscribe(wake);
    let failures = 0;
    while (!stopped()) {
      woken = false;
      if (performance.now() >= stallDeadline()) {
        await handBackPrefetched();
        continue;
      }
      const starved = starving();
      if (starved && lastClaimFull) growPrefetch();
      let refillAt = refillAtFor();
      let want = room();
      if (
        lastClaimFull && want >= refillAt &&
        performance.now() - lastClaimAt < QUICK_TURNOVER_MS
      ) {
        // The prefetched messages went this quickly: claim further ahead.
        growPrefetch();
        refillAt = refillAtFor();
        want = room();
      }
      // A round trip is due when a free slot has nothing to run, or half of
      // `concurrency + prefetch` can be claimed (so that one round trip
      // refills and acknowledges many), or outcomes have waited
      // `ackDelayMs` (so that slow handlers do not hold keys for long).
      const pending = acks.length + handBacks.length > 0;
      const refill = want >= refillAt;
      const overdue = pending && performance.now() - pendingSince >= ackDelayMs;
      if (!starved && !refill && !overdue) {
        const stallAt = stallDeadline();
        // A finishing handler wakes us when there is something to do (see
        // afterRun); so does the acknowledgement deadline, and so does the
        // time to hand the prefetched messages back.
        sleepCoversOutcomes = pending;
        const untilOutcomes = pending ? pendingSince + ackDelayMs - performance.now() : pollMs;
        await sleep(Math.min(untilOutcomes, stallAt - performance.now()));
        sleepCoversOutcomes = false;
        continue;
      }
      const count = Math.max(0, want);
      const acking = acks;
      const handingBack = handBacks;
      acks = [];
      handBacks = [];
      pendingSince = Infinity;
      sending = acking.concat(handingBack);
      lastClaimFull = false;
      let result: LeaseClaimResult<M>;
      try {
        result = await engine.claim({ count, acks: acking, handBacks: handingBack, held: held() });
      } catch (error) {
        acks = acking.concat(acks);
        handBacks = handingBack.concat(handBacks);
        if (acks.length + handBacks.length > 0) pendingSince = performance.now();
        if (error instanceof QueueClosedError) {
          closed = true;
          break;
        }
        failures++;
        const retryMs = Math.min(FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 20), MAX_RETRY_MS);
        logger.error(
          "Failed to claim messages from {queue} (attempt {attempt}); retrying in " +
            "{retryMs} ms: {error}",
          { queue: queueName, attempt: failures, retryMs, error },
        );
        // Wait out the back-off even when enqueues wake us, so that a
        // broken engine is not hammered once per enqueue.
        await sleep(retryMs, true);
        continue;
      } finally {
        sending = [];
      }
      if (failures > 0) {
        logger.info("Claiming messages from {queue} works again.", { queue: queueName });
        failures = 0;
      }
      lastClaimAt = performance.now();
      // A slot ran out of work while the claim was in flight.
      const ranDry = buffer.length === 0 && busy() < concurrency;
      for (const message of result.messages) buffer.push(message);
      if (count > 0) {
        lastClaimFull = result.messages.length >= count;
        if (!lastClaimFull) {
          // No backlog (any more): hold no more than `prefetch` from others.
          currentPrefetch = prefetch;
        } else if (ranDry) {
          growPrefetch();
        }
      }
      pump();
      if (count > 0 && result.messages.length < count) {
        let wakeInMs = result.waitMs;
        if (result.nextWake != null) {
          try {
            wakeInMs = await answerUnlessWoken(result.nextWake());
          } catch (error) {
            if (error instanceof QueueClosedError) {
              closed = true;
              break;
            }
            logger.warn(
              "Failed to work out how long {queue} may sleep; claiming again in {retryMs} " +
                "ms: {error}",
              { queue: queueName, retryMs: FIRST_RETRY_MS, error },
            );
            wakeInMs = FIRST_RETRY_MS;
          }
        }
        const waitMs = wakeInMs == null ? pollMs : Math.min(pollMs, wakeInMs);
        await sleep(Math.min(waitMs, stallDeadline() - performance.now()));
      }
    }
    // Stopping: let other workers have the prefetched messages at once.
    if (buffer.length > 0) {
      const released = buffer.splice(0);
      try {
        await engine.release(released);
      } catch (error) {
        if (!(error instanceof QueueClosedError)) {
          logger.warn(
            "Failed to release {count} prefetched messages of {queue}; they are handed out " +
              "again when their leases run out: {error}",
            { count: released.length, queue: queueName, error },
          );
        }
      }
    }
    while (running.size > 0) {
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        if (running.size === 0) resolve();
      });
      wakeUp = undefined;
    }
    if (releases.length > 0) {
      try {
        await engine.release(releases);
      } catch (error) {
        // Handed back instead, by the final round trip: they come back
        // after the hand-back delay, or after their leases.
        handBacks = handBacks.concat(releases);
        if (!(error instanceof QueueClosedError)) {
          logger.warn(
            "Failed to release {count} messages of {queue} whose handlers ended while it " +
              "stopped; they are handed back instead: {error}",
            { count: releases.length, queue: queueName, error },
          );
        }
      }
    }
    await flushOnStop(engine, acks, handBacks, queueName, logger);
  } finally {
    clearInterval(heartbeat);
    unsubscribe?.();
    signal?.removeEventListener("abort", onAbort);
    try {
      await engine.close?.();
    } catch (error) {
      logger.debug("Closing the listener of {queue} failed: {error}", {
        queue: queueName,
        error,
      });
    }
  }
}

async function flushOnStop<M extends LeasedMessage>(
  engine: LeaseEngine<M>,
  acks: readonly M[],
  handBacks: readonly M[],
  queueName: string,
  logger: Logger,
): Promise<void> {
  if (acks.length === 0 && handBacks.length === 0) return;
  for (let attempt = 1;; attempt++) {
    try {
      await engine.claim({ count: 0, acks, handBacks, held: [] });
      return;
    } catch (error) {
      if (attempt >= FINAL_FLUSH_ATTEMPTS || error instanceof QueueClosedError) {
        // The leases run out and the messages are handed out again:
        // delivered twice, never lost.
        logger.error(
          "Failed to acknowledge {acks} and hand back {handBacks} messages of {queue} when " +
            "stopping; they will be handed out again after their leases: {error}",
          { acks: acks.length, handBacks: handBacks.length, queue: queueName, error },
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_MS * 2 ** (attempt - 1)));
    }
  }
}
