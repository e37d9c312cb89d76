// Runs the test Worker (worker.ts, bundled with `deno bundle` as a Worker
// would be deployed) in Miniflare: Cloudflare's workerd with Workers KV, D1
// and Cloudflare Queues simulated locally.  The bundle is made once per test
// file.  startWorker() gives a test its own Miniflare, whose KV namespace
// and queue start empty; sharedWorker() lends the key–value suites, which
// keep each test's keys apart by prefix or table, one Miniflare in turn.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { Miniflare } from "miniflare";
import {
  bundleWorker as bundleWorkerModule,
  WORKSPACE_ROOT,
  workspaceBinary,
} from "@fedify/fixture/workerd";

// Miniflare pins the workerd release it was built with (2026-07-30 here),
// older than the `workerd` package the tests install.  @fedwork/core loads
// in it (nothing is made at a module's top level), but in our runs the
// retries this suite sends with a delay never came back through that
// release's queue simulation.  Run the newer binary, as Cloudflare runs its
// current release.
process.env.MINIFLARE_WORKERD_PATH ??= workspaceBinary("workerd");

/** The name of the test queue. */
const QUEUE_NAME = "fedwork-tests";

let bundle: Promise<string> | undefined;

/** The test Worker as one ES module, bundled on first use. */
function bundleWorker(): Promise<string> {
  bundle ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "fedwork-cfworkers-"));
    try {
      const output = join(dir, "worker.js");
      await bundleWorkerModule(join(import.meta.dirname!, "worker.ts"), output);
      return await readFile(output, "utf8");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return bundle;
}

/** A running test Worker. */
export interface TestWorker extends AsyncDisposable {
  /** Sends a request to the Worker's fetch() handler. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Sends a JSON body with POST and returns the JSON answer. */
  post<T>(path: string, body: unknown): Promise<T>;
  /** Gets a JSON answer. */
  get<T>(path: string): Promise<T>;
  /** The Miniflare instance, for its bindings. */
  readonly miniflare: Miniflare;
}

/** Options for {@link startWorker}. */
export interface StartWorkerOptions {
  /** The federation's key–value store: Workers KV (the default) or D1. */
  readonly store?: "kv" | "d1";
}

/** Starts the test Worker in a fresh Miniflare. */
export async function startWorker(options: StartWorkerOptions = {}): Promise<TestWorker> {
  const code = await bundleWorker();
  const miniflare = new Miniflare({
    modules: [{ type: "ESModule", path: join(WORKSPACE_ROOT, "worker.js"), contents: code }],
    compatibilityDate: "2025-09-01",
    compatibilityFlags: ["nodejs_compat"],
    kvNamespaces: ["KV"],
    d1Databases: ["DB"],
    bindings: { FEDERATION_STORE: options.store ?? "kv" },
    queueProducers: { QUEUE: { queueName: QUEUE_NAME } },
    queueConsumers: {
      // Batches leave at once rather than after Cloudflare's default five
      // seconds; max_retries is generous so that Cloudflare's own retries
      // never run out in a test.
      [QUEUE_NAME]: { maxBatchSize: 10, maxBatchTimeout: 0, maxRetries: 10 },
    },
  });
  await miniflare.ready;
  const fetchWorker = async (path: string, init?: RequestInit): Promise<Response> =>
    await miniflare.dispatchFetch(
      `http://localhost${path}`,
      init as Parameters<Miniflare["dispatchFetch"]>[1],
    ) as unknown as Response;
  const json = async <T>(response: Response): Promise<T> => {
    const text = await response.text();
    if (!response.ok) throw new Error(`The test Worker answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    miniflare,
    fetch: fetchWorker,
    post: async <T>(path: string, body: unknown) =>
      await json<T>(
        await fetchWorker(path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      ),
    get: async <T>(path: string) => await json<T>(await fetchWorker(path)),
    [Symbol.asyncDispose]: () => miniflare.dispose(),
  };
}

let shared:
  | { worker: Promise<TestWorker>; users: number; timer?: ReturnType<typeof setTimeout> }
  | undefined;

// How long an unused shared Miniflare waits for the next test before it is
// disposed of.  Miniflare also stops workerd when the process exits.
const SHARED_IDLE_MS = 2_000;

/**
 * A test Worker shared by the tests of a file that need no fresh state:
 * disposing of it gives it back, and it stops once unused for a while.
 */
export async function sharedWorker(): Promise<TestWorker> {
  if (shared == null) {
    const worker = startWorker();
    shared = { worker, users: 0 };
    // A failed start is not kept for the next test.
    worker.catch(() => shared = undefined);
  }
  const entry = shared;
  clearTimeout(entry.timer);
  entry.users++;
  const worker = await entry.worker;
  let returned = false;
  return {
    ...worker,
    [Symbol.asyncDispose]: () => {
      if (returned) return Promise.resolve();
      returned = true;
      if (--entry.users === 0) {
        entry.timer = setTimeout(() => {
          if (shared === entry) shared = undefined;
          void worker[Symbol.asyncDispose]();
        }, SHARED_IDLE_MS);
        // Deno's and Bun's runners, and node's, must not wait for it.
        (entry.timer as { unref?: () => void }).unref?.();
      }
      return Promise.resolve();
    },
  };
}
