// What every system under measurement implements, and the measurements the
// harness takes through it.  A driver knows how to store messages and how to
// run workers; the measurement code (measure.ts) is shared, so every system
// is timed the same way.

/** One message as the harness sees it: its sequence number. */
export type Payload = { readonly i: number };

/** Runs workers until `stop()` is called. */
export interface Workers {
  /** Stops the workers and waits until they have stopped. */
  stop(): Promise<void>;
}

/** One system (Fedwork on an engine, a peer, or a raw engine loop). */
export interface Driver {
  /**
   * Removes whatever this system stored before (its Redis database, its
   * PostgreSQL schema, its RabbitMQ queues, its file), and prepares an empty
   * store (schema migrations and the like, which are not timed).
   */
  reset(): Promise<void>;
  /** Stores `payloads` with the system's bulk API, in chunks of `chunk`. */
  enqueueBulk(payloads: readonly Payload[], chunk: number): Promise<void>;
  /** Stores one message with the system's one-at-a-time API. */
  enqueueOne(payload: Payload): Promise<void>;
  /**
   * Starts workers that run up to `concurrency` handlers at once and call
   * `handler` at the start of each.  Resolves once the workers are started.
   */
  work(concurrency: number, handler: (payload: Payload) => void): Promise<Workers>;
  /** Closes every connection the driver opened. */
  close(): Promise<void>;
}

/**
 * The size, in bytes of JSON, of the queue message a typed bench task
 * travels in: the task envelope (type, id, base URL, task name, times,
 * attempt, trace context) around the devalue-encoded `{ i }` payload.
 * Measured on this harness's task with a one-digit `i`: 238 bytes (up to
 * four more for the drains' longer sequence numbers).
 */
export const TASK_MESSAGE_BYTES = 238;

/**
 * Wraps `driver` so that every message it stores has a body of `bytes`
 * bytes of JSON: each payload gets a `pad` string of the length that makes
 * `JSON.stringify(payload)` that long (for sequence numbers up to 10⁹).
 * Handlers still get `{ i, pad }`, and read only `i`.  What a peer or a
 * raw queue costs with messages the size of a typed task's (RabbitMQ, for
 * one, handles bodies over 64 bytes markedly slower; see
 * docs/benchmarks.md).
 * @param driver The system.
 * @param bytes The body size to reach.
 */
export function withBodySize(driver: Driver, bytes: number): Driver {
  const pad = (payload: Payload): Payload => {
    const bare = JSON.stringify({ ...payload, pad: "" }).length;
    return { ...payload, pad: "x".repeat(Math.max(0, bytes - bare)) } as Payload;
  };
  return {
    ...driver,
    enqueueBulk: (payloads, chunk) => driver.enqueueBulk(payloads.map(pad), chunk),
    enqueueOne: (payload) => driver.enqueueOne(pad(payload)),
  };
}

/** Sizes of one measurement round. */
export interface Sizes {
  /** Messages stored by the bulk enqueue measurement. */
  readonly enqueue: number;
  /** Messages drained at each concurrency. */
  readonly drain: number;
  /**
   * The longest a drain is timed, in milliseconds from its first handler:
   * a system that has not handled every message by then is measured on
   * those it handled.  Keeps a full run within its time on a slow machine.
   */
  readonly drainBudgetMs: number;
  /**
   * Uncounted drains before the timed ones (each of `drain` messages, at
   * concurrency 10), repeated until this many messages were handled or
   * `warmUpBudgetMs` has passed: each trial starts a fresh process, whose
   * JIT and heap take tens of thousands of messages to settle.
   */
  readonly warmUp: number;
  /** The longest the warm-up drains go on, in milliseconds. */
  readonly warmUpBudgetMs: number;
  /** Messages sent one at a time for the pickup measurement. */
  readonly pickup: number;
  /** Messages per second sent during the pickup measurement. */
  readonly pickupRate: number;
  /** Bulk enqueue chunk size. */
  readonly chunk: number;
  /**
   * Bytes each handler hashes with SHA-256 (a few microseconds of work, the
   * same in every system), or 0 for handlers that only count.
   */
  readonly handlerWork: number;
}

/** The concurrencies drained. */
export const CONCURRENCIES = [1, 10, 50] as const;

/** What one child process measured for one system. */
export interface TrialResult {
  /** Messages per second stored by `enqueueBulk()`. */
  enqueue: number;
  /** Messages per second drained, by concurrency. */
  drain: Record<string, number>;
  /** Enqueue → handler start, milliseconds. */
  pickupP50: number;
  pickupP99: number;
  /** How many messages each measurement used. */
  sizes: Sizes;
}
