// What a test running inside workerd reaches of its Worker: the bindings
// (the `env` of the fetch and queue handlers), and a way to answer the
// requests and queue batches that reach the Worker while the test runs.
//
// The harness Worker (worker.ts) stores its `env` here on every event,
// before any test body runs; tests call workerEnv().  This works on every
// workerd release and keeps the bundle free of `cloudflare:workers`, which
// neither Deno, Node.js nor the type checkers know.
import type {
  WorkersD1Database,
  WorkersKvNamespace,
  WorkersMessageBatch,
  WorkersQueue,
} from "@fedwork/cfworkers";

/** The bindings the runner (scripts/workerd-tests.ts) gives the Worker. */
export interface WorkerEnv {
  /** A Workers KV namespace, empty when the run starts. */
  readonly KV: WorkersKvNamespace;
  /** A D1 database, empty when the run starts. */
  readonly DB: WorkersD1Database;
  /** The producer of a Cloudflare queue whose consumer is this Worker. */
  readonly QUEUE: WorkersQueue;
  /** This Worker's own origin, e.g. `http://127.0.0.1:43210`. */
  readonly WORKER_ORIGIN: string;
  /** The origin of the Fedwork server the runner started on Node.js. */
  readonly NODE_ORIGIN: string;
}

let env: WorkerEnv | undefined;

/** Called by the harness Worker with each event's `env`. */
export function setWorkerEnv(value: WorkerEnv): void {
  env = value;
}

/**
 * The Worker's bindings.
 * @throws {Error} Outside workerd's harness, where there are none.
 */
export function workerEnv(): WorkerEnv {
  if (env == null) {
    throw new Error("workerEnv() is only available in tests run by scripts/workerd-tests.ts.");
  }
  return env;
}

type FetchHandler = (request: Request) => Promise<Response>;
type QueueHandler = (batch: WorkersMessageBatch) => Promise<void>;

let fetchHandler: FetchHandler | undefined;
let queueHandler: QueueHandler | undefined;

/**
 * Answers the Worker's requests (all but the harness's own `/__…` paths)
 * with `handler` until the returned object is disposed of.  Tests run one
 * at a time, so one handler at a time is enough.
 */
export function serveRequests(handler: FetchHandler): Disposable {
  fetchHandler = handler;
  return { [Symbol.dispose]: () => void (fetchHandler = undefined) };
}

/** Gives the Worker's queue batches to `handler` until disposed of. */
export function consumeQueue(handler: QueueHandler): Disposable {
  queueHandler = handler;
  return { [Symbol.dispose]: () => void (queueHandler = undefined) };
}

/** Passes a request to the test's handler; 404 when no test serves. */
export function dispatchRequest(request: Request): Promise<Response> {
  if (fetchHandler == null) {
    return Promise.resolve(new Response("No test serves requests now.", { status: 404 }));
  }
  return fetchHandler(request);
}

/**
 * Passes a batch to the test's handler.  With none, the messages are
 * acknowledged: they belong to a test that has ended.
 */
export async function dispatchBatch(batch: WorkersMessageBatch): Promise<void> {
  if (queueHandler == null) {
    for (const message of batch.messages) message.ack();
    return;
  }
  await queueHandler(batch);
}
