// What the kit's types promise: test contexts are typed as such, the
// context data is checked, and the kit's federation is a Federation.
import type { Federation } from "@fedwork/core";
import { Create } from "@fedify/vocab";
import { assertEquals, test } from "@fedify/fixture";
import { createContext, createFederation, type MockContext, type SentActivity } from "./mod.ts";

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
