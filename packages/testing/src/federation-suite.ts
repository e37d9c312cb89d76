import { assert, assertEquals, assertInstanceOf, test } from "./test-runner.ts";
import {
  createFederationBuilder,
  type Federation,
  generateCryptoKeyPair,
  MemoryKvStore,
  type MessageQueue,
  millisecondsToDuration,
  type TaskDefinition,
} from "@fedwork/core";
import { Create, Note } from "@fedify/vocab";
import { EVENT_TIMEOUT_MS, type QueueTestRun, runQueueTest } from "./queue-harness.ts";
import type { FederationConformanceOptions } from "./types.ts";
import { deferred, within } from "./wait.ts";
import { startTestServer } from "./http-server.ts";
import { failRetryStores } from "./fault-injection.ts";
import { testHandlerTimeouts } from "./timeout-suite.ts";
import { runFederationPoisonTest } from "./poison-federation-test.ts";

const DEFAULT_LEASE_MS = 1_500;

/** The payload of the suite's task. */
interface DigestPayload {
  readonly activity: Create;
  readonly sentAt: Date;
  readonly counts: Map<string, number>;
}

/** The Standard Schema shape the suite's hand-written schema fills in. */
interface DigestSchema {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | { readonly value: DigestPayload; readonly issues?: undefined }
      | { readonly issues: readonly { message: string; path: string[] }[] };
    readonly types?: { readonly input: DigestPayload; readonly output: DigestPayload };
  };
}

// A hand-written Standard Schema keeps this public suite free of a schema
// library dependency; apps use Zod, Valibot or ArkType the same way.
const digestSchema: DigestSchema = {
  "~standard": {
    version: 1,
    vendor: "fedwork-testing",
    validate(value) {
      const payload = value as Partial<DigestPayload> | null;
      const issues: { message: string; path: string[] }[] = [];
      if (!(payload?.activity instanceof Create)) {
        issues.push({ message: "Expected a Create activity.", path: ["activity"] });
      }
      if (!(payload?.sentAt instanceof Date)) {
        issues.push({ message: "Expected a Date.", path: ["sentAt"] });
      }
      if (!(payload?.counts instanceof Map)) {
        issues.push({ message: "Expected a Map.", path: ["counts"] });
      }
      return issues.length > 0 ? { issues } : { value: payload as DigestPayload };
    },
  },
};

/** The payload of the ordering and fault tests' tasks. */
const opSchema: {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => { readonly value: { op: string } } | { readonly issues: { message: string }[] };
    readonly types?: { readonly input: { op: string }; readonly output: { op: string } };
  };
} = {
  "~standard": {
    version: 1,
    vendor: "fedwork-testing",
    validate: (value) =>
      typeof (value as { op?: unknown })?.op === "string"
        ? { value: value as { op: string } }
        : { issues: [{ message: "Expected { op: string }." }] },
  },
};

let keyPair: Promise<CryptoKeyPair> | undefined;

/** One RSA key pair for the suite's actor (generating one is slow). */
function suiteKeyPair(): Promise<CryptoKeyPair> {
  return keyPair ??= generateCryptoKeyPair();
}

/** Builds the "web" and "worker" federations of one app from one builder. */
async function buildWebAndWorker(
  run: QueueTestRun,
  define: (builder: ReturnType<typeof createFederationBuilder<void>>) => void,
  wrapWorkerQueue: (queue: MessageQueue) => MessageQueue = (queue) => queue,
): Promise<{ web: Federation<void>; worker: Federation<void> }> {
  const builder = createFederationBuilder<void>();
  // Deliveries are signed: the worker asks the key pairs dispatcher.
  builder.setActorDispatcher("/users/{identifier}", () => null)
    .setKeyPairsDispatcher(async () => [await suiteKeyPair()]);
  define(builder);
  const options = (queue: MessageQueue) => ({
    kv: new MemoryKvStore(),
    queue,
    allowPrivateAddress: true,
  });
  // The web side only enqueues; the worker side only runs the queues.  Each
  // has its own queue instance on the same namespace, as two processes would.
  const web = await builder.build({
    ...options(await run.createQueue()),
    manuallyStartQueue: true,
  });
  const worker = await builder.build({
    ...options(wrapWorkerQueue(await run.createQueue())),
    manuallyStartQueue: true,
  });
  return { web, worker };
}

function createActivity(): Create {
  return new Create({
    id: new URL("https://web.example/activities/1"),
    actor: new URL("https://web.example/users/alice"),
    object: new Note({
      id: new URL("https://web.example/notes/1"),
      content: "Hello from the conformance suite",
    }),
  });
}

/**
 * Registers end-to-end tests that run a Fedwork federation over a queue
 * backend: an outbox delivery POSTed to a real HTTP server on 127.0.0.1,
 * and a typed task whose payload holds a vocabulary object, a `Date` and a
 * `Map`, enqueued by a "web" federation and run by a "worker" federation
 * built from the same builder (two queue instances on one namespace, as in
 * a deployment with web and worker processes).
 *
 * @example
 * ```ts ignore
 * import { testFederationOverQueue } from "@fedwork/testing";
 *
 * testFederationOverQueue({
 *   name: "RedisMessageQueue",
 *   factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
 * });
 * ```
 * Since 0.2.0 it also checks that a failed task keeps its place in its
 * ordering key while it waits for its retry (with `redelivery: true`; the
 * order is not checked otherwise), and that a task whose retry cannot be
 * stored (an injected fault) is not lost: the queue hands it out again.
 * Since 0.3.0 it also checks time limits with the queue's default
 * concurrency: a task that never settles is timed out, abandoned after the
 * grace period, and the task behind it completes; a task that stops when
 * its signal aborts is retried through the queue with the reason
 * `timeout`.
 * Since 0.4.0, with `deliveryCount: true`, it runs the worker federation
 * in child processes: an inbox activity whose listener kills the worker
 * is quarantined (reason `poison`) after `maxDeliveries` dead workers, and
 * a normal activity sent after it is processed by the next worker.
 * @param options The backend's name and factory module.
 * @since 0.1.0
 */
export function testFederationOverQueue(options: FederationConformanceOptions): void {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  testHandlerTimeouts(options.name, options.factoryModule, leaseMs);

  if (options.deliveryCount ?? false) {
    test(`${options.name}: an inbox activity whose listener kills the worker process is quarantined after maxDeliveries and later activities are processed`, async () => {
      await runQueueTest(
        options.factoryModule,
        leaseMs,
        (run) => runFederationPoisonTest(run, options.factoryModule),
      );
    });
  }

  test(`${options.name}: a task retried after a failure keeps its place in its ordering key`, async () => {
    await runQueueTest(options.factoryModule, leaseMs, async (run) => {
      const order: string[] = [];
      const done = deferred();
      let noteOp!: TaskDefinition<void, { op: string }>;
      const { web, worker } = await buildWebAndWorker(run, (builder) => {
        noteOp = builder.defineTask("note-op", {
          schema: opSchema,
          retryPolicy: ({ attempts }) => attempts > 3 ? null : millisecondsToDuration(300),
          handler(ctx, { op }) {
            order.push(`${op}${ctx.task.attempt}`);
            if (op === "create" && ctx.task.attempt === 0) {
              throw new Error("Thrown on purpose by the conformance suite.");
            }
            if (op === "delete") done.resolve();
          },
        });
      });
      const controller = new AbortController();
      const working = worker.startQueue(undefined, { signal: controller.signal });
      try {
        const ctx = web.createContext(new URL("https://web.example/"), undefined);
        await ctx.enqueueTask(noteOp, { op: "create" }, { orderingKey: "note-1" });
        await ctx.enqueueTask(noteOp, { op: "delete" }, { orderingKey: "note-1" });
        await within(done.promise, () => `the delete; got ${order}`, EVENT_TIMEOUT_MS);
        if (options.redelivery) assertEquals(order, ["create0", "create1", "delete0"]);
      } finally {
        controller.abort();
        await working;
      }
    });
  });

  test(`${options.name}: a task whose retry cannot be stored is handed out again, not lost`, async () => {
    await runQueueTest(options.factoryModule, leaseMs, async (run) => {
      const attempts: number[] = [];
      const completed = deferred();
      let flaky!: TaskDefinition<void, { op: string }>;
      const { web, worker } = await buildWebAndWorker(
        run,
        (builder) => {
          flaky = builder.defineTask("flaky", {
            schema: opSchema,
            retryPolicy: () => millisecondsToDuration(100),
            handler(ctx) {
              attempts.push(ctx.task.attempt);
              if (attempts.length === 1) {
                throw new Error("Thrown on purpose by the conformance suite.");
              }
            },
            on: { completed: () => completed.resolve() },
          });
        },
        (queue) => failRetryStores(queue, 1),
      );
      const controller = new AbortController();
      const working = worker.startQueue(undefined, { signal: controller.signal });
      try {
        await web.createContext(new URL("https://web.example/"), undefined)
          .enqueueTask(flaky, { op: "keep" });
        await within(
          completed.promise,
          () => `the task to run again; ran ${attempts.length} times`,
          EVENT_TIMEOUT_MS + leaseMs * 2,
        );
        // The retry was never stored, so the queue's copy (attempt 0) ran again.
        assertEquals(attempts, [0, 0]);
      } finally {
        controller.abort();
        await working;
      }
    });
  });

  test(`${options.name}: an outbox delivery reaches a real inbox through the queue`, async () => {
    const server = await startTestServer(() => new Response(null, { status: 202 }));
    try {
      await runQueueTest(options.factoryModule, leaseMs, async (run) => {
        const { web, worker } = await buildWebAndWorker(run, () => {});
        const controller = new AbortController();
        const working = worker.startQueue(undefined, { signal: controller.signal });
        try {
          const activity = createActivity();
          await web.createContext(new URL("https://web.example/"), undefined).sendActivity(
            { identifier: "alice" },
            {
              id: new URL("https://remote.example/users/bob"),
              inboxId: new URL("/users/bob/inbox", server.url),
            },
            activity,
          );
          await server.waitForRequests(1);
          const request = server.requests[0];
          assertEquals(request.method, "POST");
          assertEquals(new URL(request.url).pathname, "/users/bob/inbox");
          assertEquals(request.headers.get("content-type"), "application/activity+json");
          assert(request.headers.get("signature") != null, "the delivery is signed");
          // The activity, with the Linked Data signature sendActivity() adds
          // when the sender has an RSA key.
          const { signature: _, ...unsigned } = JSON.parse(request.body);
          assertEquals(unsigned, await activity.toJsonLd());
        } finally {
          controller.abort();
          await working;
        }
      });
    } finally {
      await server.close();
    }
  });

  test(`${options.name}: a typed task enqueued by a web process runs on a worker`, async () => {
    await runQueueTest(options.factoryModule, leaseMs, async (run) => {
      const received = deferred<{ data: DigestPayload; origin: string }>();
      let digest!: ReturnType<typeof defineDigest>;
      const defineDigest = (builder: ReturnType<typeof createFederationBuilder<void>>) =>
        builder.defineTask("send-digest", {
          schema: digestSchema,
          handler: (ctx, data) => received.resolve({ data, origin: ctx.origin }),
        });
      const { web, worker } = await buildWebAndWorker(run, (builder) => {
        digest = defineDigest(builder);
      });
      const controller = new AbortController();
      const working = worker.startQueue(undefined, { signal: controller.signal, queue: "task" });
      try {
        const sentAt = new Date("2026-11-23T10:00:00.000Z");
        await web.createContext(new URL("https://web.example/"), undefined).enqueueTask(digest, {
          activity: createActivity(),
          sentAt,
          counts: new Map([["likes", 3], ["boosts", 1]]),
        });
        const { data, origin } = await within(
          received.promise,
          "the worker to run the task",
          EVENT_TIMEOUT_MS,
        );
        assertEquals(origin, "https://web.example");
        assertInstanceOf(data.activity, Create);
        const note = await data.activity.getObject();
        assertInstanceOf(note, Note);
        assertEquals(note.content?.toString(), "Hello from the conformance suite");
        assertEquals(await data.activity.toJsonLd(), await createActivity().toJsonLd());
        assertInstanceOf(data.sentAt, Date);
        assertEquals(data.sentAt.getTime(), sentAt.getTime());
        assert(data.counts instanceof Map);
        assertEquals([...data.counts], [["likes", 3], ["boosts", 1]]);
      } finally {
        controller.abort();
        await working;
      }
    });
  });
}
