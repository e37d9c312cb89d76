import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { createFetchDocumentLoader } from "./document-loader.ts";
import { PrivateAddressError } from "./errors.ts";
import { startTestServer } from "@fedify/fixture";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import type { PublicKeyFetcher } from "../signatures/key-cache.ts";
import { verifyRequest } from "../signatures/verify.ts";

const actor = { id: "https://remote.example/users/bob", type: "Person" };

test("the fetch document loader follows redirects and reports the final URL", async () => {
  const server = await startTestServer((request) =>
    new URL(request.url).pathname === "/old"
      ? new Response(null, { status: 301, headers: { Location: "/users/bob" } })
      : new Response(JSON.stringify(actor), {
        headers: { "Content-Type": "application/activity+json" },
      })
  );
  try {
    const load = createFetchDocumentLoader({
      userAgent: "FedworkTest/1.0",
      allowPrivateAddress: true,
    });
    const document = await load(new URL("/old", server.url).href);
    assertEquals(document, {
      documentUrl: new URL("/users/bob", server.url).href,
      document: actor,
      contextUrl: null,
    });
    assertEquals(server.requests.map((request) => request.headers.get("user-agent")), [
      "FedworkTest/1.0",
      "FedworkTest/1.0",
    ]);
    assertEquals(
      server.requests[0].headers.get("accept"),
      "application/activity+json, application/ld+json",
    );
  } finally {
    await server.close();
  }
});

test("the fetch document loader fails on an error status", async () => {
  const server = await startTestServer(() => new Response("gone", { status: 404 }));
  try {
    const load = createFetchDocumentLoader({
      userAgent: "FedworkTest/1.0",
      allowPrivateAddress: true,
    });
    await assertRejects(() => load(new URL("/missing", server.url).href), Error, "HTTP 404");
  } finally {
    await server.close();
  }
});

test("the fetch document loader refuses private addresses by default", async () => {
  const server = await startTestServer(() => new Response("{}"));
  try {
    const load = createFetchDocumentLoader({
      userAgent: "FedworkTest/1.0",
      allowPrivateAddress: false,
    });
    await assertRejects(() => load(server.url.href), PrivateAddressError, "allowPrivateAddress");
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("the fetch document loader serves the preloaded JSON-LD contexts without a request", async () => {
  const load = createFetchDocumentLoader({
    userAgent: "FedworkTest/1.0",
    allowPrivateAddress: false,
  });
  const url = "https://www.w3.org/ns/activitystreams";
  const original = globalThis.fetch;
  let fetched = 0;
  globalThis.fetch = (() => {
    fetched++;
    return Promise.reject(new Error("no network in this test"));
  }) as typeof fetch;
  try {
    const document = await load(url);
    assertEquals(document, {
      documentUrl: url,
      document: preloadedContexts[url],
      contextUrl: null,
    });
    assertEquals(fetched, 0);
  } finally {
    globalThis.fetch = original;
  }
});

test("a signing document loader knocks with RFC 9421, then draft-cavage when refused", async () => {
  const keys = await generateCryptoKeyPair();
  const keyId = new URL("https://example.com/users/alice#main-key");
  const fetchKey: PublicKeyFetcher = (id) =>
    Promise.resolve({ keyId: id, publicKey: keys.publicKey, owner: null, cached: false });
  const schemes: string[] = [];
  const server = await startTestServer(async (request) => {
    const result = await verifyRequest(request, { fetchKey });
    schemes.push(result.verified ? result.spec : `refused: ${result.reason}`);
    // This server verifies only draft-cavage, as older Mastodon did.
    if (!result.verified || result.spec !== "draft-cavage-http-signatures-12") {
      return new Response("unauthorized", { status: 401 });
    }
    return new Response(JSON.stringify(actor), {
      headers: { "Content-Type": "application/activity+json" },
    });
  });
  try {
    const load = createFetchDocumentLoader({
      userAgent: "FedworkTest/1.0",
      allowPrivateAddress: true,
      signer: { keyId, privateKey: keys.privateKey },
    });
    const document = await load(new URL("/users/bob", server.url).href);
    assertEquals(document.document, actor);
    assertEquals(schemes, ["rfc9421", "draft-cavage-http-signatures-12"]);
  } finally {
    await server.close();
  }
});
