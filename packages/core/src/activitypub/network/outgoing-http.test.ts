import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  startTestServer,
  test,
} from "@fedify/fixture";
import {
  PrivateAddressError,
  RemoteBodyTooLargeError,
  RemoteTimeoutError,
  TooManyRedirectsError,
  UnacceptableContentTypeError,
} from "./errors.ts";
import { fetchRemote, type FetchRemoteOptions, JSON_LD_CONTENT_TYPES } from "./outgoing-http.ts";
import { guardedLookup } from "./guarded-fetch.ts";
import { NodeHttpClient } from "./node-http-client.ts";
import { startHostileServer } from "./testdata/hostile-server.ts";
import * as http from "node:http";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as zlib from "node:zlib";
import { gzipSync } from "node:zlib";

const base: FetchRemoteOptions = { userAgent: "FedworkTest/1.0", allowPrivateAddress: true };
const MiB = 1024 * 1024;

test("fetchRemote() aborts a server that never answers at its time limit", async () => {
  await using server = await startHostileServer({ kind: "hang" });
  const error = await assertRejects(
    () => fetchRemote(server.url, { ...base, timeout: { milliseconds: 300 } }),
    RemoteTimeoutError,
  );
  assertEquals(error.timeoutMs, 300);
  // The connection is dropped, not left open.
  await server.waitForClosed(1);
});

test("fetchRemote() aborts a body trickled one byte at a time at its time limit", async () => {
  await using server = await startHostileServer({ kind: "trickle", intervalMs: 20 });
  await assertRejects(
    () => fetchRemote(server.url, { ...base, timeout: { milliseconds: 400 } }),
    RemoteTimeoutError,
  );
  await server.waitForClosed(1);
  const sent = server.bytesSent;
  assert(sent > 1, `the server trickled ${sent} bytes before the limit`);
});

test("fetchRemote() stops reading an endless body at maxBodyBytes", async () => {
  await using server = await startHostileServer({
    kind: "huge",
    totalBytes: 256 * MiB,
    declareLength: false,
  });
  await assertRejects(
    () => fetchRemote(server.url, { ...base, maxBodyBytes: MiB }),
    RemoteBodyTooLargeError,
  );
  await server.waitForClosed(1);
  // What the server wrote beyond the limit sits in socket buffers at most.
  assert(server.bytesSent < 48 * MiB, `the server sent ${server.bytesSent} bytes`);
});

test("fetchRemote() refuses a declared oversized body before reading it", async () => {
  await using server = await startHostileServer({
    kind: "huge",
    totalBytes: 256 * MiB,
    declareLength: true,
  });
  await assertRejects(
    () => fetchRemote(server.url, { ...base, maxBodyBytes: MiB }),
    RemoteBodyTooLargeError,
  );
  await server.waitForClosed(1);
  assert(server.bytesSent < 48 * MiB, `the server sent ${server.bytesSent} bytes`);
});

test("fetchRemote() keeps only the first bytes of a body when told to truncate", async () => {
  await using server = await startHostileServer({
    kind: "huge",
    totalBytes: 16 * MiB,
    declareLength: false,
    status: 500,
  });
  const response = await fetchRemote(server.url, {
    ...base,
    maxBodyBytes: 4096,
    oversizedBody: "truncate",
  });
  assertEquals([response.status, response.body.byteLength, response.truncated], [500, 4096, true]);
});

test("fetchRemote() follows at most maxRedirects redirects, and none with redirect: error", async () => {
  await using server = await startTestServer((request) =>
    new Response(null, {
      status: 302,
      headers: { Location: `/hop${Number(new URL(request.url).pathname.slice(4) || 0) + 1}` },
    })
  );
  await assertRejects(
    () => fetchRemote(new URL("/hop0", server.url), { ...base, maxRedirects: 3 }),
    TooManyRedirectsError,
  );
  assertEquals(server.requests.length, 4);
  await assertRejects(
    () => fetchRemote(new URL("/hop0", server.url), { ...base, redirect: "error" }),
    TooManyRedirectsError,
  );
  assertEquals(server.requests.length, 5);
});

test("fetchRemote() reports the final URL and returns a small body whole", async () => {
  await using server = await startTestServer((request) =>
    new URL(request.url).pathname === "/old"
      ? new Response(null, { status: 301, headers: { Location: "/new" } })
      : Response.json({ hello: "world" }, {
        headers: { "Content-Type": 'application/ld+json; profile="x"' },
      })
  );
  const response = await fetchRemote(new URL("/old", server.url), {
    ...base,
    acceptContentTypes: JSON_LD_CONTENT_TYPES,
  });
  assertEquals(response.url.href, new URL("/new", server.url).href);
  assertEquals(response.json(), { hello: "world" });
  assertEquals(server.requests.map((r) => r.headers.get("user-agent")), [
    "FedworkTest/1.0",
    "FedworkTest/1.0",
  ]);
});

test("fetchRemote() refuses a document of another content type when told which to accept", async () => {
  await using server = await startTestServer(() =>
    new Response('{"id":"x"}', { headers: { "Content-Type": "text/plain" } })
  );
  const error = await assertRejects(
    () => fetchRemote(server.url, { ...base, acceptContentTypes: JSON_LD_CONTENT_TYPES }),
    UnacceptableContentTypeError,
  );
  assertEquals(error.contentType, "text/plain");
});

test("fetchRemote() names an invalid limit", async () => {
  await assertRejects(
    () => fetchRemote("http://127.0.0.1/", { ...base, maxBodyBytes: -1 }),
    RangeError,
    "maxBodyBytes",
  );
});

test("fetchRemote() leaves the caller's abort an abort, not a timeout", async () => {
  await using server = await startHostileServer({ kind: "hang" });
  const controller = new AbortController();
  const pending = fetchRemote(server.url, { ...base, signal: controller.signal });
  setTimeout(() => controller.abort(new Error("stop")), 50);
  const error = await pending.catch((error) => error);
  assertInstanceOf(error, Error);
  assert(!(error instanceof RemoteTimeoutError), `got ${error}`);
});

test("fetchRemote() refuses private hosts in any spelling before a request is made", async () => {
  await using server = await startTestServer(() => new Response("internal"));
  const { port } = server.url;
  for (
    const host of ["localhost", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0x7f.1", "2130706433"]
  ) {
    const error = await assertRejects(
      () => fetchRemote(`http://${host}:${port}/`, { ...base, allowPrivateAddress: false }),
      PrivateAddressError,
    );
    assertEquals(error.url, `http://${new URL(`http://${host}`).host}:${port}/`);
  }
  assertEquals(server.requests.length, 0);
});

test("the guarded lookup refuses names of non-public hosts", async () => {
  const result = await new Promise<unknown>((resolve) =>
    guardedLookup("localhost", { all: true }, (error, addresses) => resolve(error ?? addresses))
  );
  assertInstanceOf(result, PrivateAddressError);
});

/** A node:http server on loopback counting connections and requests. */
async function startCountingServer(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: URL; connections: () => number; requests: () => number } & AsyncDisposable> {
  let connections = 0;
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    request.resume();
    request.on("end", () => answer(request, response));
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    connections: () => connections,
    requests: () => requests,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

test("fetchRemote() decodes a gzip body and caps it by its decoded size", async () => {
  const document = JSON.stringify({ id: "https://example.com/x", content: "y".repeat(5000) });
  await using server = await startCountingServer((request, response) => {
    const bomb = request.url === "/bomb";
    // 8 MiB of spaces compress to a few KiB.
    const body = gzipSync(bomb ? new Uint8Array(8 * MiB).fill(0x20) : document);
    response.writeHead(200, {
      "Content-Type": "application/activity+json",
      "Content-Encoding": "gzip",
      "Content-Length": String(body.byteLength),
    });
    response.end(body);
  });
  const response = await fetchRemote(server.url, base);
  assertEquals(response.text(), document);
  await assertRejects(
    () => fetchRemote(new URL("/bomb", server.url), { ...base, maxBodyBytes: MiB }),
    RemoteBodyTooLargeError,
  );
});

test("fetchRemote() reads response headers in any case, repeated ones joined", async () => {
  const document = JSON.stringify({ id: "https://example.com/x" });
  await using server = await startCountingServer((request, response) => {
    response.setHeader("X-Tag", ["a", " b "]);
    if (request.url === "/old") {
      response.writeHead(301, { LOCATION: "/new" });
      response.end();
      return;
    }
    const body = gzipSync(document);
    response.writeHead(200, {
      "content-type": "application/activity+json",
      "CONTENT-ENCODING": "gzip",
      "Content-Length": String(body.byteLength),
    });
    response.end(body);
  });
  const response = await fetchRemote(new URL("/old", server.url), {
    ...base,
    acceptContentTypes: ["application/activity+json"],
  });
  assertEquals(response.url.href, new URL("/new", server.url).href);
  assertEquals(response.text(), document);
  assertEquals(response.headers.get("x-tag"), "a, b");
  assertEquals(response.headers.get("content-encoding"), "gzip");
  assertEquals(server.requests(), 2);
});

test("fetchRemote() keeps the connection to an origin open between requests", async () => {
  await using server = await startCountingServer((_, response) => {
    response.writeHead(202, { "Content-Length": "0" });
    response.end();
  });
  for (let i = 0; i < 3; i++) {
    const response = await fetchRemote(server.url, { ...base, method: "POST", body: `{"n":${i}}` });
    assertEquals(response.status, 202);
  }
  assertEquals(server.requests(), 3);
  assertEquals(server.connections(), 1);
});

test("fetchRemote() rejects with a TypeError when the connection drops mid-body", async () => {
  await using server = await startCountingServer((_, response) => {
    response.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" });
    response.write('{"partial":');
    setTimeout(() => response.socket?.destroy(), 20);
  });
  await assertRejects(() => fetchRemote(server.url, base), TypeError);
});

test("the Node.js HTTP client checks a name at the connection's own lookup", async () => {
  await using server = await startCountingServer((_, response) => {
    response.writeHead(200, { "Content-Type": "text/plain" });
    response.end("reached");
  });
  const looked: string[] = [];
  const client = new NodeHttpClient(
    { http, https, zlib },
    (hostname, _, callback) => {
      looked.push(hostname);
      if (hostname === "private.test") callback(new PrivateAddressError(hostname, "10.0.0.1"), []);
      else callback(null, [{ address: "127.0.0.1", family: 4 }]);
    },
  );
  const { port } = server.url;
  const request = (host: string) => ({
    url: new URL(`http://${host}:${port}/`),
    method: "GET",
    headers: new Headers(),
    body: null,
  });
  const signal = new AbortController().signal;
  const answer = await client.send(request("public.test"), "lookup", signal);
  assertEquals(answer.status, 200);
  assertEquals(new TextDecoder().decode((await answer.read(100, signal)).body), "reached");
  const error = await assertRejects(
    () => client.send(request("private.test"), "lookup", signal),
    PrivateAddressError,
  );
  assertEquals(error.url, `http://private.test:${port}/`);
  assertEquals(error.address, "10.0.0.1");
  assertEquals(looked, ["public.test", "private.test"]);
  assertEquals(server.requests(), 1);
});

test("fetchRemote() sends what its sign option returns, at every hop", async () => {
  await using server = await startTestServer((request) =>
    new URL(request.url).pathname === "/old"
      ? new Response(null, { status: 307, headers: { Location: "/new" } })
      : new Response("ok")
  );
  const signedFor: string[] = [];
  const response = await fetchRemote(new URL("/old", server.url), {
    ...base,
    method: "POST",
    body: "héllo",
    sign: (request) => {
      signedFor.push(new URL(request.url).pathname);
      const headers = new Headers(request.headers);
      headers.set("X-Signed-For", new URL(request.url).pathname);
      return new Request(request, { headers });
    },
  });
  assertEquals(response.status, 200);
  assertEquals(signedFor, ["/old", "/new"]);
  const received = server.requests;
  assertEquals(received.map((r) => r.headers.get("x-signed-for")), ["/old", "/new"]);
  // A text body goes as UTF-8 with the content type a WHATWG Request gives it.
  assertEquals(received[1].headers.get("content-type"), "text/plain;charset=UTF-8");
  assertEquals(received[1].body, "héllo");
});

test("the Node.js HTTP client survives a connection reset before the body is read", async () => {
  await using server = await startCountingServer((_, response) => {
    response.writeHead(200, { "Content-Type": "text/plain", "Content-Length": "1000" });
    response.write("partial");
    setTimeout(() => response.socket?.destroy(), 10);
  });
  const client = new NodeHttpClient({ http, https, zlib }, guardedLookup);
  const signal = new AbortController().signal;
  const request = { url: server.url, method: "GET", headers: new Headers(), body: null };
  const answer = await client.send(request, "none", signal);
  assertEquals(answer.status, 200);
  // Nobody reads while the peer resets the connection.
  await new Promise((resolve) => setTimeout(resolve, 100));
  await assertRejects(() => answer.read(10_000, signal), TypeError);
});
