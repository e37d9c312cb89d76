// The test federation: Fedify's mock members on a real Fedwork federation.
import { Accept, Create, Follow, Note, Person } from "@fedify/vocab";
import { UnknownOptionError } from "@fedwork/core";
import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import { createContext, createFederation, createRequestContext } from "./mod.ts";

const alice = new URL("https://example.com/users/alice");
const bob = new Person({
  id: new URL("https://remote.example/users/bob"),
  inbox: new URL("https://remote.example/users/bob/inbox"),
});

test("receiveActivity runs the inbox listener registered for the activity's type", async () => {
  const federation = createFederation<{ label: string }>({ contextData: { label: "app" } });
  const seen: string[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (ctx, follow) => void seen.push(`follow ${follow.id?.href} ${ctx.data.label}`))
    .on(Create, (_ctx, create) => void seen.push(`create ${create.id?.href}`));
  await federation.receiveActivity(
    new Create({ id: new URL("https://remote.example/c/1"), actor: bob.id }),
  );
  assertEquals(seen, ["create https://remote.example/c/1"]);
  await federation.receiveActivity(
    new Follow({ id: new URL("https://remote.example/f/1"), actor: bob.id, object: alice }),
  );
  assertEquals(seen[1], "follow https://remote.example/f/1 app");
});

test("receiveActivity gives an activity without an id one on its actor's origin", async () => {
  const federation = createFederation<void>();
  const ids: string[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (_ctx, follow) => void ids.push(follow.id!.href));
  await federation.receiveActivity(new Follow({ actor: bob.id, object: alice }));
  assertEquals(ids.length, 1);
  assert(ids[0].startsWith("https://remote.example/#Follow/"), ids[0]);
});

test("receiveActivity rejects with what the listener throws", async () => {
  const federation = createFederation<void>();
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, () => {
      throw new Error("listener broke");
    });
  await assertRejects(
    () => federation.receiveActivity(new Follow({ actor: bob.id, object: alice })),
    Error,
    "listener broke",
  );
});

test("receiveActivity refuses an activity without an actor", async () => {
  const federation = createFederation<void>();
  await assertRejects(
    () => federation.receiveActivity(new Follow({ object: alice })),
    TypeError,
    "exactly one actor",
  );
});

test("a listener's sendActivity is recorded on its context and on the federation", async () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }),
  );
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, async (ctx, follow) => {
      await ctx.sendActivity(
        { identifier: "alice" },
        bob,
        new Accept({ actor: ctx.getActorUri("alice"), object: follow }),
      );
      // Typed as the kit's MockInboxContext: no cast needed.
      assertEquals(ctx.getSentActivities().length, 1);
    });
  await federation.receiveActivity(
    new Follow({ id: new URL("https://remote.example/f/2"), actor: bob.id, object: alice }),
  );
  assertEquals(federation.sentActivities.length, 1);
  const [sent] = federation.sentActivities;
  assertInstanceOf(sent.activity, Accept);
  assertEquals(sent.sentOrder, 1);
  assertEquals(sent.queued, false);
  assertEquals(sent.sender, { identifier: "alice" });
  assertEquals(sent.activity.actorId?.href, "https://example.com/users/alice");
});

test("sentActivities say queued once startQueue was called, and reset() empties them", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  const create = new Create({ actor: alice, object: new Note({ content: "hi" }) });
  await ctx.sendActivity({ identifier: "alice" }, bob, create);
  await federation.startQueue(undefined);
  await ctx.sendActivity({ identifier: "alice" }, bob, create);
  assertEquals(federation.sentActivities.map((s) => [s.queued, s.queue, s.sentOrder]), [
    [false, undefined, 1],
    [true, "outbox", 2],
  ]);
  assertEquals(ctx.getSentActivities().length, 2);
  federation.reset();
  assertEquals(federation.sentActivities.length, 0);
  assertEquals(ctx.getSentActivities().length, 2);
  ctx.reset();
  assertEquals(ctx.getSentActivities().length, 0);
  assertEquals(federation.sentCounter, 2);
});

test("sendActivity on a test context refuses what production refuses", async () => {
  const ctx = createContext({ data: undefined });
  await assertRejects(
    () => ctx.sendActivity({ identifier: "alice" }, bob, new Create({ object: new Note({}) })),
    TypeError,
    "must have an actor",
  );
  assertEquals(ctx.getSentActivities().length, 0);
});

test("test contexts build URIs from the registered routes, and dispatchers answer", async () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice" ? new Person({ id: ctx.getActorUri(identifier) }) : null,
  );
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setObjectDispatcher(
    Note,
    "/notes/{id}",
    (ctx, { id }) => new Note({ id: ctx.getObjectUri(Note, { id }), content: `note ${id}` }),
  );
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  assertEquals(ctx.getActorUri("alice").href, "https://example.com/users/alice");
  assertEquals(ctx.getInboxUri("alice").href, "https://example.com/users/alice/inbox");
  assertEquals(ctx.getInboxUri().href, "https://example.com/inbox");
  assertEquals(ctx.getObjectUri(Note, { id: "7" }).href, "https://example.com/notes/7");
  const response = await federation.fetch(
    new Request("https://example.com/notes/7", {
      headers: { accept: "application/activity+json" },
    }),
    { contextData: undefined },
  );
  assertEquals(response.status, 200);
  assertEquals((await response.json()).content, "note 7");
  const request = createRequestContext({
    federation,
    data: undefined,
    url: new URL("https://example.com/users/alice"),
  });
  assertEquals((await request.getActor("alice"))?.id?.href, "https://example.com/users/alice");
  assertEquals(await request.getActor("nobody"), null);
});

test("createFederation refuses an option it does not know, suggesting the nearest one", () => {
  let error: unknown;
  try {
    createFederation({ contextdata: 1 } as never);
  } catch (e) {
    error = e;
  }
  assertInstanceOf(error, UnknownOptionError);
  assert(error.message.includes("contextdata"), error.message);
  assert(error.message.includes("contextData"), error.message);
});

test("createFederation refuses a kv, queue or document loader among the federation options", () => {
  for (const name of ["kv", "queue", "manuallyStartQueue", "documentLoader"]) {
    let error: unknown;
    try {
      createFederation({ federation: { [name]: undefined } as never });
    } catch (e) {
      error = e;
    }
    assertInstanceOf(error, TypeError);
    assert(error.message.includes(`federation.${name}`), error.message);
  }
});

test("the federation options reach the real federation: a task retry policy", async () => {
  const federation = createFederation<void>({ federation: { taskRetryPolicy: () => null } });
  const task = federation.defineTask("once", {
    schema: { "~standard": { version: 1, vendor: "test", validate: (value) => ({ value }) } },
    handler() {
      throw new Error("no retry");
    },
  });
  await federation.createContext(new URL("https://example.com/"), undefined).enqueueTask(task, {});
  const runs = await federation.runPendingTasks();
  assertEquals(runs.map((run) => run.outcome), ["failed"]);
});

test("an activity received twice runs the listeners once, as an inbox does", async () => {
  const federation = createFederation<void>();
  let runs = 0;
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, () => void runs++);
  const follow = new Follow({ id: new URL("https://remote.example/f/9"), actor: bob.id });
  await federation.receiveActivity(follow);
  await federation.receiveActivity(follow);
  assertEquals(runs, 1);
});

test("the kit's document loader reaches no network and names what was asked for", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await assertRejects(
    () => ctx.documentLoader("https://remote.example/users/bob"),
    Error,
    "https://remote.example/users/bob",
  );
  // The vocabulary's contexts are served without it.
  const loaded = await ctx.documentLoader("https://www.w3.org/ns/activitystreams");
  assert(typeof loaded.document === "object" && loaded.document != null);
});

test("sentActivities can be replaced, as the field of Fedify's mock can", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await ctx.sendActivity({ identifier: "alice" }, bob, new Create({ actor: alice }));
  (federation as { sentActivities: unknown[] }).sentActivities = [];
  assertEquals(federation.sentActivities.length, 0);
  await ctx.sendActivity({ identifier: "alice" }, bob, new Create({ actor: alice }));
  assertEquals(federation.sentActivities.map((sent) => sent.sentOrder), [2]);
});
