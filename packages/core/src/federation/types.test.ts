// Type-level tests of the HTTP wiring: the `@ts-expect-error` lines fail
// `deno check` and `tsc` if they ever stop being errors.  The runtime test
// only keeps the file in the suite.
import { assertEquals, test } from "@fedify/fixture";
import { Follow, Note, Person, Tombstone } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import type { Context } from "./context-api.ts";
import { createFederation, type Federation } from "./federation.ts";
import type { RequestContext } from "./context-api.ts";

interface AppData {
  readonly tenant: string;
}

function typeChecks(federation: Federation<AppData>, request: Request): void {
  // A context for a request is a RequestContext; one for a URL is not.
  const requestContext: RequestContext<AppData> = federation.createContext(request, {
    tenant: "a",
  });
  const baseContext = federation.createContext(new URL("https://example.com/"), { tenant: "a" });
  // @ts-expect-error: a base URL's context has no request.
  void baseContext.request;
  void requestContext.getSignedKeyOwner();

  // The actor dispatcher may return a Tombstone, and its setters chain.
  federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) => {
    const tenant: string = ctx.data.tenant;
    void ctx.request;
    return identifier === tenant ? new Tombstone({}) : new Person({});
  })
    .setKeyPairsDispatcher(() => [])
    .mapHandle((_ctx, username) => username)
    // @ts-expect-error: a predicate returns a boolean.
    .authorize(() => "yes");

  // Object dispatchers return objects of their class.
  federation.setObjectDispatcher(Note, "/notes/{id}", () => new Note({}));
  // @ts-expect-error: a Person is not a Note.
  federation.setObjectDispatcher(Note, "/other/{id}", () => new Person({}));

  // Inbox listeners get an InboxContext with the recipient.
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (ctx, follow) => {
      const recipient: string | null = ctx.recipient;
      const object: URL | null = follow.objectId;
      void [recipient, object];
    })
    // @ts-expect-error: the strategies are per-inbox, per-origin and global.
    .withIdempotency("per-request");

  // fetch() needs the context data.
  // @ts-expect-error: contextData is required.
  void federation.fetch(request, {});
  void federation.fetch(request, { contextData: { tenant: "a" } });

  // The permanent failure handler is told the status and the recipients.
  federation.setOutboxPermanentFailureHandler((ctx: Context<AppData>, failure) => {
    const status: number = failure.statusCode;
    const ids: readonly URL[] = failure.actorIds;
    void [ctx, status, ids];
  });
}

test("the HTTP wiring's types hold (checked by deno check and tsc)", () => {
  assertEquals(typeof typeChecks, "function");
  const federation = createFederation<AppData>({ kv: new MemoryKvStore() });
  assertEquals(typeof federation.fetch, "function");
});
