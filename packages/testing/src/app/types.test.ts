// What the kit's types promise: test contexts are typed as such, the
// context data is checked, and the kit's federation is a Federation.
import type { Federation, InboxContext, OutboxContext } from "@fedwork/core";
import { Create, Follow } from "@fedify/vocab";
import { assertEquals, test } from "@fedify/fixture";
import {
  createContext,
  createFederation,
  createInboxContext,
  createOutboxContext,
  type MockContext,
  type MockInboxContext,
  type MockOutboxContext,
  type SentActivity,
} from "./mod.ts";

test("the kit's federation, contexts and records have the types a test relies on", () => {
  const federation = createFederation<{ userId: string }>({ contextData: { userId: "a" } });
  // A test federation can stand in for the app's Federation.
  const asFederation: Federation<{ userId: string }> = federation;
  const ctx: MockContext<{ userId: string }> = federation.createContext(
    new URL("https://example.com/"),
    { userId: "b" },
  );
  const sent: SentActivity[] = federation.sentActivities;
  const request = federation.createContext(new Request("https://example.com/"), { userId: "c" });
  const alsoCtx = createContext({ data: 1 });
  // @ts-expect-error: the context data has the federation's type.
  createFederation<{ userId: string }>({ contextData: { userId: 1 } });
  // @ts-expect-error: the data of a context too.
  federation.createContext(new URL("https://example.com/"), { user: "x" });
  const check = (f: typeof federation) => {
    // @ts-expect-error: a string is not an activity.
    void f.receiveActivity("https://remote.example/activities/1");
    void f.receiveActivity(new Create({}), { recipient: "alice" });
  };
  void check;
  assertEquals(typeof asFederation.createContext, "function");
  assertEquals(ctx.getSentActivities(), []);
  assertEquals(sent, []);
  assertEquals(request.request.url, "https://example.com/");
  assertEquals(alsoCtx.data, 1);
});

test("listeners of a test federation get test contexts by type, and core's types still fit", () => {
  const federation = createFederation<{ userId: string }>();
  const inboxSeen: number[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .withIdempotency("per-inbox")
    // The chain keeps the kit's types after another setter.
    .on(Create, (ctx) => void inboxSeen.push(ctx.getSentActivities().length))
    // A listener written against core's InboxContext is accepted too.
    .on(Follow, (ctx: InboxContext<{ userId: string }>) => void ctx.recipient)
    .onError((ctx, error) => {
      const sent: number = ctx.getSentActivities().length;
      // @ts-expect-error: the context data is typed.
      const wrong: number = ctx.data.userId;
      void [sent, wrong, error];
    });
  federation.setOutboxListeners("/users/{identifier}/outbox")
    .authorize(() => true)
    .on(Create, (ctx) => {
      const delivered: boolean = ctx.hasDeliveredActivity();
      const owner: string = ctx.identifier;
      void [delivered, owner, ctx.getSentActivities()];
    });
  const inbox: MockInboxContext<void> = createInboxContext<void>({ data: undefined });
  const asInbox: InboxContext<void> = inbox;
  const outbox: MockOutboxContext<void> = createOutboxContext<void>({
    data: undefined,
    identifier: "alice",
  });
  const asOutbox: OutboxContext<void> = outbox;
  // @ts-expect-error: an inbox context has no identifier.
  void inbox.identifier;
  assertEquals([asInbox.recipient, asOutbox.identifier, inboxSeen], [null, "alice", []]);
});
