import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation } from "./federation.ts";
import type { ActorAliasMapper } from "./callbacks.ts";
import { serveFederation } from "./testdata/test-support.ts";

/** A server with one actor, `u1` (`@alice`), whose aliases map as given. */
async function withServer(
  aliasMapper: ActorAliasMapper<void> | undefined,
  fn: (webfinger: (resource: string) => Promise<Response>, origin: URL) => Promise<void>,
): Promise<void> {
  const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  const setters = federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "u1"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: "alice" })
        : null,
  )
    .mapHandle((_ctx, username) => username === "alice" ? "u1" : null);
  if (aliasMapper != null) setters.mapAlias(aliasMapper);
  const server = await serveFederation(federation, undefined);
  try {
    await fn(async (resource) => {
      const url = new URL("/.well-known/webfinger", server.url);
      url.searchParams.set("resource", resource);
      return await fetch(url);
    }, new URL(server.url));
  } finally {
    await server.close();
  }
}

test("mapAlias() lets WebFinger resolve a profile URL to its actor", async () => {
  const asked: string[] = [];
  await withServer((_ctx, resource) => {
    asked.push(resource.pathname);
    if (resource.pathname === "/@alice") return { username: "alice" };
    if (resource.pathname === "/profiles/1") return { identifier: "u1" };
    return null;
  }, async (webfinger, origin) => {
    for (const path of ["/@alice", "/profiles/1"]) {
      const response = await webfinger(new URL(path, origin).href);
      assertEquals(response.status, 200, path);
      const jrd = await response.json();
      assertEquals(jrd.subject, `acct:alice@${origin.host}`);
      assertEquals(
        jrd.links.find((link: { rel: string }) => link.rel === "self").href,
        new URL("/users/u1", origin).href,
      );
    }
    const unknown = await webfinger(new URL("/@bob", origin).href);
    assertEquals(unknown.status, 404);
    await unknown.body?.cancel();
    // Handles and actor URIs do not need the mapper.
    const byHandle = await webfinger(`acct:alice@${origin.host}`);
    assertEquals(byHandle.status, 200);
    await byHandle.body?.cancel();
    assertEquals(asked, ["/@alice", "/profiles/1", "/@bob"]);
  });
});

test("without mapAlias() a profile URL gets 404", async () => {
  await withServer(undefined, async (webfinger, origin) => {
    const response = await webfinger(new URL("/@alice", origin).href);
    assertEquals(response.status, 404);
    await response.body?.cancel();
  });
});

test("mapAlias() refuses a non-function", () => {
  const setters = createFederation<void>({ kv: new MemoryKvStore() })
    .setActorDispatcher("/users/{identifier}", () => null);
  assertThrows(
    () => setters.mapAlias("no" as unknown as ActorAliasMapper<void>),
    TypeError,
    "mapAlias",
  );
});
