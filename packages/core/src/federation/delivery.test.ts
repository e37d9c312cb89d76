import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createExponentialBackoffPolicy } from "../retry/exponential-backoff.ts";
import { deliverOutboxMessage } from "./delivery.ts";
import { DeliveryError, PrivateAddressError } from "./errors.ts";
import { createFederation } from "./federation.ts";
import type { OutboxMessage } from "./message.ts";
import { RecordingQueue, startInboxServer } from "./test-support.ts";

function createActivity(): Create {
  return new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ content: "Hello" }),
  });
}

function createOutboxMessage(inbox: URL): OutboxMessage {
  return {
    type: "outbox",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    inbox: inbox.href,
    sharedInbox: false,
    actorIds: [],
    activity: { type: "Create" },
    activityType: "Create",
  };
}

test("the outbox worker POSTs the activity to the inbox and retries a 500", async () => {
  const server = await startInboxServer([500, 202]);
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    userAgent: "FedworkTest/1.0",
    outboxRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 10 },
      jitter: false,
    }),
  });
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const activity = createActivity();
    await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
      { identifier: "alice" },
      { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
      activity,
    );
    await server.waitForRequests(2);
    const [first, second] = server.requests;
    assertEquals([first.method, first.url], ["POST", "/inbox"]);
    assertEquals(first.headers["content-type"], "application/activity+json");
    assertEquals(first.headers["user-agent"], "FedworkTest/1.0");
    assertEquals(JSON.parse(first.body), await activity.toJsonLd());
    assertEquals(second.body, first.body);
    assertEquals(queue.enqueued.map((record) => record.message.attempt), [0, 1]);
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("without an outbox queue sendActivity() delivers before it returns", async () => {
  const server = await startInboxServer([200]);
  try {
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
    });
    await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
      { identifier: "alice" },
      { id: null, inboxId: new URL("/users/bob/inbox", server.url) },
      createActivity(),
    );
    assertEquals(server.requests.map((request) => request.url), ["/users/bob/inbox"]);
  } finally {
    await server.close();
  }
});

test("a non-2xx answer makes delivery fail with the status", async () => {
  const server = await startInboxServer([410]);
  try {
    const error = await assertRejects(
      () =>
        deliverOutboxMessage(createOutboxMessage(new URL("/inbox", server.url)), {
          userAgent: "FedworkTest/1.0",
          allowPrivateAddress: true,
        }),
      DeliveryError,
      "answered 410",
    );
    assertEquals(error.status, 410);
  } finally {
    await server.close();
  }
});

test("delivery to a loopback inbox is refused unless allowPrivateAddress is set", async () => {
  const server = await startInboxServer([202]);
  try {
    await assertRejects(
      () =>
        deliverOutboxMessage(createOutboxMessage(new URL("/inbox", server.url)), {
          userAgent: "FedworkTest/1.0",
          allowPrivateAddress: false,
        }),
      PrivateAddressError,
      "allowPrivateAddress",
    );
    await assertRejects(
      () =>
        deliverOutboxMessage(createOutboxMessage(new URL("http://localhost:1/inbox")), {
          userAgent: "FedworkTest/1.0",
          allowPrivateAddress: false,
        }),
      PrivateAddressError,
    );
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("workers started by the first enqueue deliver the activity", async () => {
  const server = await startInboxServer([202]);
  const queue = new RecordingQueue();
  try {
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      queue,
      allowPrivateAddress: true,
    });
    await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
      { identifier: "alice" },
      { id: null, inboxId: new URL("/inbox", server.url) },
      createActivity(),
    );
    await server.waitForRequests(1);
    assertEquals(queue.listenCount, 1);
  } finally {
    await server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("without an outbox queue a failed delivery rejects sendActivity()", async () => {
  const server = await startInboxServer([500]);
  try {
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
    });
    const error = await assertRejects(
      () =>
        federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
          { identifier: "alice" },
          { id: null, inboxId: new URL("/inbox", server.url) },
          createActivity(),
        ),
      AggregateError,
      "1 of 1 inboxes",
    );
    assertEquals(error.errors.map((e: unknown) => (e as DeliveryError).status), [500]);
  } finally {
    await server.close();
  }
});
