import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { createNodeInfoResponse, handleNodeInfoWellKnown, type NodeInfo } from "./document.ts";

const nodeInfo: NodeInfo = {
  software: {
    name: "myapp",
    version: "1.2.3",
    homepage: new URL("https://myapp.example/"),
  },
  protocols: ["activitypub"],
  openRegistrations: false,
  usage: { users: { total: 3, activeMonth: 1 }, localPosts: 10 },
};

test("createNodeInfoResponse() serves a NodeInfo 2.1 document with its profile", async () => {
  const response = createNodeInfoResponse(nodeInfo);
  assertEquals(
    response.headers.get("content-type"),
    'application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"',
  );
  assertEquals(await response.json(), {
    version: "2.1",
    software: { name: "myapp", version: "1.2.3", homepage: "https://myapp.example/" },
    protocols: ["activitypub"],
    services: { inbound: [], outbound: [] },
    openRegistrations: false,
    usage: { users: { total: 3, activeMonth: 1 }, localPosts: 10, localComments: 0 },
    metadata: {},
  });
});

test("serializing NodeInfo rejects an invalid software name, no protocol and negative counts", () => {
  assertThrows(
    () => createNodeInfoResponse({ ...nodeInfo, software: { name: "My App", version: "1" } }),
    TypeError,
    "software.name",
  );
  assertThrows(() => createNodeInfoResponse({ ...nodeInfo, protocols: [] }), TypeError);
  assertThrows(
    () => createNodeInfoResponse({ ...nodeInfo, usage: { users: { total: -1 } } }),
    TypeError,
    "usage.users.total",
  );
});

test("handleNodeInfoWellKnown() links to the NodeInfo 2.1 document", async () => {
  const response = handleNodeInfoWellKnown(
    new Request("https://example.com/.well-known/nodeinfo"),
    { nodeInfoUrl: new URL("https://example.com/nodeinfo/2.1") },
  );
  assertEquals(response.headers.get("access-control-allow-origin"), "*");
  assertEquals(await response.json(), {
    links: [{
      rel: "http://nodeinfo.diaspora.software/ns/schema/2.1",
      href: "https://example.com/nodeinfo/2.1",
    }],
  });
});
