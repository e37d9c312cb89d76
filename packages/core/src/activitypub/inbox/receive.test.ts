import { assert, assertEquals, test } from "@fedify/fixture";
import { Temporal } from "@js-temporal/polyfill";
import { Create, Follow, Note } from "@fedify/vocab";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { PermanentError } from "../../processing/errors.ts";
import { startTestServer } from "@fedify/fixture";
import { deferred, within as withTimeout } from "@fedify/fixture";
import {
  follow,
  post,
  startServer,
  withServers,
} from "../../federation/testdata/inbox-test-support.ts";
import { RecordingQueue, testKeyPair } from "../../federation/testdata/test-support.ts";

const { privateKey } = await testKeyPair();

test("a signed activity sent by sendActivity() reaches the recipient's inbox listener", () =>
  withServers(async (remote, local) => {
    local.received.length = 0;
    const ctx = remote.federation.createContext(remote.server.url, undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: local.url("/users/bob"), inboxId: local.url("/users/bob/inbox") },
      new Follow({
        id: remote.url("/follows/sent"),
        actor: remote.url("/users/alice"),
        object: local.url("/users/bob"),
      }),
    );
    assertEquals(local.received.map((r) => [r.recipient, r.activity.id?.href]), [
      ["bob", remote.url("/follows/sent").href],
    ]);
  }));

test("the shared inbox gives listeners a null recipient", () =>
  withServers(async (remote, local, aliceKey) => {
    local.received.length = 0;
    const response = await post(
      local.url("/inbox"),
      JSON.stringify(follow(remote, local, "/follows/shared")),
      aliceKey,
    );
    assertEquals(response.status, 202);
    assertEquals(local.received.map((r) => r.recipient), [null]);
  }));

test("unsigned, tampered, wrongly keyed, expired and impersonating requests get 401 and reach no listener", () =>
  withServers(async (remote, local, aliceKey) => {
    local.received.length = 0;
    const inbox = local.url("/users/bob/inbox");
    const body = JSON.stringify(follow(remote, local, "/follows/bad"));
    const other = await generateCryptoKeyPair();
    const mallory = JSON.stringify({
      ...follow(remote, local, "/follows/mallory"),
      actor: remote.url("/users/mallory").href,
    });
    const statuses = [
      (await post(inbox, body, null)).status,
      (await post(inbox, body, aliceKey, body.replace("Follow", "Block"))).status,
      (await post(inbox, body, { ...aliceKey, privateKey: other.privateKey })).status,
      (await post(inbox, body, { ...aliceKey, at: Temporal.Now.instant().subtract({ hours: 2 }) }))
        .status,
      // Signed by alice, claiming to be from mallory.
      (await post(inbox, mallory, aliceKey)).status,
    ];
    assertEquals(statuses, [401, 401, 401, 401, 401]);
    assertEquals(local.received.length, 0);
    const response = await fetch(
      new Request(inbox, {
        method: "POST",
        headers: { "Content-Type": "application/activity+json" },
        body,
      }),
    );
    assertEquals(await response.text(), "Who are you?");
  }));

test("a body that is not JSON gets 400, an unknown recipient 404, a GET 405", () =>
  withServers(async (remote, local, aliceKey) => {
    const notJson = await post(local.url("/users/bob/inbox"), "{not json", aliceKey);
    assertEquals(notJson.status, 400);
    const unknown = await post(
      local.url("/users/nobody/inbox"),
      JSON.stringify(follow(remote, local, "/follows/nobody")),
      aliceKey,
    );
    assertEquals(unknown.status, 404);
    const huge = await post(
      local.url("/users/bob/inbox"),
      JSON.stringify({ ...follow(remote, local, "/follows/huge"), pad: "x".repeat(1024 * 1024) }),
      aliceKey,
    );
    assertEquals(huge.status, 413);
    const get = await fetch(local.url("/users/bob/inbox"));
    await get.body?.cancel();
    assertEquals([get.status, get.headers.get("allow")], [405, "POST"]);
  }));

test("the same activity received twice runs the listener once per inbox", () =>
  withServers(async (remote, local, aliceKey) => {
    local.received.length = 0;
    const body = JSON.stringify(follow(remote, local, "/follows/twice"));
    const statuses = [
      (await post(local.url("/users/bob/inbox"), body, aliceKey)).status,
      (await post(local.url("/users/bob/inbox"), body, aliceKey)).status,
      (await post(local.url("/users/carol/inbox"), body, aliceKey)).status,
    ];
    assertEquals(statuses, [202, 202, 202]);
    assertEquals(local.received.map((r) => r.recipient), ["bob", "carol"]);
  }));

test('withIdempotency("global") runs an activity once whatever the inbox', async () => {
  const remote = await startServer();
  const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
  const server = await startServer({ idempotency: "global" });
  try {
    const body = JSON.stringify(follow(remote, server, "/follows/global"));
    await post(server.url("/users/bob/inbox"), body, aliceKey);
    await post(server.url("/users/carol/inbox"), body, aliceKey);
    await post(server.url("/inbox"), body, aliceKey);
    assertEquals(server.received.map((r) => r.recipient), ["bob"]);
  } finally {
    await remote.server.close();
    await server.server.close();
  }
});

test("with an inbox queue the activity is enqueued, answered 202 and handled by a worker", async () => {
  const remote = await startServer();
  const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
  const queue = new RecordingQueue();
  const server = await startServer({ queue });
  const controller = new AbortController();
  const worker = server.federation.startQueue(undefined, { signal: controller.signal });
  try {
    const created = deferred();
    server.federation.on("completed", () => created.resolve());
    const note = new Create({
      id: remote.url("/creates/1"),
      actor: remote.url("/users/alice"),
      object: new Note({ id: remote.url("/notes/1"), content: "Hi" }),
    });
    const response = await post(
      server.url("/users/bob/inbox"),
      JSON.stringify(await note.toJsonLd()),
      aliceKey,
    );
    assertEquals(response.status, 202);
    assertEquals(queue.enqueued.map((record) => record.message.type), ["inbox"]);
    await withTimeout(created.promise, "the inbox worker");
    assert(server.received[0].activity instanceof Create);
    assertEquals(server.received[0].recipient, "bob");
  } finally {
    controller.abort();
    await worker;
    await remote.server.close();
    await server.server.close();
    await queue[Symbol.asyncDispose]();
  }
});

test("skipSignatureVerification lets an unsigned activity through", async () => {
  const remote = await startServer();
  const server = await startServer({ skipSignatureVerification: true });
  try {
    const response = await post(
      server.url("/users/bob/inbox"),
      JSON.stringify(follow(remote, server, "/follows/unsigned")),
      null,
    );
    assertEquals(response.status, 202);
    assertEquals(server.received.map((r) => r.recipient), ["bob"]);
  } finally {
    await remote.server.close();
    await server.server.close();
  }
});

test("forwardActivity() delivers the activity as received, signed by the forwarder", async () => {
  const bodies: string[] = [];
  const headers: Headers[] = [];
  const target = await startTestServer(async (request) => {
    headers.push(request.headers);
    bodies.push(await request.text());
    return new Response(null, { status: 202 });
  });
  const remote = await startServer();
  const server = await startServer({ forwardTo: new URL("/inbox", target.url) });
  try {
    const create = {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: remote.url("/creates/forwarded").href,
      type: "Create",
      actor: remote.url("/users/alice").href,
      object: { id: remote.url("/notes/2").href, type: "Note", content: "Reply" },
      "https://example.com/ns#extra": "kept as is",
    };
    const body = JSON.stringify(create);
    const response = await post(server.url("/users/bob/inbox"), body, {
      keyId: remote.url("/users/alice#main-key"),
      privateKey,
    });
    assertEquals(response.status, 202);
    assertEquals(bodies.map((text) => JSON.parse(text)), [create]);
    assert(
      headers[0].get("signature-input")?.includes(server.url("/users/bob#main-key").href),
      "signed by the forwarder",
    );
  } finally {
    await target.close();
    await remote.server.close();
    await server.server.close();
  }
});

test("setSharedKeyDispatcher() signs key fetches, so senders in authorized fetch mode verify", async () => {
  const remote = await startServer({ authorizedFetch: true });
  const plain = await startServer();
  const signing = await startServer({ sharedKey: "instance" });
  try {
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const body = JSON.stringify(follow(remote, plain, "/follows/secure"));
    assertEquals((await post(plain.url("/users/bob/inbox"), body, aliceKey)).status, 401);
    assertEquals((await post(signing.url("/users/bob/inbox"), body, aliceKey)).status, 202);
    assertEquals(signing.received.length, 1);
  } finally {
    await remote.server.close();
    await plain.server.close();
    await signing.server.close();
  }
});

test("without an inbox queue a failed listener answers 500 and the sender's retry runs it again", async () => {
  const remote = await startServer();
  const server = await startServer({
    failures: [new Error("database down"), new PermanentError("not for us")],
  });
  try {
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const create = (id: string) =>
      JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: remote.url(id).href,
        type: "Create",
        actor: remote.url("/users/alice").href,
        object: { id: remote.url(`${id}/note`).href, type: "Note", content: "Hi" },
      });
    const inbox = server.url("/users/bob/inbox");
    const statuses = [
      (await post(inbox, create("/creates/retried"), aliceKey)).status,
      // A PermanentError: accepted, so that the sender does not retry.
      (await post(inbox, create("/creates/given-up"), aliceKey)).status,
      (await post(inbox, create("/creates/given-up"), aliceKey)).status,
      // The failed one again: its failure released its id.
      (await post(inbox, create("/creates/retried"), aliceKey)).status,
    ];
    assertEquals(statuses, [500, 202, 202, 202]);
    assertEquals(server.received.map((r) => r.activity.id?.href), [
      remote.url("/creates/retried").href,
    ]);
    const malformed = await post(
      inbox,
      JSON.stringify({ ...JSON.parse(create("/creates/bad")), "@context": 42 }),
      aliceKey,
    );
    assertEquals(malformed.status, 400);
  } finally {
    await remote.server.close();
    await server.server.close();
  }
});
