// The federation poison test: a web federation in this process receives
// activities in its shared inbox and enqueues them; the worker federation
// runs in child processes (poison-federation-worker.ts), and an activity
// whose listener kills the worker is quarantined after maxDeliveries.
import { MemoryKvStore } from "@fedwork/core";
import { startSuiteWorker } from "./suite-worker.ts";
import { definePoisonApp } from "./poison-federation-app.ts";
import { EVENT_TIMEOUT_MS, type QueueTestRun } from "./queue-harness.ts";
import { assertEquals, fail } from "./test-runner.ts";
import { within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
const MAX_DELIVERIES = 2;

function createJson(id: string, content: string): string {
  return JSON.stringify({
    "@context": "https://www.w3.org/ns/activitystreams",
    id,
    type: "Create",
    actor: "https://remote.example/users/bob",
    object: { type: "Note", id: `${id}/note`, content },
  });
}

interface Worker {
  readonly lines: string[];
  /** Resolves with the first line matching, or rejects when the child exits first. */
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  readonly exited: Promise<string>;
  stop(): Promise<void>;
}

function startWorker(run: QueueTestRun, factoryModule: string): Worker {
  const worker = startSuiteWorker(
    new URL("./poison-federation-worker.ts", import.meta.url),
    [factoryModule, run.namespace, String(run.leaseMs), String(MAX_DELIVERIES)],
  );
  return {
    lines: worker.lines,
    exited: worker.exited.then(({ code, signal }) => `exited (code ${code}, signal ${signal})`),
    waitFor: worker.waitFor,
    stop: () => worker.kill(EVENT_TIMEOUT_MS),
  };
}

/**
 * Runs the federation poison test on one queue backend: POSTs a Create to
 * the web federation's shared inbox, whose listener on the worker kills
 * the worker process; restarts workers until one quarantines it (the
 * failed event with reason `poison`, after `maxDeliveries` deaths); then
 * POSTs a normal Create, which that worker records.
 * @param run The test's queues and namespace.
 * @param factoryModule The backend's factory module URL.
 */
export async function runFederationPoisonTest(
  run: QueueTestRun,
  factoryModule: string,
): Promise<void> {
  const web = await definePoisonApp(() => {}).build({
    kv: new MemoryKvStore(),
    queue: await run.createQueue(),
    manuallyStartQueue: true,
    skipSignatureVerification: true,
  });
  const post = async (id: string, content: string) => {
    const response = await web.fetch(
      new Request("https://web.example/inbox", {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body: createJson(id, content),
      }),
      { contextData: undefined },
    );
    await response.body?.cancel();
    if (response.status !== 202) fail(`The web inbox answered ${response.status}.`);
  };
  const poisonId = `https://remote.example/creates/${run.namespace}-poison`;
  const normalId = `https://remote.example/creates/${run.namespace}-normal`;
  await post(poisonId, "poison");
  let deaths = 0;
  // A killed worker's message comes back after its lease.
  const perChildMs = CHILD_START_TIMEOUT_MS + run.leaseMs * 5;
  for (let n = 0; n < MAX_DELIVERIES + 3; n++) {
    const worker = startWorker(run, factoryModule);
    try {
      const line = await worker.waitFor(
        /^(POISON|QUARANTINED) /,
        "the worker to be handed the poison activity",
        perChildMs,
      ).catch((error) => {
        if (worker.lines.some((l) => l.startsWith("POISON "))) return "POISON";
        throw error;
      });
      if (line.startsWith("POISON")) {
        await within(worker.exited, "the poisoned worker to die", EVENT_TIMEOUT_MS);
        deaths++;
        continue;
      }
      assertEquals(line.split(" ")[2], String(MAX_DELIVERIES + 1), `quarantined at: ${line}`);
      assertEquals(deaths, MAX_DELIVERIES, "workers killed before the quarantine");
      await post(normalId, "hello");
      await worker.waitFor(
        new RegExp(`^RECORDED ${normalId.replaceAll(".", "\\.")}$`),
        "the worker to record the normal activity",
        EVENT_TIMEOUT_MS + run.leaseMs * 3,
      );
      return;
    } finally {
      await worker.stop();
    }
  }
  fail(`The poison activity was not quarantined after ${deaths} killed workers.`);
}
