import { assertEquals, startTestServer, test } from "@fedify/fixture";
import { isActor, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation, type Federation } from "./federation.ts";

function withActors(federation: Federation<void>): Federation<void> {
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier })
        : null,
  );
  return federation;
}

test("handleHost: WebFinger answers handles on the handle host with actor ids on the web origin", async () => {
  const federation = withActors(createFederation<void>({
    kv: new MemoryKvStore(),
    origin: { handleHost: "example.com", webOrigin: "https://ap.example.com" },
  }));
  const ask = async (url: string) => {
    const response = await federation.fetch(new Request(url), { contextData: undefined });
    return { status: response.status, body: response.ok ? await response.json() : null };
  };
  const expected = {
    subject: "acct:alice@example.com",
    aliases: ["https://ap.example.com/users/alice"],
    links: [{
      rel: "self",
      type: "application/activity+json",
      href: "https://ap.example.com/users/alice",
    }],
  };
  // Asked on the handle host (proxied there), or on the web host.
  assertEquals(
    await ask("https://example.com/.well-known/webfinger?resource=acct:alice@example.com"),
    { status: 200, body: expected },
  );
  assertEquals(
    await ask("https://ap.example.com/.well-known/webfinger?resource=acct:alice@example.com"),
    { status: 200, body: expected },
  );
  assertEquals(
    await ask("https://ap.example.com/.well-known/webfinger?resource=acct:alice@ap.example.com"),
    { status: 200, body: expected },
  );
  assertEquals(
    (await ask("https://ap.example.com/.well-known/webfinger?resource=acct:alice@other.example"))
      .status,
    404,
  );
});

test("handleHost: another server finds @alice@<handle host> over HTTP and gets the web origin's actor", async () => {
  // Two loopback servers in front of one federation: the handle host (which
  // a real deployment proxies or redirects to the app) and the web host.
  let federation: Federation<void> | undefined;
  const serve = (request: Request) => federation!.fetch(request, { contextData: undefined });
  const handleServer = await startTestServer(serve);
  const webServer = await startTestServer(serve);
  try {
    federation = withActors(createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
      origin: { handleHost: handleServer.url.host, webOrigin: webServer.url.origin },
    }));
    const remote = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true })
      .createContext(new URL("https://remote.example/"), undefined);
    const alice = await remote.lookupObject(`@alice@${handleServer.url.host}`);
    assertEquals(isActor(alice), true);
    assertEquals(alice?.id?.href, new URL("/users/alice", webServer.url).href);
    assertEquals(handleServer.requests.map((r) => new URL(r.url).pathname), [
      "/.well-known/webfinger",
    ]);
    assertEquals(webServer.requests.map((r) => new URL(r.url).pathname), ["/users/alice"]);
  } finally {
    await handleServer.close();
    await webServer.close();
  }
});
