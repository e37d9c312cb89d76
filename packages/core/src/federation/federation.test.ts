import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import { Activity, Create, Follow, Note } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createExponentialBackoffPolicy } from "../retry/exponential-backoff.ts";
import type { Context } from "./context-api.ts";
import { createFederation } from "./federation.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import { RecordingQueue, registerTestActor, startInboxServer } from "./testdata/test-support.ts";

const base = new URL("https://example.com/");

async function createInboxMessage(activity: Activity): Promise<InboxMessage> {
  return {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: await activity.toJsonLd(),
    identifier: "alice",
  };
}

function createFollow(): Follow {
  return new Follow({
    id: new URL("https://remote.example/follows/1"),
    actor: new URL("https://remote.example/users/bob"),
    object: new URL("https://example.com/users/alice"),
  });
}

test("one queue serving every role is listened to once and dispatches by type", async () => {
  const server = await startInboxServer([202]);
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createFederation<{ db: string }>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  registerTestActor(federation);
  const received = deferred<[string, Follow]>();
  federation.setInboxListeners("/users/{identifier}/inbox").on(Follow, (ctx, follow) => {
    received.resolve([ctx.data.db, follow]);
  });
  const worker = federation.startQueue({ db: "worker" }, { signal: controller.signal });
  try {
    await queue.enqueue(await createInboxMessage(createFollow()));
    await federation.createContext(base, { db: "request" }).sendActivity(
      { identifier: "alice" },
      { id: null, inboxId: new URL("/inbox", server.url) },
      new Create({ actor: new URL("https://example.com/users/alice") }),
    );
    const [db, follow] = await withTimeout(received.promise, "the inbox listener");
    assertEquals(db, "worker");
    assertInstanceOf(follow, Follow);
    assertEquals(follow.id?.href, "https://remote.example/follows/1");
    await server.waitForRequests(1);
    assertEquals(queue.listenCount, 1);
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("startQueue({ queue }) starts only the worker of that role", async () => {
  const inbox = new RecordingQueue({ deliver: false });
  const outbox = new RecordingQueue({ deliver: false });
  const fanout = new RecordingQueue({ deliver: false });
  const task = new RecordingQueue({ deliver: false });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox, outbox, fanout, task },
    manuallyStartQueue: true,
  });
  const controller = new AbortController();
  const outboxWorker = federation.startQueue(undefined, {
    signal: controller.signal,
    queue: "outbox",
  });
  const taskWorker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  assertEquals(
    [inbox, outbox, fanout, task].map((queue) => queue.listenCount),
    [0, 1, 0, 1],
  );
  // Starting everything afterwards does not listen to a queue twice.
  const rest = federation.startQueue(undefined, { signal: controller.signal });
  assertEquals(
    [inbox, outbox, fanout, task].map((queue) => queue.listenCount),
    [1, 1, 1, 1],
  );
  controller.abort();
  await Promise.all([outboxWorker, taskWorker, rest]);
  await assertRejects(
    () => federation.startQueue(undefined, { queue: "mail" as never }),
    TypeError,
    "inbox, outbox, fanout, task",
  );
});

test("inbox listeners of a superclass receive activities without their own listener", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const seen: string[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox")
    .on(Follow, () => void seen.push("Follow"))
    .on(Activity, (_ctx, activity) => void seen.push(`Activity:${activity.constructor.name}`));
  await federation.processQueuedMessage(undefined, await createInboxMessage(createFollow()));
  await federation.processQueuedMessage(
    undefined,
    await createInboxMessage(
      new Create({ actor: new URL("https://r.example/u"), object: new Note({}) }),
    ),
  );
  assertEquals(seen, ["Follow", "Activity:Create"]);
});

test("a throwing inbox listener reaches onError and is retried by the inbox policy", async () => {
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox: queue },
    manuallyStartQueue: true,
    inboxRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 5 },
      maxAttempts: 2,
      jitter: false,
    }),
  });
  const errors: string[] = [];
  const attempts: number[] = [];
  const succeeded = deferred<Context<void>>();
  federation.setInboxListeners("/users/{identifier}/inbox")
    .on(Follow, (ctx) => {
      attempts.push(attempts.length);
      if (attempts.length === 1) throw new Error("database is down");
      succeeded.resolve(ctx);
    })
    .onError((_ctx, error) => void errors.push(error.message));
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await queue.enqueue(await createInboxMessage(createFollow()));
    const ctx = await withTimeout(succeeded.promise, "the retried listener");
    assertEquals(ctx.origin, "https://example.com");
    assertEquals(errors, ["database is down"]);
    assertEquals(queue.enqueued.map((record) => record.message.attempt), [0, 1]);
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
});

test("fan-out messages are expanded into one delivery per inbox", async () => {
  const server = await startInboxServer([202]);
  const outbox = new RecordingQueue();
  const fanout = new RecordingQueue();
  const controller = new AbortController();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { outbox, fanout },
    allowPrivateAddress: true,
  });
  registerTestActor(federation);
  const ctx = federation.createContext(base, undefined);
  try {
    const worker = federation.startQueue(undefined, { signal: controller.signal });
    await ctx.sendActivity(
      { identifier: "alice" },
      [1, 2, 3].map((i) => ({ id: null, inboxId: new URL(`/users/${i}/inbox`, server.url) })),
      new Create({ actor: new URL("https://example.com/users/alice") }),
      { fanout: "force" },
    );
    await server.waitForRequests(3);
    assertEquals(server.requests.map((request) => request.url).sort(), [
      "/users/1/inbox",
      "/users/2/inbox",
      "/users/3/inbox",
    ]);
    assertEquals([fanout.enqueued.length, outbox.enqueued.length], [1, 3]);
    controller.abort();
    await worker;
  } finally {
    controller.abort();
    await server.close();
    await outbox[Symbol.asyncDispose]();
    await fanout[Symbol.asyncDispose]();
  }
});

test("an inbox activity whose context cannot be loaded yet is retried; a malformed one is dropped", async () => {
  const queue = new RecordingQueue();
  const controller = new AbortController();
  let contextLoads = 0;
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox: queue },
    manuallyStartQueue: true,
    inboxRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 5 },
      jitter: false,
    }),
    documentLoader(url) {
      if (url !== "https://custom.example/context") {
        return Promise.reject(new Error(`unexpected fetch of ${url}`));
      }
      // The first fetch fails as a network error would; the second works.
      if (++contextLoads === 1) return Promise.reject(new TypeError("fetch failed"));
      return Promise.resolve({
        documentUrl: url,
        contextUrl: null,
        document: { "@context": { custom: "https://custom.example/ns#custom" } },
      });
    },
  });
  const received = deferred<Follow>();
  const outcomes: string[] = [];
  federation.on("dropped", (event) => void outcomes.push(`dropped ${event.attempt}`));
  federation.on("retrying", (event) => void outcomes.push(`retrying ${event.attempt}`));
  const completed = deferred();
  federation.on("completed", (event) => {
    outcomes.push(`completed ${event.attempt}`);
    completed.resolve();
  });
  federation.setInboxListeners("/users/{identifier}/inbox").on(Follow, (_ctx, follow) => {
    received.resolve(follow);
  });
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const malformed = await createInboxMessage(createFollow());
    await queue.enqueue({
      ...malformed,
      activity: { "@context": "https://www.w3.org/ns/activitystreams", type: "Follow", id: 5 },
    });
    const follow = await createInboxMessage(createFollow());
    await queue.enqueue({
      ...follow,
      activity: {
        ...(follow.activity as Record<string, unknown>),
        "@context": ["https://www.w3.org/ns/activitystreams", "https://custom.example/context"],
      },
    });
    const activity = await withTimeout(received.promise, "the retried activity");
    assertEquals(activity.id?.href, "https://remote.example/follows/1");
    await withTimeout(completed.promise, "the completed event");
    assertEquals(outcomes, ["dropped 0", "retrying 0", "completed 1"]);
    assert(contextLoads >= 2, `the context was loaded ${contextLoads} times`);
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
});
