import { assertEquals, assertRejects, startTestServer, test } from "@fedify/fixture";
import { UnknownOptionError } from "../../options/known-options.ts";
import { PrivateAddressError } from "../network/errors.ts";
import type { NodeInfo as FedifyNodeInfo } from "@fedify/fedify";
import { type NodeInfo, nodeInfoToJson } from "./document.ts";
import { getNodeInfo, parseNodeInfo } from "./lookup.ts";

const document = {
  version: "2.1",
  software: { name: "mastodon", version: "4.3.0", homepage: "https://joinmastodon.org/" },
  protocols: ["activitypub"],
  services: { inbound: [], outbound: [] },
  openRegistrations: true,
  usage: { users: { total: 42, activeMonth: 7 }, localPosts: 1000 },
  metadata: { nodeName: "Example" },
};

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } });
}

test("getNodeInfo() follows /.well-known/nodeinfo to the newest schema it links to", async () => {
  const server = await startTestServer((request) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/.well-known/nodeinfo") {
      return json({
        links: [
          { rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: "/nodeinfo/2.0" },
          { rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: "/nodeinfo/2.1" },
        ],
      });
    }
    if (pathname === "/nodeinfo/2.1") return json(document);
    return new Response("not found", { status: 404 });
  });
  try {
    const info = await getNodeInfo(new URL("/some/page", server.url), {
      allowPrivateAddress: true,
      userAgent: "NodeInfoTest/1.0",
    });
    assertEquals(info, {
      software: {
        name: "mastodon",
        version: "4.3.0",
        homepage: new URL("https://joinmastodon.org/"),
      },
      protocols: ["activitypub"],
      services: { inbound: [], outbound: [] },
      openRegistrations: true,
      usage: { users: { total: 42, activeMonth: 7 }, localPosts: 1000, localComments: 0 },
      metadata: { nodeName: "Example" },
    });
    assertEquals(server.requests.map((request) => new URL(request.url).pathname), [
      "/.well-known/nodeinfo",
      "/nodeinfo/2.1",
    ]);
    assertEquals(server.requests[0].headers.get("user-agent"), "NodeInfoTest/1.0");
  } finally {
    await server.close();
  }
});

test("getNodeInfo() with direct reads the URL itself, and parse: none returns the JSON", async () => {
  const server = await startTestServer(() => json({ ...document, software: { name: "Bad Name" } }));
  try {
    const url = new URL("/nodeinfo/2.1", server.url);
    assertEquals(await getNodeInfo(url, { direct: true, allowPrivateAddress: true }), undefined);
    assertEquals(
      await getNodeInfo(url, { direct: true, allowPrivateAddress: true, parse: "none" }),
      { ...document, software: { name: "Bad Name" } },
    );
    const lenient = await getNodeInfo(url, {
      direct: true,
      allowPrivateAddress: true,
      parse: "best-effort",
    });
    assertEquals(lenient?.software, { name: "bad-name", version: "" });
  } finally {
    await server.close();
  }
});

test("getNodeInfo() answers undefined for a failing server and keeps the body limit", async () => {
  const server = await startTestServer((request) =>
    new URL(request.url).pathname === "/.well-known/nodeinfo"
      ? json({ links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.1", href: "/big" }] })
      : json({ ...document, metadata: { padding: "x".repeat(4096) } })
  );
  try {
    assertEquals(
      await getNodeInfo(server.url, { allowPrivateAddress: true, maxBodyBytes: 1024 }),
      undefined,
    );
    assertEquals(
      (await getNodeInfo(server.url, { allowPrivateAddress: true }))?.software.name,
      "mastodon",
    );
  } finally {
    await server.close();
  }
  const gone = await startTestServer(() => new Response("gone", { status: 410 }));
  try {
    assertEquals(await getNodeInfo(gone.url, { allowPrivateAddress: true }), undefined);
  } finally {
    await gone.close();
  }
});

test("getNodeInfo() refuses a loopback server unless allowPrivateAddress is set", async () => {
  const server = await startTestServer(() => json(document));
  try {
    await assertRejects(() => getNodeInfo(server.url), PrivateAddressError);
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("parseNodeInfo() refuses in strict mode what best-effort mode repairs", () => {
  const broken = {
    ...document,
    protocols: ["activitypub", "carrier-pigeon"],
    usage: { users: { total: -3 }, localPosts: "many" },
  };
  assertEquals(parseNodeInfo(broken), null);
  assertEquals(parseNodeInfo(broken, { tryBestEffort: true })?.protocols, ["activitypub"]);
  assertEquals(parseNodeInfo(broken, { tryBestEffort: true })?.usage, {
    users: {},
    localPosts: 0,
    localComments: 0,
  });
  assertEquals(parseNodeInfo("not an object"), null);
});

test("a NodeInfo typed for Fedify, without openRegistrations, serves as closed registrations", () => {
  const fedify: FedifyNodeInfo = {
    software: { name: "myapp", version: "1.0.0" },
    protocols: ["activitypub"],
    usage: { users: { total: 1 }, localPosts: 0, localComments: 0 },
  };
  const fedwork: NodeInfo = fedify;
  assertEquals(nodeInfoToJson(fedwork).openRegistrations, false);
  // And parseNodeInfo() reads it back.
  const parsed = parseNodeInfo(nodeInfoToJson(fedwork));
  assertEquals(parsed?.software, fedify.software);
});

test("getNodeInfo() refuses a misspelt option before asking anything", async () => {
  await assertRejects(
    // @ts-expect-error: a misspelt option
    () => getNodeInfo("https://example.com/", { parsed: "none" }),
    UnknownOptionError,
    "parse",
  );
});

test("a hostile server's 5,000-deep metadata is left out in best-effort and strict mode", async () => {
  const deep = '{"a":'.repeat(5000) + "1" + "}".repeat(5000);
  const { metadata: _, ...rest } = document;
  const body = JSON.stringify(rest).replace(/}$/, `,"metadata":${deep}}`);
  await using server = await startTestServer(() =>
    new Response(body, { headers: { "Content-Type": "application/json" } })
  );
  const url = new URL("/nodeinfo/2.1", server.url);
  for (const parse of ["best-effort", "strict"] as const) {
    const info = await getNodeInfo(url, { direct: true, allowPrivateAddress: true, parse });
    assertEquals(info?.software.name, "mastodon", parse);
    assertEquals(info?.metadata, undefined, parse);
    // What the caller does next no longer overflows.
    assertEquals(typeof JSON.stringify(info), "string");
  }
  // A raised bound keeps deeper metadata.
  const shallow = { ...document, metadata: { a: { b: { c: 1 } } } };
  assertEquals(parseNodeInfo(shallow, { maxMetadataDepth: 3 })?.metadata, { a: { b: { c: 1 } } });
  assertEquals(parseNodeInfo(shallow, { maxMetadataDepth: 2 })?.metadata, undefined);
});

test("metadata larger than maxMetadataBytes is left out, the rest of the document kept", async () => {
  const big = {
    ...document,
    metadata: { list: Array.from({ length: 20_000 }, (_, i) => `x${i}`) },
  };
  await using server = await startTestServer(() => json(big));
  const url = new URL("/nodeinfo/2.1", server.url);
  const info = await getNodeInfo(url, { direct: true, allowPrivateAddress: true });
  assertEquals(info?.usage.users.total, 42);
  // About 150 KB of JSON: past the 128 KiB default.
  assertEquals(info?.metadata, undefined);
  const raised = await getNodeInfo(url, {
    direct: true,
    allowPrivateAddress: true,
    parse: "best-effort",
    maxMetadataBytes: 1024 * 1024,
  });
  assertEquals((raised?.metadata?.list as string[]).length, 20_000);
  assertEquals(parseNodeInfo(document, { maxMetadataBytes: 10 })?.metadata, undefined);
  assertEquals(parseNodeInfo(document, { maxMetadataBytes: 100 })?.metadata, {
    nodeName: "Example",
  });
  await assertRejects(
    () => getNodeInfo(url, { direct: true, allowPrivateAddress: true, maxMetadataDepth: 0 }),
    RangeError,
    "maxMetadataDepth",
  );
});
