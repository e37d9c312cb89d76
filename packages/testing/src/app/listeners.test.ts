// Inbox and outbox listeners under the kit: postOutboxActivity() through
// the real outbox route, forwardActivity() recorded, and the standalone
// listener contexts.
import { Create, Follow, Note, Person } from "@fedify/vocab";
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  test,
} from "@fedify/fixture";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import { createFederation, createInboxContext, createOutboxContext } from "./mod.ts";

const ORIGIN = "https://example.com";
const alice = new URL("/users/alice", ORIGIN);
const bob = new Person({
  id: new URL("https://remote.example/users/bob"),
  inbox: new URL("https://remote.example/users/bob/inbox"),
});

function appWithOutbox() {
  const federation = createFederation<{ app: string }>({ contextData: { app: "demo" } });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier })
        : null,
  );
  const seen: string[] = [];
  const errors: string[] = [];
  federation.setOutboxListeners("/users/{identifier}/outbox")
    .authorize((ctx) => ctx.request.headers.get("authorization") !== "Bearer wrong")
    .on(Create, async (ctx, create) => {
      seen.push(`${ctx.identifier} ${ctx.data.app} delivered=${ctx.hasDeliveredActivity()}`);
      await ctx.sendActivity({ identifier: ctx.identifier }, bob, create);
      seen.push(`sent ${ctx.getSentActivities().length} delivered=${ctx.hasDeliveredActivity()}`);
    })
    .on(Follow, () => {
      throw new RangeError("follows are not posted here");
    })
    .onError((ctx, error) => void errors.push(`${ctx.identifier}: ${error.message}`));
  return { federation, seen, errors };
}

const note = (id: string) =>
  new Create({
    id: new URL(`/creates/${id}`, ORIGIN),
    actor: alice,
    object: new Note({ content: `note ${id}` }),
  });

test("postOutboxActivity runs the outbox listener through the outbox route and records what it sends", async () => {
  const { federation, seen, errors } = appWithOutbox();
  await federation.postOutboxActivity("alice", note("1"));
  assertEquals(seen, ["alice demo delivered=false", "sent 1 delivered=true"]);
  assertEquals(errors, []);
  assertEquals(federation.sentActivities.length, 1);
  const [sent] = federation.sentActivities;
  assertInstanceOf(sent.activity, Create);
  assertEquals(sent.activity.id?.href, "https://example.com/creates/1");
  assertEquals(sent.sender, { identifier: "alice" });
  assertEquals(sent.forwarded, undefined);
});

test("postOutboxActivity accepts an activity without an id, as a client posts it", async () => {
  const { federation, seen } = appWithOutbox();
  await federation.postOutboxActivity(
    "alice",
    new Create({ actor: alice, object: new Note({ content: "no id" }) }),
  );
  assertEquals(seen.length, 2);
});

test("postOutboxActivity rejects with what the listener throws, after the error handler saw it", async () => {
  const { federation, errors } = appWithOutbox();
  await assertRejects(
    () => federation.postOutboxActivity("alice", new Follow({ actor: alice, object: bob.id })),
    RangeError,
    "follows are not posted here",
  );
  assertEquals(errors, ["alice: follows are not posted here"]);
});

test("postOutboxActivity refuses what the outbox refuses: authorize(), an unknown actor, another actor", async () => {
  const { federation, seen, errors } = appWithOutbox();
  await assertRejects(
    () =>
      federation.postOutboxActivity("alice", note("2"), {
        headers: { authorization: "Bearer wrong" },
      }),
    Error,
    "unauthorized (401)",
  );
  await assertRejects(() => federation.postOutboxActivity("carol", note("3")), Error, "(404)");
  await assertRejects(
    () =>
      federation.postOutboxActivity(
        "alice",
        new Create({ id: new URL("/creates/4", ORIGIN), actor: bob.id, object: new Note({}) }),
      ),
    Error,
    "not the outbox's owner",
  );
  assertEquals(seen, []);
  assertEquals(errors, ["alice: The activity's actor is not the outbox's owner."]);
  await assertRejects(
    // @ts-expect-error: a string is not an activity.
    () => federation.postOutboxActivity("alice", "https://example.com/creates/5"),
    TypeError,
    "takes an Activity",
  );
});

test("postOutboxActivity without outbox listeners says to register them", async () => {
  const federation = createFederation<void>();
  await assertRejects(
    () => federation.postOutboxActivity("alice", note("6")),
    Error,
    "setOutboxListeners()",
  );
});

test("an inbox listener's forwardActivity is recorded with the received activity and its JSON-LD", async () => {
  const federation = createFederation<void>();
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Create, async (ctx, create) => {
      await ctx.forwardActivity({ identifier: "alice" }, "followers");
      assertEquals(ctx.getSentActivities().map((s) => [s.activity, s.forwarded]), [
        [create, true],
      ]);
    });
  const reply = new Create({
    id: new URL("https://remote.example/creates/1"),
    actor: bob.id,
    object: new Note({ content: "a reply" }),
  });
  await federation.receiveActivity(reply);
  assertEquals(federation.sentActivities.length, 1);
  const [sent] = federation.sentActivities;
  assertEquals(sent.forwarded, true);
  assertEquals(sent.sender, { identifier: "alice" });
  assertEquals(sent.recipients, "followers");
  assertEquals(sent.activity.id?.href, "https://remote.example/creates/1");
  assertEquals((sent.rawActivity as { id?: string }).id, "https://remote.example/creates/1");
  assertEquals(sent.sentOrder, 1);
});

test("an outbox listener's forwardActivity is recorded and counts as delivered", async () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  );
  const delivered: boolean[] = [];
  federation.setOutboxListeners("/users/{identifier}/outbox")
    .on(Create, async (ctx) => {
      await ctx.forwardActivity({ identifier: ctx.identifier }, bob);
      delivered.push(ctx.hasDeliveredActivity());
    });
  await federation.postOutboxActivity("alice", note("7"));
  assertEquals(delivered, [true]);
  assertEquals(federation.sentActivities.map((s) => [s.forwarded, s.activity.id?.href]), [
    [true, "https://example.com/creates/7"],
  ]);
});

test("the outbox route warns of a listener that sent nothing, not of one whose sending the kit recorded", async () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) => new Person({ id: ctx.getActorUri(identifier) }),
  );
  federation.setOutboxListeners("/users/{identifier}/outbox")
    .on(Create, async (ctx, create) => {
      const content = (await create.getObject())?.content?.toString();
      if (content === "note send") await ctx.sendActivity({ identifier: "alice" }, bob, create);
      if (content === "note forward") await ctx.forwardActivity({ identifier: "alice" }, bob);
    });
  const warnings: string[] = [];
  await configure({
    sinks: {
      collect: (record: LogRecord) => void warnings.push(record.message.map(String).join("")),
    },
    loggers: [
      { category: ["fedwork"], sinks: ["collect"], lowestLevel: "warning" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
    reset: true,
  });
  try {
    await federation.postOutboxActivity("alice", note("send"));
    await federation.postOutboxActivity("alice", note("forward"));
    assertEquals(warnings, []);
    await federation.postOutboxActivity("alice", note("nothing"));
    assertEquals(warnings.length, 1);
    assert(warnings[0].includes("returned without sending or forwarding"), warnings[0]);
  } finally {
    await reset();
  }
  assertEquals(federation.sentActivities.length, 2);
});

test("createInboxContext makes a listener's context: recipient, a signal that never aborts, forwarding", async () => {
  const follow = new Follow({
    id: new URL("https://remote.example/follows/1"),
    actor: bob.id,
    object: alice,
  });
  const ctx = createInboxContext({ data: { n: 1 }, recipient: "alice", activity: follow });
  assertEquals(ctx.recipient, "alice");
  assert("forwardActivity" in ctx && "recipient" in ctx && !("hasDeliveredActivity" in ctx));
  assertEquals(ctx.signal.aborted, false);
  assertEquals(ctx.data, { n: 1 });
  await ctx.forwardActivity({ identifier: "alice" }, bob);
  assertEquals(ctx.getSentActivities().map((s) => [s.activity, s.forwarded]), [[follow, true]]);
  assertEquals(ctx.federation.sentActivities.length, 1);
  const other = ctx.clone({ n: 2 });
  assertEquals([other.recipient, other.data, other.getSentActivities()], ["alice", { n: 2 }, []]);
  await other.forwardActivity({ identifier: "alice" }, bob);
  assertEquals(other.getSentActivities().length, 1);
  const shared = createInboxContext({ data: undefined });
  assertEquals(shared.recipient, null);
  await assertRejects(
    () => shared.forwardActivity({ identifier: "alice" }, bob),
    TypeError,
    "the activity option",
  );
});

test("createOutboxContext makes an outbox listener's context that tells whether it delivered", async () => {
  const federation = createFederation<void>();
  const ctx = createOutboxContext({ data: undefined, identifier: "alice", federation });
  assertEquals(ctx.identifier, "alice");
  assertEquals(ctx.request.method, "POST");
  assert("hasDeliveredActivity" in ctx && "forwardActivity" in ctx && "identifier" in ctx);
  assertEquals(ctx.hasDeliveredActivity(), false);
  await ctx.sendActivity({ identifier: "alice" }, bob, note("8"));
  assertEquals(ctx.hasDeliveredActivity(), true);
  assertEquals(federation.sentActivities.length, 1);
  assert(ctx.clone(undefined).hasDeliveredActivity() === false);
  assertEquals(ctx.clone(undefined).identifier, "alice");
  const posted = note("9");
  const forwarding = createOutboxContext({
    data: undefined,
    identifier: "alice",
    activity: posted,
  });
  await forwarding.forwardActivity({ identifier: "alice" }, "followers");
  assertEquals(forwarding.getSentActivities()[0].activity, posted);
  assertEquals(forwarding.hasDeliveredActivity(), true);
  assertThrows(
    // @ts-expect-error: the identifier is required.
    () => createOutboxContext({ data: undefined }),
    TypeError,
    "identifier option",
  );
});
