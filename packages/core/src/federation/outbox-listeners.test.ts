import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import { Activity, Create, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { RoutePathError } from "./errors.ts";
import { createFederation } from "./federation.ts";
import type { OutboxContext } from "./context-api.ts";
import { serveFederation } from "./testdata/test-support.ts";

const TOKEN = "Bearer alice-token";

function outboxServer() {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    inboxMaxBytes: 4096,
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier })
        : null,
  );
  const seen: { identifier: string; type: string; delivered: boolean }[] = [];
  const errors: string[] = [];
  federation.setOutboxListeners("/users/{identifier}/outbox")
    .authorize((ctx) => ctx.request.headers.get("authorization") === TOKEN)
    .on(Create, (ctx: OutboxContext<void>, create) => {
      seen.push({
        identifier: ctx.identifier,
        type: create.constructor.name,
        delivered: ctx.hasDeliveredActivity(),
      });
    })
    .on(Activity, () => {
      throw new Error("no such activity here");
    })
    .onError((ctx, error) => {
      errors.push(`${ctx.identifier}: ${error.message}`);
    });
  return { federation, seen, errors };
}

test("an outbox listener gets an authorized POST in an OutboxContext and the server answers 202", async () => {
  const { federation, seen, errors } = outboxServer();
  const server = await serveFederation(federation, undefined);
  try {
    const outbox = new URL("/users/alice/outbox", server.url);
    const alice = new URL("/users/alice", server.url).href;
    const post = (body: unknown, headers: Record<string, string> = { authorization: TOKEN }) =>
      fetch(outbox, {
        method: "POST",
        headers: { "content-type": "application/activity+json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const create = {
      "@context": "https://www.w3.org/ns/activitystreams",
      type: "Create",
      id: `${alice}/creates/1`,
      actor: alice,
      object: { type: "Note", content: "Hello from a client" },
    };
    const statuses: Record<string, number> = {};
    const answer = async (name: string, response: Promise<Response>) => {
      const done = await response;
      await done.body?.cancel();
      statuses[name] = done.status;
    };
    await answer("authorized Create", post(create));
    await answer("no token", post(create, {}));
    await answer("not JSON", post("{"));
    await answer("another actor", post({ ...create, actor: "https://evil.example/users/mallory" }));
    await answer("too big", post({ ...create, padding: "x".repeat(5000) }));
    await answer("listener throws", post({ ...create, type: "Like" }));
    await answer(
      "unknown actor",
      fetch(new URL("/users/nobody/outbox", server.url), {
        method: "POST",
        headers: { authorization: TOKEN },
        body: "{}",
      }),
    );
    await answer("PUT", fetch(outbox, { method: "PUT", body: "{}" }));
    assertEquals(statuses, {
      "authorized Create": 202,
      "no token": 401,
      "not JSON": 400,
      "another actor": 400,
      "too big": 413,
      "listener throws": 500,
      "unknown actor": 404,
      PUT: 405,
    });
    assertEquals(seen, [{ identifier: "alice", type: "Create", delivered: false }]);
    // The handler hears of the malformed body, the foreign actor and the
    // listener's error; not of refusals before the body is read.
    assertEquals(errors.length, 3, errors.join("\n"));
    assert(errors[0].startsWith("alice: "), errors[0]);
    assertEquals(errors.slice(1), [
      "alice: The activity's actor is not the outbox's owner.",
      "alice: no such activity here",
    ]);
  } finally {
    await server.close();
  }
});

test("setOutboxListeners() and setOutboxDispatcher() must share one path, in either order", () => {
  const first = createFederation<void>({ kv: new MemoryKvStore() });
  first.setOutboxListeners("/users/{identifier}/outbox");
  first.setOutboxDispatcher("/users/{identifier}/outbox", () => ({ items: [] }));
  const second = createFederation<void>({ kv: new MemoryKvStore() });
  second.setOutboxDispatcher("/users/{identifier}/outbox", () => ({ items: [] }));
  assertThrows(() => second.setOutboxListeners("/actors/{identifier}/outbox"), RoutePathError);
  const third = createFederation<void>({ kv: new MemoryKvStore() });
  third.setOutboxListeners("/users/{identifier}/outbox");
  assertThrows(
    () => third.setOutboxDispatcher("/u/{identifier}/outbox", () => ({ items: [] })),
    RoutePathError,
  );
  assertThrows(() => third.setOutboxListeners("/users/{identifier}/outbox"));
});
