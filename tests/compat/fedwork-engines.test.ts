// Fedwork's engines under a Fedify app: a federation made by Fedify's
// createFederation() with @fedwork/sqlite, @fedwork/redis or
// @fedwork/postgres as its queue and key–value store delivers an activity
// through its outbox queue to a loopback inbox, and still delivers it when
// the worker that took it is SIGKILLed mid-delivery.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, deferred, test, within } from "@fedify/fixture";
import { createFedifyApp, sendNote } from "./testdata/fedify-app.ts";
import { FEDWORK_ENGINES, type FedworkEngine } from "./testdata/fedwork-engines.ts";
import { type Delivery, startInbox } from "./testdata/inbox.ts";
import { createNamespace } from "./testdata/services.ts";

const LEASE_MS = 1_500;
// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;

/** Checks that `delivery` is the signed `Create` whose id is `activityId`. */
function assertDelivered(delivery: Delivery, activityId: string): void {
  assertEquals(delivery.path, "/inbox");
  const activity = JSON.parse(delivery.body) as { id?: string; type?: string };
  assertEquals(activity.type, "Create");
  assertEquals(activity.id, activityId);
  assert(
    delivery.headers.signature != null || delivery.headers["signature-input"] != null,
    "The delivery is not signed.",
  );
}

/** The command that runs the worker script on the runtime running this test. */
function workerCommand(args: string[]): [string, string[]] {
  const script = fileURLToPath(new URL("./testdata/fedify-worker.ts", import.meta.url));
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  if (deno != null) return [deno.execPath(), ["run", "-A", script, ...args]];
  return [process.execPath, [script, ...args]];
}

function startWorker(engine: FedworkEngine, namespace: string) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // node:test marks the processes it spawns; a child must run normally.
    if (value !== undefined && key !== "NODE_TEST_CONTEXT") env[key] = value;
  }
  const [command, args] = workerCommand([engine.name, namespace, String(LEASE_MS)]);
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => output += chunk);
  child.stderr!.on("data", (chunk: Buffer) => output += chunk);
  const exited = deferred<string>();
  child.on("exit", (code, signal) => exited.resolve(`exited (code ${code}, signal ${signal})`));
  child.on("error", (error) => exited.resolve(`failed to start: ${error}`));
  return { child, exited: exited.promise, output: () => output };
}

for (const engine of FEDWORK_ENGINES) {
  test(`A Fedify federation on ${engine.packageName} delivers through its outbox queue`, async () => {
    const namespace = createNamespace();
    const inbox = await startInbox();
    const instance = engine.open(namespace, LEASE_MS);
    const controller = new AbortController();
    let workers: Promise<void> | undefined;
    try {
      const federation = createFedifyApp(instance);
      const activityId = await sendNote(federation, inbox.url);
      workers = federation.startQueue(undefined, { signal: controller.signal });
      assertDelivered(await within(inbox.accepted, "the activity to be delivered"), activityId);
    } finally {
      controller.abort();
      await within(workers ?? Promise.resolve(), "the workers to stop").catch(() => {});
      await instance.close();
      await inbox.close();
      await engine.cleanup(namespace);
    }
  });

  test(
    `A Fedify federation on ${engine.packageName} delivers an activity whose worker was SIGKILLed`,
    async () => {
      const namespace = createNamespace();
      const inbox = await startInbox({ holdFirst: true });
      const instance = engine.open(namespace, LEASE_MS);
      const controller = new AbortController();
      let workers: Promise<void> | undefined;
      let worker: ReturnType<typeof startWorker> | undefined;
      try {
        const federation = createFedifyApp(instance);
        // This process only enqueues; the worker process takes the delivery
        // and hangs on the inbox, which never answers it.
        const activityId = await sendNote(federation, inbox.url);
        worker = startWorker(engine, namespace);
        const started = await within(
          Promise.race([
            inbox.firstRequest.then((delivery) => ({ delivery })),
            worker.exited.then((reason) => ({ reason })),
          ]),
          "the worker process to deliver",
          CHILD_START_TIMEOUT_MS,
        );
        if ("reason" in started) {
          throw new Error(`The worker ${started.reason} first:\n${worker.output()}`);
        }
        assertDelivered(started.delivery, activityId);
        worker.child.kill("SIGKILL");
        await within(worker.exited, "the worker to die");
        // The killed worker never acknowledged the message: once its lease
        // runs out, this process's worker takes it and delivers it again.
        workers = federation.startQueue(undefined, { signal: controller.signal });
        const delivered = await within(inbox.accepted, "the delivery to be retried");
        assertDelivered(delivered, activityId);
      } finally {
        if (worker != null && worker.child.exitCode === null && worker.child.signalCode === null) {
          worker.child.kill("SIGKILL");
        }
        controller.abort();
        await within(workers ?? Promise.resolve(), "the workers to stop").catch(() => {});
        await instance.close();
        await inbox.close();
        await engine.cleanup(namespace);
      }
    },
  );
}
