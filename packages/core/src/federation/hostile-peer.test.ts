// The hostile-peer scenarios that concern a federation's workers: a remote
// server that never answers, or trickles, must not hold a worker slot past
// the remote request time limit, and a hostile inbox's endless error body
// must not be read whole.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  deferred,
  startTestServer,
  test,
  within,
} from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { z } from "zod";
import { generateCryptoKeyPair } from "../activitypub/actors/keys.ts";
import { RemoteTimeoutError } from "../activitypub/network/errors.ts";
import { startHostileServer } from "../activitypub/network/testdata/hostile-server.ts";
import { deliverSignedActivity } from "../activitypub/outbox/deliver.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { DurationInput } from "../time/duration.ts";
import { createFederation } from "./federation.ts";
import { withWorkers } from "./testdata/test-support.ts";

const base = new URL("https://example.com/");
const MiB = 1024 * 1024;
const { privateKey } = await generateCryptoKeyPair();

/** Delivers a Follow to `inbox`, signed, as the outbox worker would. */
function deliverTo(inbox: URL, timeout?: DurationInput) {
  return deliverSignedActivity({
    activity: { "@context": "https://www.w3.org/ns/activitystreams", type: "Follow" },
    inbox,
    keys: [{ keyId: new URL("https://example.com/users/alice#main-key"), privateKey }],
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    ...(timeout == null ? {} : { timeout }),
  });
}

test("a worker slot held by a trickling server is freed at the time limit and the next message runs", async () => {
  await using tarpit = await startHostileServer({ kind: "trickle", intervalMs: 50 });
  await using queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    remoteRequests: { timeout: { milliseconds: 500 } },
  });
  const finished: string[] = [];
  const second = deferred<void>();
  const task = federation.defineTask("look-up", {
    schema: z.object({ name: z.string(), url: z.string().nullable() }),
    async handler(ctx, { name, url }) {
      // The document loader every activity's parsing goes through.
      const result = url == null ? null : await ctx.lookupObject(url);
      finished.push(`${name}:${result == null ? "null" : "object"}`);
      if (name === "second") second.resolve();
    },
  });
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(task, { name: "stuck", url: new URL("/actor", tarpit.url).href });
    await ctx.enqueueTask(task, { name: "second", url: null });
    await within(second.promise, "the message queued behind the stuck one");
  });
  assertEquals(finished, ["stuck:null", "second:null"]);
  await tarpit.waitForClosed(1);
});

test("a delivery to an inbox that never answers ends at the delivery time limit, to be retried", async () => {
  await using inbox = await startHostileServer({ kind: "hang" });
  const result = await deliverTo(new URL("/inbox", inbox.url), { milliseconds: 300 });
  assertEquals(result.kind, "retryableFailure");
  assert(result.kind !== "delivered");
  assertInstanceOf(result.cause, RemoteTimeoutError);
  await inbox.waitForClosed(1);
});

test("a hostile inbox's endless error body is cut after a few KiB", async () => {
  await using inbox = await startHostileServer({
    kind: "huge",
    totalBytes: 256 * MiB,
    declareLength: false,
    status: 500,
    contentType: "text/plain",
  });
  const result = await deliverTo(new URL("/inbox", inbox.url));
  assert(result.kind === "retryableFailure");
  assertEquals(result.status, 500);
  assert(result.body.length <= 4096, `kept ${result.body.length} characters`);
  // Both knocks were answered with the endless body; each was cut short.
  await inbox.waitForClosed(2);
  assert(inbox.bytesSent < 96 * MiB, `the inbox sent ${inbox.bytesSent} bytes`);
});

test("an activity naming a hundred remote contexts makes at most eight requests and is refused", async () => {
  await using contexts = await startTestServer(() =>
    Response.json({ "@context": { ex: "https://example.com/ns#" } }, {
      headers: { "Content-Type": "application/ld+json" },
    })
  );
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    skipSignatureVerification: true,
  });
  let heard = 0;
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, () => {
    heard++;
  });
  const activity = {
    "@context": [
      "https://www.w3.org/ns/activitystreams",
      ...Array.from({ length: 100 }, (_, i) => new URL(`/context/${i}`, contexts.url).href),
    ],
    id: "https://remote.example/follows/1",
    type: "Follow",
    actor: "https://remote.example/users/mallory",
    object: "https://example.com/users/alice",
  };
  const response = await federation.fetch(
    new Request(new URL("/inbox", base), {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: JSON.stringify(activity),
    }),
    { contextData: undefined },
  );
  assertEquals(response.status, 400);
  assertEquals(heard, 0);
  assert(contexts.requests.length <= 8, `${contexts.requests.length} context requests`);
});
