// The host policy across worker processes: two real worker processes
// (host-limits-worker.ts) on the backend's engines deliver to loopback
// servers standing for remote hosts (remote-host.ts), and this process
// sends through its own federation, which starts no worker.  Per-host
// concurrency holds across both workers, a per-host rate holds, a blocked
// host receives nothing, and a Retry-After one worker was answered holds
// the other worker's deliveries to that host too.
import { Create, Note } from "@fedify/vocab";
import type { Federation, HostPolicyOptions } from "@fedwork/core";
import { startSuiteWorker, stopByStdin } from "./suite-worker.ts";
import { buildHostLimitsApp } from "./host-limits-app.ts";
import { createTestNamespace } from "./namespace.ts";
import { type RemoteHost, startRemoteHost } from "./remote-host.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { waitUntil } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; these only bound how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
const RUN_TIMEOUT_MS = 90_000;

/**
 * Options for {@link testHostLimits}.
 * @since 0.4.0
 */
export interface HostLimitsConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the worker processes import (so it must not
   * register tests), exporting `open(namespace)`, which returns a
   * {@link ShutdownBackend} (or a promise of one) whose engines share their
   * data per namespace, and optionally `cleanup(namespace)`.  Its queue
   * should run several deliveries at once per process (a `concurrency` of
   * 8, say), so that the host's limit, not the workers, is what binds.
   */
  readonly backendModule: string;
}

interface BackendModule {
  open(namespace: string): ShutdownBackend | Promise<ShutdownBackend>;
  cleanup?(namespace: string): Promise<void>;
}

interface Worker {
  readonly lines: string[];
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  stop(): Promise<void>;
  output(): string;
}

function startWorker(
  options: HostLimitsConformanceOptions,
  namespace: string,
  hostPolicy: HostPolicyOptions,
): Worker {
  const worker = startSuiteWorker(
    new URL("./host-limits-worker.ts", import.meta.url),
    [options.backendModule, namespace, JSON.stringify(hostPolicy)],
    { stdin: true, outputLines: 40 },
  );
  return {
    lines: worker.lines,
    output: worker.output,
    waitFor: worker.waitFor,
    stop: () => stopByStdin(worker, 60_000),
  };
}

/** How many lines of the workers start with `word`. */
function count(workers: readonly Worker[], word: string): number {
  return workers.reduce(
    (sum, worker) => sum + worker.lines.filter((line) => line.split(" ")[0] === word).length,
    0,
  );
}

function linesOf(workers: readonly Worker[], word: string): string[] {
  return workers.flatMap((worker) => worker.lines.filter((line) => line.split(" ")[0] === word));
}

/**
 * Runs `body` with this process's federation (sending only) and two
 * worker processes, all with `hostPolicy`.
 */
async function withWorkers(
  options: HostLimitsConformanceOptions,
  hostPolicy: HostPolicyOptions,
  body: (federation: Federation<void>, workers: readonly Worker[]) => Promise<void>,
  senderPolicy: HostPolicyOptions = hostPolicy,
): Promise<void> {
  const namespace = createTestNamespace();
  const module = await import(options.backendModule) as BackendModule;
  const backend = await module.open(namespace);
  const workers: Worker[] = [];
  try {
    const federation = await buildHostLimitsApp(backend, senderPolicy);
    workers.push(startWorker(options, namespace, hostPolicy));
    workers.push(startWorker(options, namespace, hostPolicy));
    await Promise.all(
      workers.map((worker) =>
        worker.waitFor(/^READY$/, "the worker to listen", CHILD_START_TIMEOUT_MS)
      ),
    );
    await body(federation, workers);
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
      await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
    }
    await module.cleanup?.(namespace);
  }
}

/**
 * Sends one activity to followers `from`…`to - 1` on each host, through
 * a fan-out message unless `fanout` says `"skip"` (then one delivery per
 * inbox is queued at once).
 */
async function send(
  federation: Federation<void>,
  hosts: readonly RemoteHost[],
  from: number,
  to: number,
  fanout: "auto" | "skip" = "auto",
): Promise<void> {
  const recipients = hosts.flatMap((host) =>
    Array.from({ length: to - from }, (_, i) => ({
      id: new URL(`/users/u${from + i}`, host.url),
      inboxId: host.inbox(from + i),
    }))
  );
  await federation.createContext(new URL("https://limits.example/"), undefined).sendActivity(
    { identifier: "alice" },
    recipients,
    new Create({
      id: new URL(`https://limits.example/activities/${crypto.randomUUID()}`),
      actor: new URL("https://limits.example/users/alice"),
      object: new Note({ content: "Hello" }),
    }),
    { fanout },
  );
}

async function withHosts(
  addresses: readonly string[],
  delayMs: number,
  body: (hosts: RemoteHost[]) => Promise<void>,
): Promise<void> {
  const hosts = await Promise.all(
    addresses.map((address) => startRemoteHost({ address, answer: () => ({ delayMs }) })),
  );
  try {
    await body(hosts);
  } finally {
    await Promise.all(hosts.map((host) => host.close()));
  }
}

function posts(host: RemoteHost) {
  return host.requests.filter((request) => request.method === "POST");
}

/**
 * Registers the host-policy tests, each with two worker processes on the
 * backend delivering to loopback servers: a fan-out to 50 followers on one
 * host never has more than `hostPolicy.concurrency` (4) in flight, and
 * has at least 2; `hostPolicy.rate` (2 a second) holds; a blocked host
 * receives no request; a 429 with `Retry-After: 2` one worker got holds
 * every delivery to that host for 2 s.
 * @param options The backend's name and its module.
 * @since 0.4.0
 */
export function testHostLimits(options: HostLimitsConformanceOptions): void {
  test(`${options.name}: two workers keep a 50-follower fan-out to hostPolicy.concurrency per host`, async () => {
    await withHosts(["127.0.0.1"], 150, async ([host]) => {
      await withWorkers(options, { concurrency: 4 }, async (federation, workers) => {
        await send(federation, [host], 0, 50);
        await host.waitForAnswered(50, RUN_TIMEOUT_MS);
        await waitUntil(() => count(workers, "COMPLETED") === 50, {
          what: () => `50 deliveries; ${workers.map((w) => w.output()).join("\n")}`,
          timeoutMs: RUN_TIMEOUT_MS,
        });
        // The guarantee is the upper bound.  That the limit lets deliveries
        // run side by side is shown by 2 or more in flight, not by exactly 4:
        // on a loaded machine the workers may not keep all four slots busy
        // within one 150 ms answer.
        assert(host.maxInFlight <= 4, `at most 4 deliveries in flight, saw ${host.maxInFlight}`);
        assert(host.maxInFlight >= 2, `deliveries ran side by side, saw ${host.maxInFlight}`);
        assert(posts(host).every((request) => request.signed), "every delivery is signed");
        // Both workers delivered, and the waits spent no attempt.
        assert(workers.every((worker) => worker.lines.some((l) => l.startsWith("COMPLETED"))));
        assert(linesOf(workers, "COMPLETED").every((line) => line === "COMPLETED 0"));
        assert(count(workers, "WAIT") > 0);
        assert(linesOf(workers, "WAIT").every((line) => line === "WAIT concurrency 0"));
      });
    });
  });

  test(`${options.name}: two workers hold hostPolicy.rate per host`, async () => {
    await withHosts(["127.0.0.1"], 0, async ([host]) => {
      // Two a second: starts 500 ms apart, so that what a loaded machine
      // adds to one request's way (signing, sending) stays small beside it.
      const policy = { rate: { limit: 2, period: { seconds: 1 } } };
      await withWorkers(options, policy, async (federation, workers) => {
        const sentAt = performance.now();
        await send(federation, [host], 0, 8);
        await host.waitForAnswered(8, RUN_TIMEOUT_MS);
        const times = posts(host).map((request) => request.at).sort((a, b) => a - b);
        // Each start is reserved 500 ms after the one before (the first at
        // the earliest when sent), and none starts before its time: the
        // k-th request arrives no sooner than 500·k ms after the send.  A
        // loaded machine only makes requests late, which this allows (a
        // count per second does not: late ones bunch up); without the rate,
        // all 8 arrive within a few hundred milliseconds.
        times.forEach((at, k) => {
          assert(at - sentAt >= 500 * k - 50, `request ${k} ${Math.round(at - sentAt)} ms on`);
        });
        assert(linesOf(workers, "WAIT").every((line) => line === "WAIT rate 0"));
      });
    });
  });

  test(`${options.name}: a blocked host receives no request from either worker`, async () => {
    await withHosts(["127.0.0.1", "127.0.0.2"], 0, async ([open, blocked]) => {
      // The sender does not block it, so its deliveries are queued; the
      // workers, which do, drop them.  A fan-out the workers expand leaves
      // the blocked inboxes out instead.
      await withWorkers(options, { block: ["127.0.0.2"] }, async (federation, workers) => {
        await send(federation, [open, blocked], 0, 10, "skip");
        await send(federation, [open, blocked], 10, 20);
        await open.waitForAnswered(20, RUN_TIMEOUT_MS);
        await waitUntil(
          () => count(workers, "DROPPED") === 10 && count(workers, "COMPLETED") === 20,
          {
            what: () => `10 drops, 20 deliveries; ${workers.map((w) => w.output()).join("\n")}`,
            timeoutMs: RUN_TIMEOUT_MS,
          },
        );
        assertEquals(blocked.requests.length, 0, "the blocked host saw no request");
        assert(linesOf(workers, "DROPPED").every((line) => line.includes("blocked")));
      }, {});
    });
  });

  test(`${options.name}: a Retry-After: 2 one worker got holds the host for both`, async () => {
    const host = await startRemoteHost({
      answer: (_request, index) =>
        index === 0 ? { status: 429, headers: { "Retry-After": "2" } } : {},
    });
    try {
      await withWorkers(options, {}, async (federation, workers) => {
        await send(federation, [host], 0, 1);
        // Until the worker that got the 429 has stored the host's wait (it
        // logs its WAIT after), a delivery of the next ones could start
        // before it: on a loaded machine that is well after the answer.
        await waitUntil(() => host.requests[0]?.answeredAt != null && count(workers, "WAIT") > 0, {
          what: () => `the first answer and its wait; ${workers.map((w) => w.output()).join("\n")}`,
          timeoutMs: RUN_TIMEOUT_MS,
        });
        await send(federation, [host], 1, 9);
        await waitUntil(() => count(workers, "COMPLETED") === 9, {
          what: () => `9 deliveries; ${workers.map((w) => w.output()).join("\n")}`,
          timeoutMs: RUN_TIMEOUT_MS,
        });
        const answered = host.requests[0].answeredAt!;
        const later = posts(host).slice(1);
        assertEquals(later.length, 9);
        for (const request of later) {
          assert(request.at - answered >= 2000 - 50, `a request ${request.at - answered} ms on`);
        }
        assert(linesOf(workers, "COMPLETED").every((line) => line === "COMPLETED 0"));
        assert(linesOf(workers, "WAIT").every((line) => line === "WAIT retryAfter 0"));
      });
    } finally {
      await host.close();
    }
  });
}
