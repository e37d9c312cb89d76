// The inbox and the lookups against documents made to be expensive to
// process: each is refused, or parsed within its budget, before JSON-LD
// work can cost more than a bounded slice of CPU and memory.  Real
// federations and servers on loopback.
import {
  assert,
  assertEquals,
  deferred,
  startTestServer,
  test,
  within,
  withLogs,
} from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { signRequest } from "../signatures/sign.ts";
import { contextBomb, scopedTypeBomb } from "../network/testdata/hostile-documents.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { MessageEvent } from "../../processing/events.ts";
import { queuedInboxMessage } from "../../federation/testdata/inbox-test-support.ts";
import {
  registerTestActor,
  serveFederation,
  testKeyPair,
} from "../../federation/testdata/test-support.ts";

const { privateKey } = await testKeyPair();
const AS = "https://www.w3.org/ns/activitystreams";

/** A loopback server that counts its requests and answers each with `document`. */
async function countingServer(document: unknown) {
  const requests: string[] = [];
  const server = await startTestServer((request) => {
    requests.push(new URL(request.url).pathname);
    return Response.json(document, { headers: { "Content-Type": "application/ld+json" } });
  });
  return { server, requests };
}

/** A receiving federation with an inbox, optionally with the unverified-activity hook. */
async function receiver(hook?: () => void) {
  const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  registerTestActor(federation);
  const received: string[] = [];
  const setters = federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, follow) => void received.push(follow.id?.href ?? "(no id)"));
  if (hook != null) {
    setters.onUnverifiedActivity(() => {
      hook();
      return new Response("Seen", { status: 202 });
    });
  }
  const server = await serveFederation(federation, undefined);
  return { federation, server, received, inbox: new URL("/users/bob/inbox", server.url) };
}

function postTo(inbox: URL, body: unknown): Request {
  return new Request(inbox, {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body: JSON.stringify(body),
  });
}

test("an inbox refuses the context bomb with 400 before fetching any key", async () => {
  const keys = await countingServer({});
  const local = await receiver(() => {});
  try {
    const keyId = new URL("/users/mallory#main-key", keys.server.url);
    for (const bomb of [contextBomb(12_000), scopedTypeBomb(1_600)]) {
      const signed = await signRequest(postTo(local.inbox, bomb), privateKey, keyId, {
        spec: "rfc9421",
      });
      const response = await fetch(signed);
      assertEquals(response.status, 400);
      assert((await response.text()).includes("too complex"));
      // Unsigned, with the unverified-activity hook registered: refused alike.
      const unsigned = await fetch(postTo(local.inbox, bomb));
      assertEquals(unsigned.status, 400);
      await unsigned.body?.cancel();
    }
    assertEquals(keys.requests, []);
    assertEquals(local.received, []);
  } finally {
    await local.server.close();
    await keys.server.close();
  }
});

test("the unverified-activity hook's parse makes at most eight loads", async () => {
  const contexts = await countingServer({ "@context": { extra: "https://x.example/extra" } });
  let hookCalls = 0;
  const local = await receiver(() => hookCalls++);
  try {
    // Nine: the most remote contexts the context work limit lets through.
    const remote = Array.from(
      { length: 9 },
      (_, i) => new URL(`/ctx/${i}`, contexts.server.url).href,
    );
    const response = await withLogs(() =>
      fetch(postTo(local.inbox, {
        "@context": [AS, ...remote],
        id: "https://attacker.example/follows/1",
        type: "Follow",
        actor: "https://attacker.example/users/mallory",
        object: new URL("/users/bob", local.server.url).href,
      }))
    );
    assertEquals([response.status, await response.text()], [401, "Unauthorized"]);
    // Parsing gave up at the budget: no hook call, eight loads.
    assertEquals(hookCalls, 0);
    assertEquals(contexts.requests.length, 8);
  } finally {
    await local.server.close();
    await contexts.server.close();
  }
});

test("the inbox worker drops a queued activity past the document limits", async () => {
  const queue = new InProcessMessageQueue();
  const federation: Federation<void> = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  registerTestActor(federation);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, () => {});
  const dropped = deferred<MessageEvent>();
  federation.on("dropped", (event) => dropped.resolve(event));
  // A queue row is anyone's: written here as a hostile one would be.
  await queue.enqueue(queuedInboxMessage(contextBomb(12_000)));
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const event = await within(withLogs(() => dropped.promise), "the dropped event");
    assert(
      "reason" in event && String(event.reason).includes("too complex"),
      JSON.stringify(event),
    );
  } finally {
    controller.abort();
    await running;
  }
});

test("the remote contexts of one queued activity share one time budget", async () => {
  // Each context answers after a second, within any one request's limit:
  // eight of them held the only inbox worker for eight seconds and more.
  const requests: string[] = [];
  const slow = await startTestServer(async (request) => {
    requests.push(new URL(request.url).pathname);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return Response.json({ "@context": { extra: "https://x.example/extra" } }, {
      headers: { "Content-Type": "application/ld+json" },
    });
  });
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    remoteDocuments: { loadTimeout: { milliseconds: 1_500 } },
  });
  registerTestActor(federation);
  const outcomes: string[] = [];
  const first = deferred();
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, () => {});
  for (const type of ["completed", "retrying", "dropped", "failed"] as const) {
    federation.on(type, (event) => {
      outcomes.push(
        type === "retrying" ? `retrying: ${"reason" in event ? event.reason : ""}` : type,
      );
      first.resolve();
    });
  }
  await queue.enqueue(queuedInboxMessage({
    "@context": [AS, ...Array.from({ length: 8 }, (_, i) => new URL(`/ctx/${i}`, slow.url).href)],
    id: "https://attacker.example/follows/1",
    type: "Follow",
    actor: "https://attacker.example/users/mallory",
    object: "https://example.com/users/bob",
  }));
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await within(withLogs(() => first.promise), "the first outcome");
    // Retried later, as for any slow server; not parsed after eight seconds.
    assertEquals(outcomes.length, 1);
    assert(outcomes[0].startsWith("retrying"), outcomes[0]);
    assert(requests.length <= 2, `${requests.length} contexts were requested`);
  } finally {
    controller.abort();
    await running;
    await slow.close();
  }
});

test("lookupObject() refuses a document past the document limits", async () => {
  const bomb = await countingServer({ ...contextBomb(12_000), id: "placeholder" });
  try {
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
    });
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    const found = await withLogs(() => ctx.lookupObject(new URL("/bomb", bomb.server.url)));
    assertEquals(found, null);
    assertEquals(bomb.requests, ["/bomb"]);
  } finally {
    await bomb.server.close();
  }
});

test("the remoteDocuments option is checked when the federation is created", () => {
  const kv = new MemoryKvStore();
  for (
    const [remoteDocuments, name] of [
      [{ maxValues: 0 }, "remoteDocuments.maxValues"],
      [{ maxLoads: 1.5 }, "remoteDocuments.maxLoads"],
      [{ loadTimeout: { seconds: -1 } }, "remoteDocuments.loadTimeout"],
      [{ maxValue: 10 }, "remoteDocuments.maxValue"],
    ] as const
  ) {
    let message = "";
    try {
      createFederation<void>({ kv, remoteDocuments: remoteDocuments as never });
    } catch (error) {
      message = (error as Error).message;
    }
    assert(message.includes(name), `${JSON.stringify(remoteDocuments)}: ${message}`);
  }
  createFederation<void>({
    kv,
    remoteDocuments: { maxValues: 10_000, loadTimeout: { seconds: 5 } },
  });
});
