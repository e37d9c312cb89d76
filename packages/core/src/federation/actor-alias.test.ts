import { assertEquals, assertInstanceOf, assertThrows, test } from "@fedify/fixture";
import { Application, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { RouteConflictError } from "../activitypub/http/errors.ts";
import { DuplicateRegistrationError, RoutePathError } from "./errors.ts";
import { createFederation } from "./federation.ts";
import { serveFederation } from "./testdata/test-support.ts";

function relayFederation() {
  const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  const setters = federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "instance"
        ? new Application({ id: ctx.getActorUri(identifier), preferredUsername: "relay" })
        : identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: "alice" })
        : null,
  );
  return { federation, setters };
}

const ACTIVITY_JSON = { Accept: "application/activity+json" };

test("mapActorAlias() serves the actor at its fixed path, and getActorUri() names that path", async () => {
  const { federation, setters } = relayFederation();
  setters.mapActorAlias("/actor", "instance");
  const server = await serveFederation(federation, undefined);
  try {
    const ctx = federation.createContext(new URL(server.url), undefined);
    const alias = new URL("/actor", server.url);
    assertEquals(ctx.getActorUri("instance").href, alias.href);
    assertEquals(ctx.getActorUri("alice").href, new URL("/users/alice", server.url).href);
    assertEquals(ctx.parseUri(alias), { type: "actor", identifier: "instance" });
    const response = await fetch(alias, { headers: ACTIVITY_JSON });
    assertEquals(response.status, 200);
    const json = await response.json();
    assertEquals([json.type, json.id, json.preferredUsername], [
      "Application",
      alias.href,
      "relay",
    ]);
    // The templated path still serves it, with the alias as its id.
    const templated = await fetch(new URL("/users/instance", server.url), {
      headers: ACTIVITY_JSON,
    });
    assertEquals((await templated.json()).id, alias.href);
    const webfinger = new URL("/.well-known/webfinger", server.url);
    webfinger.searchParams.set("resource", `acct:instance@${new URL(server.url).host}`);
    const jrd = await (await fetch(webfinger)).json();
    assertEquals(
      jrd.links.find((link: { rel: string }) => link.rel === "self").href,
      alias.href,
    );
  } finally {
    await server.close();
  }
});

test("mapActorAlias() refuses variables, a taken path, a second alias and an empty identifier", () => {
  const { setters } = relayFederation();
  assertThrows(() => setters.mapActorAlias("/actors/{identifier}", "instance"), RoutePathError);
  assertThrows(
    () => setters.mapActorAlias("/users/{x}" as `/${string}`, "instance"),
    RoutePathError,
  );
  assertThrows(() => setters.mapActorAlias("actor" as `/${string}`, "instance"), RoutePathError);
  assertThrows(() => setters.mapActorAlias("/actor", ""), TypeError);
  setters.mapActorAlias("/actor", "instance");
  assertThrows(() => setters.mapActorAlias("/bot", "instance"), DuplicateRegistrationError);
  const error = assertThrows(() => setters.mapActorAlias("/actor", "alice"));
  assertInstanceOf(error, RouteConflictError);
});
