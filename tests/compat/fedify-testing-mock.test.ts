// Tests written against Fedify's @fedify/testing mock, run against
// @fedwork/testing/app with only their imports changed.  What each checks,
// and how, follows tests in Fedify's repository (fedify-dev/fedify,
// packages/testing/src/mock.test.ts: "getSentActivities returns sent
// activities", "reset clears sent activities", "receiveActivity triggers
// inbox listeners", "MockContext URI methods should work correctly",
// "MockFederation distinguishes between immediate and queued activities",
// "MockContext.getActor() calls registered actor dispatcher",
// "MockContext.getObject() calls registered object dispatcher",
// "MockContext.enqueueTask rejects a payload the schema refuses") and the
// examples of its manual (docs/manual/test.md, "Mocking"); the code is
// written anew.  The imports are the only Fedwork-specific lines: Fedify's
// were `@fedify/testing`, `@fedify/fedify/federation` and `@std/assert`.
import type { InboxContext } from "@fedwork/core";
import { createFederation } from "@fedwork/testing/app";
import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import { z } from "zod";

test("Fedify mock: getSentActivities lists what a context sent", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com"), undefined);
  const activity = new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ id: new URL("https://example.com/notes/1"), content: "Hello" }),
  });
  const bob = new Person({ id: new URL("https://example.com/users/bob") });
  await ctx.sendActivity({ identifier: "alice" }, bob, activity);

  const sent = ctx.getSentActivities();
  assertEquals(sent.length, 1);
  assertEquals(sent[0].sender, { identifier: "alice" });
  assertEquals(sent[0].recipients, bob);
  assertEquals(sent[0].activity, activity);
  assertEquals(federation.sentActivities.length, 1);
  assertEquals(federation.sentActivities[0].activity, activity);
});

test("Fedify mock: reset() forgets the sent activities", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com"), undefined);
  await ctx.sendActivity(
    { identifier: "alice" },
    new Person({ id: new URL("https://example.com/users/bob") }),
    new Create({
      id: new URL("https://example.com/activities/1"),
      actor: new URL("https://example.com/users/alice"),
    }),
  );
  assertEquals(federation.sentActivities.length, 1);
  assertEquals(ctx.getSentActivities().length, 1);
  federation.reset();
  ctx.reset();
  assertEquals(federation.sentActivities.length, 0);
  assertEquals(ctx.getSentActivities().length, 0);
});

test("Fedify mock: receiveActivity runs the inbox listener", async () => {
  const federation = createFederation<{ test: string }>({ contextData: { test: "data" } });
  let received: Create | null = null;
  let data: string | null = null;
  federation
    .setInboxListeners("/users/{identifier}/inbox")
    .on(Create, (ctx: InboxContext<{ test: string }>, activity: Create) => {
      received = activity;
      data = ctx.data.test;
      return Promise.resolve();
    });
  const activity = new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ id: new URL("https://example.com/notes/1"), content: "Test note" }),
  });
  await federation.receiveActivity(activity);
  assertEquals(received, activity);
  assertEquals(data, "data");
});

test("Fedify mock: contexts build URIs and parse them back", () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher("/users/{identifier}", () => null);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setOutboxDispatcher("/users/{identifier}/outbox", () => null);
  federation.setFollowingDispatcher("/users/{identifier}/following", () => null);
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  federation.setObjectDispatcher(Note, "/notes/{id}", () => null);
  const ctx = federation.createContext(new URL("https://example.com"), undefined);

  assertEquals(ctx.getActorUri("alice").href, "https://example.com/users/alice");
  assertEquals(ctx.getInboxUri("alice").href, "https://example.com/users/alice/inbox");
  assertEquals(ctx.getInboxUri().href, "https://example.com/inbox");
  assertEquals(ctx.getOutboxUri("alice").href, "https://example.com/users/alice/outbox");
  assertEquals(ctx.getFollowingUri("alice").href, "https://example.com/users/alice/following");
  assertEquals(ctx.getFollowersUri("alice").href, "https://example.com/users/alice/followers");
  assertEquals(ctx.getObjectUri(Note, { id: "123" }).href, "https://example.com/notes/123");
  const parsed = ctx.parseUri(new URL("https://example.com/users/alice"));
  assertEquals(parsed?.type, "actor");
  if (parsed?.type === "actor") assertEquals(parsed.identifier, "alice");
});

test("Fedify mock: activities sent after startQueue() are marked as queued", async () => {
  const federation = createFederation<void>();
  const ctx = federation.createContext(new URL("https://example.com"), undefined);
  const bob = new Person({ id: new URL("https://example.com/users/bob") });
  const first = new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
  });
  const second = new Create({
    id: new URL("https://example.com/activities/2"),
    actor: new URL("https://example.com/users/alice"),
  });
  await ctx.sendActivity({ identifier: "alice" }, bob, first);
  await federation.startQueue(undefined);
  await ctx.sendActivity({ identifier: "alice" }, bob, second);

  assertEquals(federation.queueStarted, true);
  assertEquals(federation.sentActivities.length, 2);
  assertEquals(federation.sentActivities[0].activity, first);
  assertEquals(federation.sentActivities[0].queued, false);
  assertEquals(federation.sentActivities[0].queue, undefined);
  assertEquals(federation.sentActivities[1].activity, second);
  assertEquals(federation.sentActivities[1].queued, true);
  assertEquals(federation.sentActivities[1].queue, "outbox");
  assertEquals(federation.sentActivities.map((s) => s.sentOrder), [1, 2]);
});

test("Fedify mock: getActor() and getObject() call the registered dispatchers", async () => {
  const federation = createFederation<void>();
  federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: `Test User ${identifier}`,
    }));
  federation.setObjectDispatcher(
    Note,
    "/notes/{id}",
    (ctx, values) => new Note({ id: ctx.getObjectUri(Note, values), content: `Note ${values.id}` }),
  );
  const ctx = federation.createContext(new Request("https://example.com/"), undefined);

  const actor = await ctx.getActor("alice");
  assertEquals(actor instanceof Person, true);
  assertEquals(actor?.preferredUsername, "alice");
  assertEquals(actor?.name, "Test User alice");
  assertEquals(actor?.id?.href, "https://example.com/users/alice");
  const note = await ctx.getObject(Note, { id: "42" });
  assertEquals(note?.content, "Note 42");
  assertEquals(note?.id?.href, "https://example.com/notes/42");
});

test("Fedify mock: enqueueTask rejects a payload the schema refuses", async () => {
  const federation = createFederation<void>();
  let called = 0;
  const task = federation.defineTask("count", {
    schema: z.number(),
    handler: () => {
      called++;
    },
  });
  const ctx = federation.createContext(new URL("https://example.com"), undefined);
  await assertRejects(
    () => ctx.enqueueTask(task, "not a number" as unknown as number),
    TypeError,
  );
  assertEquals(called, 0);
});
