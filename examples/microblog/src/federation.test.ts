import {
  assert,
  assertEquals,
  assertInstanceOf,
  deferred,
  startTestServer,
  test,
  waitUntil,
  within,
  withLogs,
} from "@fedify/fixture";
import {
  InProcessMessageQueue,
  MemoryKvStore,
  type MessageFailedEvent,
  PermanentError,
} from "@fedwork/core";
import { createMicroblog } from "./federation.ts";
import { Store } from "./store.ts";

test("link-preview refuses a private address once loopback peers are not allowed", async () => {
  // The page would answer; the address check must stop the task first.
  await using page = await startTestServer(() =>
    Promise.resolve(
      new Response("<title>Internal</title>", { headers: { "Content-Type": "text/html" } }),
    )
  );
  await using queue = new InProcessMessageQueue();
  const store = new Store(new MemoryKvStore());
  const app = createMicroblog({
    origin: new URL("https://microblog.example"),
    store,
    kv: new MemoryKvStore(),
    queue,
    allowPrivateAddress: false,
    welcomeDelay: { seconds: 1 },
    digestEvery: { hours: 1 },
  });
  const failed = deferred<MessageFailedEvent>();
  app.federation.on("failed", (event) => failed.resolve(event));
  const controller = new AbortController();
  const workers = app.federation.startQueue(undefined, { signal: controller.signal });
  try {
    await app.createUser("alice");
    const post = await app.post("alice", `Look: ${new URL("/secret", page.url).href}`);
    const event = await within(failed.promise, "link-preview to fail");
    assertEquals([event.taskName, event.reason, event.attempt], ["link-preview", "permanent", 0]);
    assertInstanceOf(event.error, PermanentError);
    assertEquals((await store.getPost("alice", post.id))?.preview, undefined);
    assertEquals(page.requests.length, 0);
  } finally {
    controller.abort();
    await workers;
  }
});

test("a link preview whose page answers 500 is retried with a warning, not a stack", async () => {
  await using page = await startTestServer(() =>
    Promise.resolve(new Response("down", { status: 500, headers: { "Content-Type": "text/html" } }))
  );
  await using queue = new InProcessMessageQueue();
  const app = createMicroblog({
    origin: new URL("https://microblog.example"),
    store: new Store(new MemoryKvStore()),
    kv: new MemoryKvStore(),
    queue,
    allowPrivateAddress: true,
    welcomeDelay: { seconds: 1 },
    digestEvery: { hours: 1 },
  });
  const controller = new AbortController();
  await withLogs(async (records) => {
    const workers = app.federation.startQueue(undefined, { signal: controller.signal });
    try {
      await app.createUser("alice");
      await app.post("alice", `Look: ${new URL("/page", page.url).href}`);
      const retrying = () =>
        records.find((record) =>
          record.level === "warning" && record.properties.taskName === "link-preview"
        );
      await waitUntil(() => retrying() != null, { what: "the link preview's retry warning" });
      const error = retrying()!.properties.error;
      assertEquals(typeof error, "string");
      assert(String(error).startsWith("RemoteRequestError: "), String(error));
      assert(!String(error).includes("\n    at "), "no stack trace");
    } finally {
      controller.abort();
      await workers;
    }
  });
});
