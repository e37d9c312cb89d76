import { assert, assertEquals, test } from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import type { Context } from "../../federation/context-api.ts";
import type { KvKey } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { MessageDispatcher } from "../../processing/dispatcher.ts";
import { MessageEventHub } from "../../processing/events.ts";
import { getFedworkTracer } from "../../processing/tracing.ts";
import { InProcessPubSub } from "../../pubsub/in-process-pubsub.ts";
import {
  type LeasedMessage,
  type LeaseEngine,
  runLeaseListener,
} from "../../queue/lease-listener.ts";
import { createExponentialBackoffPolicy } from "../../retry/exponential-backoff.ts";
import { cancellationMarkerTtl, TaskCancellations } from "./markers.ts";
import { encodeTaskPayload } from "../../tasks/codec/mod.ts";
import { createTaskMessageHandler } from "../../tasks/handler.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import { TaskStore } from "../../tasks/registry.ts";

/** A store whose reads wait until `release()` is called. */
class HeldReadsKvStore extends MemoryKvStore {
  #release!: () => void;
  readonly #released = new Promise<void>((resolve) => this.#release = resolve);
  reads = 0;

  release(): void {
    this.#release();
  }

  override async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    this.reads++;
    await this.#released;
    return await super.get<T>(key);
  }
}

/** A store that counts its reads, one by one and batched. */
class CountingKvStore extends MemoryKvStore {
  gets = 0;
  batches: number[] = [];

  override get<T = unknown>(key: KvKey): Promise<T | undefined> {
    this.gets++;
    return super.get<T>(key);
  }

  override getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    this.batches.push(keys.length);
    return super.getMany<T>(keys);
  }
}

/** A lease engine that hands out `messages` in its first claim, then nothing. */
function oneBatchEngine(
  messages: readonly TaskMessage[],
): LeaseEngine<LeasedMessage & { msg: TaskMessage }> {
  let claimed = false;
  return {
    claim: (request) => {
      const batch = claimed ? [] : messages.map((msg) => ({ id: msg.id, msg }));
      claimed = true;
      return Promise.resolve({ messages: batch.slice(0, request.count) });
    },
    release: () => Promise.resolve(),
    extendLeases: () => Promise.resolve(),
    redeliver: () => Promise.reject(new Error("not here")),
    decode: (message) => message.msg,
    subscribe: () => () => {},
  };
}

async function taskMessage(payload: unknown): Promise<TaskMessage> {
  return {
    type: "task",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com/",
    taskName: "import",
    data: await encodeTaskPayload(payload),
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
  };
}

/**
 * Dispatches one task message to a task whose schema and handler say when
 * they ran, watching it with `cancellations`; the store's reads are let
 * through once the schema has run, so that the marker arrives after the
 * payload was validated.
 */
async function runWatched(
  kv: HeldReadsKvStore,
  cancellations: TaskCancellations,
  msg: TaskMessage,
): Promise<{ outcome: unknown; validated: boolean; handled: boolean }> {
  const seen = { validated: false, handled: false };
  const registry = new TaskStore<void, Context<void>>();
  registry.defineTask("import", {
    schema: {
      "~standard": {
        version: 1,
        vendor: "test",
        validate(value: unknown) {
          seen.validated = true;
          kv.release();
          return { value: value as { n: number } };
        },
      },
    },
    handler() {
      seen.handled = true;
    },
  });
  const dispatcher = taskDispatcher(registry, cancellations);
  const outcome = await dispatcher.dispatch(msg, {
    contextData: undefined,
    signal: new AbortController().signal,
  }, {});
  return { outcome, ...seen };
}

/** A dispatcher running the registry's tasks, watched by `cancellations`. */
function taskDispatcher(
  registry: Parameters<typeof createTaskMessageHandler<void, Context<void>>>[0]["registry"],
  cancellations: TaskCancellations,
): MessageDispatcher<void> {
  const dispatcher = new MessageDispatcher<void>(
    getFedworkTracer(trace.getTracerProvider()),
    new MessageEventHub(),
  );
  dispatcher.register(
    "task",
    createTaskMessageHandler<void, Context<void>>({
      registry,
      createContext: () => ({}) as Context<void>,
      documentLoader: () => Promise.reject(new Error("no documents here")),
      retryPolicy: createExponentialBackoffPolicy(),
      retryQueue: () => undefined,
      watchCancellation: (message, signal, controller) =>
        cancellations.begin(message.id, signal, controller),
    }),
  );
  return dispatcher;
}

test("a task cancelled before its run does not start when its marker is read after its payload", async () => {
  const kv = new HeldReadsKvStore();
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  const msg = await taskMessage({ n: 1 });
  await cancellations.request(msg.id, "abandoned", cancellationMarkerTtl(0));
  const { outcome, validated, handled } = await runWatched(kv, cancellations, msg);
  assertEquals(kv.reads, 1);
  assertEquals(validated, true);
  assertEquals(handled, false);
  assertEquals(outcome, { type: "cancelled", reason: "abandoned", started: false });
});

test("a task not cancelled runs once its marker has been read", async () => {
  const kv = new HeldReadsKvStore();
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  const { outcome, validated, handled } = await runWatched(
    kv,
    cancellations,
    await taskMessage({ n: 2 }),
  );
  assertEquals(kv.reads, 1);
  assertEquals(validated, true);
  assertEquals(handled, true);
  assertEquals((outcome as { type: string }).type, "completed");
});

test("a cancellation request aborts every run of the task in the process, and only those", async () => {
  const cancellations = new TaskCancellations(new MemoryKvStore(), new InProcessPubSub(), true);
  const worker = new AbortController().signal;
  const first = cancellations.begin("task-1", worker)!;
  const second = cancellations.begin("task-1", worker)!;
  const other = cancellations.begin("task-2", worker)!;
  await Promise.all([first.checked, second.checked, other.checked]);
  second.end();
  const third = cancellations.begin("task-1", worker)!;
  await third.checked;
  await cancellations.request("task-1", "stop", cancellationMarkerTtl(0));
  assertEquals([first.cancelled, second.cancelled, third.cancelled], [true, false, true]);
  assertEquals([first.signal.aborted, second.signal.aborted, third.signal.aborted], [
    true,
    false,
    true,
  ]);
  assertEquals(first.reason, "stop");
  assertEquals([other.cancelled, other.signal.aborted], [false, false]);
  first.end();
  third.end();
  other.end();
});

test("the markers of a claimed batch are read in one round trip, and a cancelled task of it never starts", async () => {
  const kv = new CountingKvStore();
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  const messages = await Promise.all([1, 2, 3, 4, 5].map((n) => taskMessage({ n })));
  await cancellations.request(messages[2].id, "not this one", cancellationMarkerTtl(0));
  const handled: number[] = [];
  const registry = new TaskStore<void, Context<void>>();
  registry.defineTask("import", {
    schema: {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value: unknown) => ({ value: value as { n: number } }),
      },
    },
    handler(_ctx, data) {
      handled.push((data as { n: number }).n);
    },
  });
  const dispatcher = taskDispatcher(registry, cancellations);
  const stop = new AbortController();
  const outcomes = new Map<string, string>();
  const listening = runLeaseListener(
    oneBatchEngine(messages),
    async (payload: unknown) => {
      const msg = payload as TaskMessage;
      const outcome = await dispatcher.dispatch(msg, {
        contextData: undefined,
        signal: stop.signal,
      }, {});
      outcomes.set(msg.id, (outcome as { type: string }).type);
      if (outcomes.size === messages.length) stop.abort();
    },
    {
      concurrency: 5,
      prefetch: 0,
      heartbeatMs: 60_000,
      pollMs: 60_000,
      handBackDelayMs: 0,
      queueName: "a test batch",
      signal: stop.signal,
    },
  );
  await listening;
  // The first run's read goes out at once, the other four's together
  // right behind it.
  assertEquals(kv.gets, 1);
  assertEquals(kv.batches, [4]);
  assertEquals(handled.sort(), [1, 2, 4, 5]);
  assertEquals(messages.map((msg) => outcomes.get(msg.id)), [
    "completed",
    "completed",
    "cancelled",
    "completed",
    "completed",
  ]);
});

test("a marker read that getMany() fails lets the runs of the batch go ahead", async () => {
  const kv = new CountingKvStore();
  kv.getMany = () => Promise.reject(new Error("the store is down"));
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  const worker = new AbortController().signal;
  await cancellations.request("b", "because", cancellationMarkerTtl(0));
  const watches = ["a", "b", "c"].map((id) => cancellations.begin(id, worker)!);
  await Promise.all(watches.map((watch) => watch.checked));
  // "a" was read on its own; "b" and "c" in the failed batch.
  assertEquals(watches.map((watch) => watch.cancelled), [false, false, false]);
  assertEquals(kv.gets, 1);
  for (const watch of watches) watch.end();
});

test("runs that begin together have their markers read in one round trip, each applied to its own run", async () => {
  const kv = new CountingKvStore();
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  await cancellations.request("b", "because", cancellationMarkerTtl(0));
  const worker = new AbortController().signal;
  const watches = ["a", "b", "c", "b"].map((id) => cancellations.begin(id, worker)!);
  await Promise.all(watches.map((watch) => watch.checked));
  assertEquals([kv.gets, kv.batches], [1, [3]]);
  assertEquals(watches.map((watch) => watch.cancelled), [false, true, false, true]);
  assertEquals(watches[1].reason, "because");
  for (const watch of watches) watch.end();
});

test("on a MemoryKvStore a run's marker is read at once, with nothing to wait for", async () => {
  const kv = new MemoryKvStore();
  kv.get = () => Promise.reject(new Error("get() should not be called"));
  kv.getMany = () => Promise.reject(new Error("getMany() should not be called"));
  const cancellations = new TaskCancellations(kv, new InProcessPubSub(), true);
  await cancellations.request("b", "because", cancellationMarkerTtl(0));
  const worker = new AbortController().signal;
  const [a, b] = ["a", "b"].map((id) => cancellations.begin(id, worker)!);
  assertEquals([a.checked, b.checked], [undefined, undefined]);
  assertEquals([a.cancelled, b.cancelled, b.reason], [false, true, "because"]);
  assert(b.signal.aborted);
  a.end();
  b.end();
});
