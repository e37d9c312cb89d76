import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { Follow, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederationBuilder } from "./builder.ts";
import { DuplicateRegistrationError, RouteNotRegisteredError, RoutePathError } from "./errors.ts";
import { createFederation } from "./federation.ts";

const base = new URL("https://example.com/");

test("a federation built from a builder does not see later registrations", async () => {
  const builder = createFederationBuilder<void>();
  builder.setActorDispatcher("/users/{identifier}", () => null);
  const first = await builder.build({ kv: new MemoryKvStore() });
  builder.setOutboxDispatcher("/users/{identifier}/outbox", () => null);
  const second = await builder.build({ kv: new MemoryKvStore() });

  const firstCtx = first.createContext(base, undefined);
  const secondCtx = second.createContext(base, undefined);
  assertEquals(firstCtx.getActorUri("a").href, "https://example.com/users/a");
  assertThrows(() => firstCtx.getOutboxUri("a"), RouteNotRegisteredError);
  assertEquals(secondCtx.getOutboxUri("a").href, "https://example.com/users/a/outbox");
});

test("two federations built from one builder do not share later inbox listeners", async () => {
  const builder = createFederationBuilder<void>();
  const setters = builder.setInboxListeners("/users/{identifier}/inbox");
  const first = await builder.build({ kv: new MemoryKvStore() });
  const second = await builder.build({ kv: new MemoryKvStore() });
  setters.on(Follow, () => {});
  // Registering on a built federation does not reach its sibling either.
  first.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  second.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  const listeners = (federation: unknown) =>
    (federation as { registry: { inboxListeners: Map<unknown, unknown> } }).registry
      .inboxListeners.size;
  assertEquals([listeners(first), listeners(second), listeners(builder)], [0, 0, 1]);
});

test("builder.build() rejects invalid options naming the option", async () => {
  const builder = createFederationBuilder<void>();
  let message = "";
  try {
    await builder.build({} as never);
  } catch (error) {
    message = (error as Error).message;
  }
  assertEquals(message, "The kv option is required: pass a KvStore.");
});

test("route paths must contain {identifier} exactly once", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  assertThrows(
    () => federation.setActorDispatcher("/users", () => null),
    RoutePathError,
    'The path "/users" given to setActorDispatcher() must contain {identifier} exactly once',
  );
  assertThrows(
    () => federation.setOutboxDispatcher("/{identifier}/{identifier}", () => null),
    RoutePathError,
    "exactly once",
  );
  assertThrows(
    () => federation.setFollowersDispatcher("users/{identifier}", () => null),
    RoutePathError,
    'starting with "/"',
  );
  assertThrows(
    () => federation.setFollowingDispatcher("/users/{id}/following", () => null),
    RoutePathError,
    "placeholder other than {identifier}",
  );
  assertThrows(
    () => federation.setInboxListeners("/users/{identifier}/inbox", "/{identifier}/inbox"),
    RoutePathError,
    "must not contain {identifier}",
  );
});

test("registering the same dispatcher twice throws", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher("/users/{identifier}", () => new Person({}));
  assertThrows(
    () => federation.setActorDispatcher("/people/{identifier}", () => null),
    DuplicateRegistrationError,
    "setActorDispatcher() only once",
  );
  const setters = federation.setInboxListeners("/users/{identifier}/inbox");
  setters.on(Follow, () => {});
  assertThrows(() => setters.on(Follow, () => {}), DuplicateRegistrationError, "Follow");
});
