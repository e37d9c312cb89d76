// One long task on the default SQLite set-up (one SqliteMessageQueue for
// every role, default options) no longer holds up anything else: received
// activities, deliveries and other tasks run while it still runs, and the
// messages waiting behind busy handler slots count as ready.
import {
  assert,
  assertEquals,
  deferred,
  startTestServer,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { createFederationBuilder, generateCryptoKeyPair, MemoryKvStore } from "@fedwork/core";
import { Create, Note } from "@fedify/vocab";
import { SqliteMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { holdSchema } from "./testdata/hold-task.ts";

async function withDatabase(body: (path: string) => Promise<void>): Promise<void> {
  const namespace = `fedwork-sqlite-roles-${crypto.randomUUID()}`;
  try {
    await body(databasePath(namespace));
  } finally {
    await cleanup(namespace);
  }
}

test("a long task on the default SQLite set-up leaves the inbox, the outbox and other tasks running", async () => {
  await withDatabase(async (path) => {
    const server = await startTestServer(() => new Response(null, { status: 202 }));
    const keyPair = await generateCryptoKeyPair();
    // The defaults: one queue for every role, no options but the file.
    await using queue = new SqliteMessageQueue({ path });
    const longStarted = deferred();
    const releaseLong = deferred();
    const received = deferred<string>();
    const quickRan = deferred<string>();
    const builder = createFederationBuilder<void>();
    builder.setActorDispatcher("/users/{identifier}", () => null)
      .setKeyPairsDispatcher(() => [keyPair]);
    builder.setInboxListeners("/users/{identifier}/inbox", "/inbox")
      .on(Create, (_ctx, create) => received.resolve(create.id?.href ?? ""));
    const long = builder.defineTask("long", {
      schema: holdSchema,
      async handler() {
        longStarted.resolve();
        await releaseLong.promise;
      },
    });
    const quick = builder.defineTask("quick", {
      schema: holdSchema,
      handler: (_ctx, { label }) => quickRan.resolve(label ?? ""),
    });
    const federation = await builder.build({
      kv: new MemoryKvStore(),
      queue,
      manuallyStartQueue: true,
      skipSignatureVerification: true,
      allowPrivateAddress: true,
    });
    const controller = new AbortController();
    const working = federation.startQueue(undefined, { signal: controller.signal });
    try {
      const ctx = federation.createContext(new URL("https://app.example/"), undefined);
      await ctx.enqueueTask(long, { label: "long" });
      await within(longStarted.promise, "the long task to start");

      // A received activity, through the inbox queue.
      const response = await federation.fetch(
        new Request("https://app.example/inbox", {
          method: "POST",
          headers: { "Content-Type": "application/activity+json" },
          body: JSON.stringify({
            "@context": "https://www.w3.org/ns/activitystreams",
            id: "https://remote.example/creates/1",
            type: "Create",
            actor: "https://remote.example/users/bob",
            object: { type: "Note", id: "https://remote.example/notes/1", content: "hi" },
          }),
        }),
        { contextData: undefined },
      );
      await response.body?.cancel();
      assertEquals(response.status, 202);
      assertEquals(
        await within(received.promise, "the inbox listener while the long task runs"),
        "https://remote.example/creates/1",
      );

      // A delivery, through the outbox queue.
      await ctx.sendActivity(
        { identifier: "alice" },
        { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
        new Create({
          id: new URL("https://app.example/creates/1"),
          actor: new URL("https://app.example/users/alice"),
          object: new Note({ id: new URL("https://app.example/notes/1"), content: "hello" }),
        }),
      );
      await within(server.waitForRequests(1), "the delivery while the long task runs");

      // Another task, through the task queue the long one occupies.
      await ctx.enqueueTask(quick, { label: "quick" });
      assertEquals(
        await within(quickRan.promise, "the second task while the long one runs"),
        "quick",
      );

      // Each role is listened to apart, with slots of its own.
      const depths = await federation.getQueueDepths();
      assertEquals(depths.map((entry) => entry.queue), ["inbox", "outbox", "fanout", "task"]);
    } finally {
      releaseLong.resolve();
      controller.abort();
      await working;
      await server.close();
    }
  });
});

test("SqliteMessageQueue counts messages waiting behind busy handler slots as ready", async () => {
  await withDatabase(async (path) => {
    await using queue = new SqliteMessageQueue({ path, concurrency: 1 });
    const release = deferred();
    const started = deferred();
    const controller = new AbortController();
    let handled = 0;
    const listening = queue.listen(async (message: { n: number }) => {
      if (message.n === 0) {
        started.resolve();
        await release.promise;
      }
      handled++;
    }, { signal: controller.signal });
    try {
      await queue.enqueue({ n: 0 });
      await within(started.promise, "the long handler to start");
      await queue.enqueueMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
      // The listener may prefetch them first; once it sees its only slot
      // held, it gives them back, and they are ready for any worker.
      await waitUntil(async () => (await queue.getDepth()).ready === 3, {
        what: "the three waiting messages to count as ready",
      });
      assertEquals(await queue.getDepth(), { queued: 4, ready: 3, delayed: 0 });
      // Another worker takes them while the first still runs.
      await using other = new SqliteMessageQueue({ path });
      const otherController = new AbortController();
      const taken: number[] = [];
      const allTaken = deferred();
      const otherListening = other.listen((message: { n: number }) => {
        taken.push(message.n);
        if (taken.length === 3) allTaken.resolve();
      }, { signal: otherController.signal });
      await within(allTaken.promise, "another worker to take the waiting messages");
      otherController.abort();
      await otherListening;
      assertEquals(taken.sort(), [1, 2, 3]);
      assert(handled === 0, "the long handler still runs");
    } finally {
      release.resolve();
      controller.abort();
      await listening;
    }
  });
});

test("getQueueDepths() counts the tasks waiting behind a long one as ready", async () => {
  await withDatabase(async (path) => {
    // One slot, so that the long task fills the task role's listener.
    await using queue = new SqliteMessageQueue({ path, concurrency: 1 });
    const longStarted = deferred();
    const releaseLong = deferred();
    const builder = createFederationBuilder<void>();
    const long = builder.defineTask("long", {
      schema: holdSchema,
      async handler() {
        longStarted.resolve();
        await releaseLong.promise;
      },
    });
    const quick = builder.defineTask("quick", { schema: holdSchema, handler() {} });
    const federation = await builder.build({
      kv: new MemoryKvStore(),
      queue,
      manuallyStartQueue: true,
    });
    const controller = new AbortController();
    const working = federation.startQueue(undefined, { signal: controller.signal });
    try {
      const ctx = federation.createContext(new URL("https://app.example/"), undefined);
      await ctx.enqueueTask(long, { label: "long" });
      await within(longStarted.promise, "the long task to start");
      await ctx.enqueueTaskMany(quick, [{ label: "a" }, { label: "b" }]);
      const taskDepth = async () =>
        (await federation.getQueueDepths()).find((entry) => entry.role === "task")?.depth;
      await waitUntil(async () => (await taskDepth())?.ready === 2, {
        what: "the two waiting tasks to count as ready",
      });
      assertEquals(await taskDepth(), { queued: 3, ready: 2, delayed: 0 });
    } finally {
      releaseLong.resolve();
      controller.abort();
      await working;
    }
  });
});
