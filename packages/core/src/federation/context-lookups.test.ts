import { assertEquals, assertRejects, startTestServer, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { PrivateAddressError } from "../activitypub/network/errors.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation } from "./federation.ts";

const nodeInfo = {
  version: "2.1",
  software: { name: "remote", version: "1.0.0" },
  protocols: ["activitypub"],
  usage: { users: {}, localPosts: 0, localComments: 0 },
};

function startRemote() {
  return startTestServer((request) => {
    const url = new URL(request.url);
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } });
    if (url.pathname === "/.well-known/nodeinfo") {
      return json({
        links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: "/nodeinfo" }],
      });
    }
    if (url.pathname === "/nodeinfo") return json(nodeInfo);
    if (url.pathname === "/.well-known/webfinger") {
      return json({ subject: url.searchParams.get("resource"), links: [] });
    }
    return new Response("not found", { status: 404 });
  });
}

test("ctx.lookupNodeInfo() and ctx.lookupWebFinger() fetch with the federation's settings", async () => {
  const remote = await startRemote();
  try {
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
      userAgent: "LookupTest/2.0",
    });
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    const info = await ctx.lookupNodeInfo(remote.url);
    assertEquals(info?.software, { name: "remote", version: "1.0.0" });
    assertEquals(info?.openRegistrations, undefined);
    assertEquals(
      await ctx.lookupNodeInfo(new URL("/nodeinfo", remote.url), {
        direct: true,
        parse: "none",
      }),
      nodeInfo,
    );
    const resource = `acct:bob@${remote.url.host}`;
    assertEquals(await ctx.lookupWebFinger(resource), { subject: resource, links: [] });
    assertEquals(
      remote.requests.map((request) => request.headers.get("user-agent")),
      ["LookupTest/2.0", "LookupTest/2.0", "LookupTest/2.0", "LookupTest/2.0"],
    );
    // The federation's remote request limits apply.
    const tight = createFederation<void>({
      kv: new MemoryKvStore(),
      allowPrivateAddress: true,
      remoteRequests: { maxBodyBytes: 16 },
    }).createContext(new URL("https://example.com/"), undefined);
    assertEquals(await tight.lookupWebFinger(resource), null);
  } finally {
    await remote.close();
  }
});

test("ctx lookups refuse loopback servers unless the federation allows private addresses", async () => {
  const remote = await startRemote();
  try {
    const ctx = createFederation<void>({ kv: new MemoryKvStore() })
      .createContext(new URL("https://example.com/"), undefined);
    await assertRejects(() => ctx.lookupNodeInfo(remote.url), PrivateAddressError);
    await assertRejects(
      () => ctx.lookupWebFinger(`acct:bob@${remote.url.host}`),
      PrivateAddressError,
    );
    assertEquals(remote.requests.length, 0);
  } finally {
    await remote.close();
  }
});

test("ctx.clone() gives a context with other data and leaves the original alone", () => {
  const federation = createFederation<{ user: string }>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  const request = new Request("https://example.com/users/alice");
  const ctx = federation.createContext(request, { user: "a" });
  const clone = ctx.clone({ user: "b" });
  assertEquals([ctx.data.user, clone.data.user], ["a", "b"]);
  assertEquals(clone.request, request);
  assertEquals(clone.getActorUri("alice").href, "https://example.com/users/alice");
  const base = federation.createContext(new URL("https://example.com/"), { user: "c" });
  assertEquals(base.clone({ user: "d" }).data, { user: "d" });
});

test("an inbox context's clone() keeps the recipient and the signal, with other data", async () => {
  const federation = createFederation<{ user: string }>({
    kv: new MemoryKvStore(),
    skipSignatureVerification: true,
  });
  federation.setActorDispatcher("/users/{identifier}", () => null);
  const seen: unknown[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, (ctx) => {
    const clone = ctx.clone({ user: "b" });
    seen.push([ctx.data.user, clone.data.user, clone.recipient, clone.signal === ctx.signal]);
  });
  const response = await federation.fetch(
    new Request("https://example.com/inbox", {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: "https://remote.example/follows/1",
        type: "Follow",
        actor: "https://remote.example/users/bob",
        object: "https://example.com/users/alice",
      }),
    }),
    { contextData: { user: "a" } },
  );
  assertEquals(response.status, 202);
  assertEquals(seen, [["a", "b", null, true]]);
});
