import { assertEquals, test } from "@fedify/fixture";
import { handleWebFinger, type WebFingerActor } from "./handler.ts";

const alice: WebFingerActor = {
  username: "alice",
  actorUri: new URL("https://example.com/users/alice"),
  aliases: [new URL("https://example.com/@alice")],
  links: [{
    rel: "http://webfinger.net/rel/profile-page",
    type: "text/html",
    href: "https://example.com/@alice",
  }],
};
const options = {
  lookupUsername: (username: string) => username.toLowerCase() === "alice" ? alice : null,
  lookupActorUri: (uri: URL) => uri.href === alice.actorUri.href ? alice : null,
};

function finger(resource: string | null, host?: string): Promise<Response> {
  const url = new URL("https://example.com/.well-known/webfinger");
  if (resource != null) url.searchParams.set("resource", resource);
  return handleWebFinger(new Request(url), host == null ? options : { ...options, host });
}

const expected = {
  subject: "acct:alice@example.com",
  aliases: ["https://example.com/users/alice", "https://example.com/@alice"],
  links: [
    { rel: "self", type: "application/activity+json", href: "https://example.com/users/alice" },
    {
      rel: "http://webfinger.net/rel/profile-page",
      type: "text/html",
      href: "https://example.com/@alice",
    },
  ],
};

test("handleWebFinger() answers an acct: handle with a JRD open to every origin", async () => {
  const response = await finger("acct:alice@example.com");
  assertEquals(response.status, 200);
  assertEquals(response.headers.get("content-type"), "application/jrd+json");
  assertEquals(response.headers.get("access-control-allow-origin"), "*");
  assertEquals(await response.json(), expected);
});

test("handleWebFinger() answers an actor URI and bare handles with the canonical subject", async () => {
  assertEquals(await (await finger("https://example.com/users/alice")).json(), expected);
  assertEquals(await (await finger("ALICE@example.com")).json(), expected);
  assertEquals(await (await finger("@alice@EXAMPLE.com")).json(), expected);
});

test("handleWebFinger() answers 400 without a usable resource and 404 for unknown ones", async () => {
  assertEquals((await finger(null)).status, 400);
  assertEquals((await finger("acct:alice")).status, 400);
  assertEquals((await finger("mailto:alice@example.com")).status, 400);
  assertEquals((await finger("acct:bob@example.com")).status, 404);
  assertEquals((await finger("acct:alice@elsewhere.example")).status, 404);
  assertEquals((await finger("https://example.com/users/bob")).status, 404);
});

test("handleWebFinger() serves handles of a configured host", async () => {
  const response = await finger("acct:alice@handles.example", "handles.example");
  assertEquals((await response.json()).subject, "acct:alice@handles.example");
});
