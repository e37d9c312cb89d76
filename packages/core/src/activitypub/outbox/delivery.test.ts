import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { PrivateAddressError } from "../network/errors.ts";
import { verifyRequest } from "../signatures/verify.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { PermanentError } from "../../processing/errors.ts";
import type { MessageFailedEvent } from "../../processing/events.ts";
import { createExponentialBackoffPolicy } from "../../retry/exponential-backoff.ts";
import type { OutboxPermanentFailure } from "./delivery.ts";
import { DeliveryError, RouteNotRegisteredError } from "../../federation/errors.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import {
  type ReceivedRequest,
  RecordingQueue,
  registerTestActor,
  startInboxServer,
  testKeyPair,
} from "../../federation/testdata/test-support.ts";

const base = new URL("https://example.com/");
const alice = new URL("https://example.com/users/alice");

function createActivity(): Create {
  return new Create({
    id: new URL("https://example.com/activities/1"),
    actor: alice,
    object: new Note({ id: new URL("https://example.com/notes/1"), content: "Hello" }),
  });
}

function createSigningFederation(
  options: Omit<FederationOptions<void>, "kv"> = {},
): Federation<void> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    ...options,
  });
  registerTestActor(federation);
  return federation;
}

/** Verifies a recorded request's signature against the test key. */
async function verifyRecorded(request: ReceivedRequest, server: URL) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const { publicKey } = await testKeyPair();
  return await verifyRequest(
    new Request(new URL(request.url, server), { method: request.method, headers }),
    {
      body: new TextEncoder().encode(request.body),
      fetchKey: (keyId) => Promise.resolve({ keyId, publicKey, owner: alice, cached: false }),
    },
  );
}

test("the outbox worker signs each delivery and retries until the inbox accepts it", async () => {
  // Both knocks of the first attempt get 500; the retry is accepted.
  const server = await startInboxServer([500, 500, 202]);
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createSigningFederation({
    queue,
    manuallyStartQueue: true,
    userAgent: "FedworkTest/1.0",
    outboxRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 10 },
      jitter: false,
    }),
  });
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const activity = createActivity();
    await federation.createContext(base, undefined).sendActivity(
      { identifier: "alice" },
      { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
      activity,
    );
    await server.waitForRequests(3);
    const [first, second, third] = server.requests;
    assertEquals([first.method, first.url], ["POST", "/inbox"]);
    assertEquals(first.headers["content-type"], "application/activity+json");
    assertEquals(first.headers["user-agent"], "FedworkTest/1.0");
    // The activity, with the Linked Data signature sendActivity() added.
    const { signature, ...unsigned } = JSON.parse(first.body);
    assertEquals(unsigned, await activity.toJsonLd());
    assertEquals(signature.creator, "https://example.com/users/alice#main-key");
    // RFC 9421 first, draft-cavage on the second knock; the retry starts over.
    assertEquals(
      server.requests.map((request) => request.headers["signature-input"] != null),
      [true, false, true],
    );
    for (const request of [first, second, third]) {
      const result = await verifyRecorded(request, server.url);
      assert(result.verified, `the request is signed: ${JSON.stringify(result)}`);
      assertEquals(result.keyId.href, "https://example.com/users/alice#main-key");
    }
    await queue.waitUntil(() => queue.enqueued.length === 2, "the retry");
    assertEquals(queue.enqueued.map((record) => record.message.attempt), [0, 1]);
    assert(!JSON.stringify(queue.enqueued).includes("privateKey"), "no key in the queue");
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("a 410 calls the permanent failure handler once and is never retried", async () => {
  const server = await startInboxServer([410]);
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createSigningFederation({
    queue,
    manuallyStartQueue: true,
    outboxRetryPolicy: createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 10 },
      jitter: false,
    }),
  });
  const failures: OutboxPermanentFailure[] = [];
  federation.setOutboxPermanentFailureHandler((_ctx, failure) => {
    failures.push(failure);
  });
  const failed = deferred<MessageFailedEvent>();
  federation.on("failed", (event) => failed.resolve(event));
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await federation.createContext(base, undefined).sendActivity(
      { identifier: "alice" },
      { id: new URL("https://remote.example/users/bob"), inboxId: new URL("/inbox", server.url) },
      createActivity(),
    );
    const event = await withTimeout(failed.promise, "the failed event");
    assertEquals(event.reason, "permanent");
    assertEquals(failures.length, 1);
    assertEquals(failures[0].statusCode, 410);
    assertEquals(failures[0].inbox.href, new URL("/inbox", server.url).href);
    assertEquals(failures[0].actorIds.map((id) => id.href), ["https://remote.example/users/bob"]);
    assertEquals(failures[0].activity.id?.href, "https://example.com/activities/1");
    assertInstanceOf(failures[0].error, DeliveryError);
    // Both knocks, and no retry.
    assertEquals(server.requests.length, 2);
    assertEquals(queue.enqueued.length, 1);
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("without an outbox queue sendActivity() delivers a signed request before it returns", async () => {
  const server = await startInboxServer([200]);
  try {
    await createSigningFederation().createContext(base, undefined).sendActivity(
      { identifier: "alice" },
      { id: null, inboxId: new URL("/users/bob/inbox", server.url) },
      createActivity(),
    );
    assertEquals(server.requests.map((request) => request.url), ["/users/bob/inbox"]);
    assert((await verifyRecorded(server.requests[0], server.url)).verified);
  } finally {
    await server.close();
  }
});

test("without an outbox queue a failed delivery rejects sendActivity()", async () => {
  const server = await startInboxServer([500]);
  try {
    const error = await assertRejects(
      () =>
        createSigningFederation().createContext(base, undefined).sendActivity(
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

test("delivery to a loopback inbox is refused, for good, unless allowPrivateAddress is set", async () => {
  const server = await startInboxServer([202]);
  try {
    const federation = createSigningFederation({ allowPrivateAddress: false });
    const ctx = federation.createContext(base, undefined);
    for (const inbox of [new URL("/inbox", server.url), new URL("http://localhost:1/inbox")]) {
      const error = await assertRejects(
        () =>
          ctx.sendActivity({ identifier: "alice" }, { id: null, inboxId: inbox }, createActivity()),
        AggregateError,
      );
      assertInstanceOf(error.errors[0], PermanentError);
      assertInstanceOf((error.errors[0] as Error).cause, PrivateAddressError);
    }
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("sendActivity() without a key pairs dispatcher fails in the caller", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  await assertRejects(
    () =>
      federation.createContext(base, undefined).sendActivity(
        { identifier: "alice" },
        { id: null, inboxId: new URL("https://remote.example/inbox") },
        createActivity(),
      ),
    RouteNotRegisteredError,
    "setKeyPairsDispatcher",
  );
});

test("workers started by the first enqueue deliver the activity", async () => {
  const server = await startInboxServer([202]);
  const queue = new RecordingQueue();
  try {
    await createSigningFederation({ queue }).createContext(base, undefined).sendActivity(
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
