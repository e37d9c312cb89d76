import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { Create, Endpoints, Note, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { RouteNotRegisteredError } from "../../federation/errors.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FanoutMessage, OutboxMessage } from "./messages.ts";
import { collectInboxes } from "./send-activity.ts";
import type { FederationQueueOptions } from "../../processing/queue-roles.ts";
import { RecordingQueue, registerTestActor } from "../../federation/testdata/test-support.ts";

const base = new URL("https://example.com/");

function createActivity(id = "https://example.com/activities/1"): Create {
  return new Create({
    id: new URL(id),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ content: "Hello" }),
  });
}

function createRecipient(server: string, name: string, sharedInbox = true): Person {
  return new Person({
    id: new URL(`https://${server}/users/${name}`),
    inbox: new URL(`https://${server}/users/${name}/inbox`),
    endpoints: sharedInbox
      ? new Endpoints({ sharedInbox: new URL(`https://${server}/inbox`) })
      : null,
  });
}

function createManualFederation(queue: RecordingQueue | FederationQueueOptions): Federation<void> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  registerTestActor(federation);
  return federation;
}

test("sendActivity() enqueues one outbox message per recipient inbox", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const ctx = createManualFederation(queue).createContext(base, undefined);
  const activity = createActivity();
  await ctx.sendActivity(
    { identifier: "alice" },
    [createRecipient("a.example", "bob"), {
      id: null,
      inboxId: new URL("https://b.example/inbox"),
    }],
    activity,
  );
  const messages = queue.enqueued.map((record) => record.message as OutboxMessage);
  assertEquals(messages.map((message) => message.type), ["outbox", "outbox"]);
  const [first, second] = messages;
  assertEquals(first.inbox, "https://a.example/users/bob/inbox");
  assertEquals(first.sharedInbox, false);
  assertEquals(first.actorIds, ["https://a.example/users/bob"]);
  assertEquals(second.inbox, "https://b.example/inbox");
  assertEquals(second.actorIds, []);
  // Signed once, before the fan-out, with the sender's RSA key: every
  // inbox gets the same Linked Data signature.
  const { signature, ...unsigned } = first.activity as Record<string, unknown>;
  assertEquals(unsigned, await activity.toJsonLd());
  assertEquals((signature as { type?: unknown }).type, "RsaSignature2017");
  assertEquals(second.activity, first.activity);
  assertEquals(
    [first.activityId, first.activityType, first.senderIdentifier, first.baseUrl, first.attempt],
    ["https://example.com/activities/1", "Create", "alice", "https://example.com", 0],
  );
  assert(first.id !== second.id, "each message has its own ID");
  assert(!Number.isNaN(Date.parse(first.started)), "started is an ISO timestamp");
  assertEquals(typeof first.traceContext, "object");
});

test("sendActivity() merges recipients sharing an inbox when preferSharedInbox is set", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const ctx = createManualFederation(queue).createContext(base, undefined);
  await ctx.sendActivity(
    { identifier: "alice" },
    [
      createRecipient("a.example", "bob"),
      createRecipient("a.example", "carol"),
      createRecipient("c.example", "dave", false),
    ],
    createActivity(),
    { preferSharedInbox: true, orderingKey: "note-1" },
  );
  const messages = queue.enqueued.map((record) => record.message as OutboxMessage);
  assertEquals(
    messages.map((message) => [message.inbox, message.sharedInbox, message.actorIds]),
    [
      ["https://a.example/inbox", true, [
        "https://a.example/users/bob",
        "https://a.example/users/carol",
      ]],
      ["https://c.example/users/dave/inbox", false, ["https://c.example/users/dave"]],
    ],
  );
  assertEquals(messages.map((message) => message.orderingKey), ["note-1", "note-1"]);
  assertEquals(queue.enqueued[0].options, { orderingKey: "note-1" });
});

test("sendActivity() enqueues one fan-out message above the threshold or when forced", async () => {
  const outbox = new RecordingQueue({ deliver: false });
  const fanout = new RecordingQueue({ deliver: false });
  const ctx = createManualFederation({ outbox, fanout }).createContext(base, undefined);
  const many = Array.from({ length: 6 }, (_, i) => createRecipient(`s${i}.example`, "u"));
  await ctx.sendActivity({ identifier: "alice" }, many, createActivity());
  await ctx.sendActivity({ identifier: "alice" }, many.slice(0, 1), createActivity(), {
    fanout: "force",
  });
  await ctx.sendActivity({ identifier: "alice" }, many, createActivity(), { fanout: "skip" });
  const fanouts = fanout.enqueued.map((record) => record.message as FanoutMessage);
  assertEquals(fanouts.map((message) => Object.keys(message.inboxes).length), [6, 1]);
  assertEquals(fanouts[0].type, "fanout");
  assertEquals(fanouts[0].inboxes["https://s0.example/users/u/inbox"], {
    actorIds: ["https://s0.example/users/u"],
    sharedInbox: false,
  });
  assertEquals(outbox.enqueued.length, 6);
});

test("sendActivity() to followers enumerates every page of the followers dispatcher", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = createManualFederation(queue);
  federation.setFollowersDispatcher("/users/{identifier}/followers", (_ctx, identifier, cursor) => {
    assertEquals(identifier, "alice");
    return cursor == null
      ? { items: [createRecipient("a.example", "bob")], nextCursor: "2" }
      : { items: [createRecipient("b.example", "carol")], nextCursor: null };
  });
  await federation.createContext(base, undefined).sendActivity(
    { identifier: "alice" },
    "followers",
    createActivity(),
  );
  assertEquals(
    queue.enqueued.map((record) => (record.message as OutboxMessage).inbox),
    ["https://a.example/users/bob/inbox", "https://b.example/users/carol/inbox"],
  );
});

test("sendActivity() to followers pages from the first cursor when the one-shot call returns null", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = createManualFederation(queue);
  const cursors: (string | null)[] = [];
  const pages: Record<string, { items: Person[]; nextCursor: string | null }> = {
    first: { items: [createRecipient("a.example", "bob")], nextCursor: "second" },
    second: { items: [createRecipient("b.example", "carol")], nextCursor: null },
  };
  federation.setFollowersDispatcher("/users/{identifier}/followers", (_ctx, _id, cursor) => {
    cursors.push(cursor);
    return cursor == null ? null : pages[cursor];
  }).setFirstCursor(() => "first");
  await federation.createContext(base, undefined).sendActivity(
    { identifier: "alice" },
    "followers",
    createActivity(),
  );
  assertEquals(cursors, [null, "first", "second"]);
  assertEquals(
    queue.enqueued.map((record) => (record.message as OutboxMessage).inbox),
    ["https://a.example/users/bob/inbox", "https://b.example/users/carol/inbox"],
  );
});

test("sendActivity() rejects malformed arguments before enqueueing", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const ctx = createManualFederation(queue).createContext(base, undefined);
  const bob = createRecipient("a.example", "bob");
  await assertRejects(
    () => ctx.sendActivity({ identifier: "" }, bob, createActivity()),
    TypeError,
    "sender",
  );
  await assertRejects(
    () => ctx.sendActivity({ identifier: "alice" }, bob, new Note({}) as never),
    TypeError,
    "must be an Activity",
  );
  await assertRejects(
    () => ctx.sendActivity({ identifier: "alice" }, bob, new Create({})),
    TypeError,
    "must have an actor",
  );
  await assertRejects(
    () => ctx.sendActivity({ identifier: "alice" }, [bob, "x" as never], createActivity()),
    TypeError,
    "recipient #1",
  );
  await assertRejects(
    () =>
      ctx.sendActivity({ identifier: "alice" }, bob, createActivity(), { fanout: "x" as never }),
    TypeError,
    "fanout option",
  );
  await assertRejects(
    () => ctx.sendActivity({ identifier: "alice" }, "followers", createActivity()),
    RouteNotRegisteredError,
    "setFollowersDispatcher",
  );
  assertEquals(queue.enqueued.length, 0);
});

test("sendActivity() gives an activity without an ID one on the sender's origin, as Fedify does", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const ctx = createManualFederation(queue).createContext(base, undefined);
  const activity = new Create({ actor: new URL("https://example.com/users/alice") });
  await ctx.sendActivity({ identifier: "alice" }, createRecipient("a.example", "b"), activity);
  const message = queue.enqueued[0].message as OutboxMessage;
  assert(
    /^https:\/\/example\.com\/#Create\/[0-9a-f-]{36}$/.test(message.activityId ?? ""),
    message.activityId,
  );
  assertEquals((message.activity as { id: string }).id, message.activityId);
});

test("workers start on the first enqueue unless manuallyStartQueue is set", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = createFederation<void>({ kv: new MemoryKvStore(), queue });
  registerTestActor(federation);
  const ctx = federation.createContext(base, undefined);
  assertEquals(queue.listenCount, 0);
  await ctx.sendActivity(
    { identifier: "alice" },
    createRecipient("a.example", "b"),
    createActivity(),
  );
  await queue.waitUntil(() => queue.listenCount > 0, "the worker to start");
  await ctx.sendActivity(
    { identifier: "alice" },
    createRecipient("a.example", "b"),
    createActivity(),
  );
  // One queue object serves every role: it is listened to once.
  assertEquals(queue.listenCount, 1);

  const manual = new RecordingQueue({ deliver: false });
  const manualCtx = createManualFederation(manual).createContext(base, undefined);
  await manualCtx.sendActivity(
    { identifier: "alice" },
    createRecipient("a.example", "b"),
    createActivity(),
  );
  assertEquals([manual.enqueued.length, manual.listenCount], [1, 0]);
});

test("collectInboxes() keeps each shared inbox's recipients once, in the order given", () => {
  // 3 hosts, 300 followers, each listed twice (as a followers collection
  // that overlaps an explicit list would), plus one without a shared inbox.
  const recipients = [];
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 300; i++) recipients.push(createRecipient(`h${i % 3}.example`, `u${i}`));
  }
  recipients.push(createRecipient("h0.example", "solo", false));
  const inboxes = collectInboxes(recipients, true);
  assertEquals(Object.keys(inboxes), [
    "https://h0.example/inbox",
    "https://h1.example/inbox",
    "https://h2.example/inbox",
    "https://h0.example/users/solo/inbox",
  ]);
  const h1 = inboxes["https://h1.example/inbox"];
  assertEquals(h1.sharedInbox, true);
  assertEquals(h1.actorIds.length, 100);
  assertEquals(h1.actorIds.slice(0, 3), [
    "https://h1.example/users/u1",
    "https://h1.example/users/u4",
    "https://h1.example/users/u7",
  ]);
  assertEquals(inboxes["https://h0.example/users/solo/inbox"], {
    actorIds: ["https://h0.example/users/solo"],
    sharedInbox: false,
  });
  // Without the preference, one inbox per recipient, duplicates merged.
  assertEquals(Object.keys(collectInboxes(recipients, false)).length, 301);
});

test("collectInboxes() keeps the order given when no recipient repeats, and drops only repeats", () => {
  const recipients = [
    createRecipient("h0.example", "z"),
    createRecipient("h0.example", "a"),
    createRecipient("h1.example", "m"),
    createRecipient("h0.example", "b"),
  ];
  assertEquals(collectInboxes(recipients, true), {
    "https://h0.example/inbox": {
      actorIds: [
        "https://h0.example/users/z",
        "https://h0.example/users/a",
        "https://h0.example/users/b",
      ],
      sharedInbox: true,
    },
    "https://h1.example/inbox": { actorIds: ["https://h1.example/users/m"], sharedInbox: true },
  });
  // One repeat, not next to its first: the first place is kept.
  const repeated = collectInboxes([...recipients, createRecipient("h0.example", "z")], true);
  assertEquals(repeated["https://h0.example/inbox"].actorIds, [
    "https://h0.example/users/z",
    "https://h0.example/users/a",
    "https://h0.example/users/b",
  ]);
});
