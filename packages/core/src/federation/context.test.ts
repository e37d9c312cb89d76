import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import { createFederation, type Federation } from "./federation.ts";

function createRoutedFederation<T>(origin?: string): Federation<T> {
  const federation = createFederation<T>({ kv: new MemoryKvStore(), origin });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox");
  federation.setOutboxDispatcher("/users/{identifier}/outbox", () => null);
  federation.setFollowersDispatcher("/users/{identifier}/followers", () => null);
  federation.setFollowingDispatcher("/users/{identifier}/following", () => null);
  return federation;
}

test("context URI builders expand the registered paths", () => {
  const ctx = createRoutedFederation<void>().createContext(
    new URL("https://example.com:8443/some/page"),
    undefined,
  );
  assertEquals(
    [
      ctx.getActorUri("alice").href,
      ctx.getInboxUri("alice").href,
      ctx.getInboxUri().href,
      ctx.getOutboxUri("alice").href,
      ctx.getFollowersUri("alice").href,
      ctx.getFollowingUri("alice").href,
    ],
    [
      "https://example.com:8443/users/alice",
      "https://example.com:8443/users/alice/inbox",
      "https://example.com:8443/inbox",
      "https://example.com:8443/users/alice/outbox",
      "https://example.com:8443/users/alice/followers",
      "https://example.com:8443/users/alice/following",
    ],
  );
  assertEquals([ctx.origin, ctx.host, ctx.hostname], [
    "https://example.com:8443",
    "example.com:8443",
    "example.com",
  ]);
});

test("context URI builders percent-encode identifiers", () => {
  const ctx = createRoutedFederation<void>().createContext(
    new URL("https://example.com/"),
    undefined,
  );
  assertEquals(ctx.getActorUri("a b/c").href, "https://example.com/users/a%20b%2Fc");
});

test("the origin option overrides the request's origin in built URIs", () => {
  const federation = createRoutedFederation<void>("https://social.example");
  const ctx = federation.createContext(
    new Request("http://localhost:3000/users/alice"),
    undefined,
  );
  assertEquals(ctx.origin, "http://localhost:3000");
  assertEquals(ctx.canonicalOrigin, "https://social.example");
  assertEquals(ctx.hostname, "social.example");
  assertEquals(ctx.getActorUri("alice").href, "https://social.example/users/alice");
});

test("URI builders name the missing registration", () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  assertThrows(() => ctx.getActorUri("a"), RouteNotRegisteredError, "setActorDispatcher()");
  assertThrows(() => ctx.getInboxUri("a"), RouteNotRegisteredError, "setInboxListeners()");
  assertThrows(() => ctx.getOutboxUri("a"), RouteNotRegisteredError, "setOutboxDispatcher()");
  assertThrows(() => ctx.getFollowersUri("a"), RouteNotRegisteredError, "followers dispatcher");
  assertThrows(() => ctx.getFollowingUri("a"), RouteNotRegisteredError, "following dispatcher");
  federation.setInboxListeners("/users/{identifier}/inbox");
  assertThrows(() => ctx.getInboxUri(), RouteNotRegisteredError, "shared inbox path");
});

test("a context carries its data with the federation's context data type", () => {
  const federation = createFederation<{ db: string }>({ kv: new MemoryKvStore() });
  const ctx = federation.createContext(new URL("https://example.com/"), { db: "main" });
  const db: string = ctx.data.db;
  // @ts-expect-error: the context data has no such property.
  const missing = ctx.data.cache;
  // @ts-expect-error: the context data must match the federation's type.
  federation.createContext(new URL("https://example.com/"), { db: 1 });
  assertEquals([db, missing, ctx.federation === federation], ["main", undefined, true]);
});
