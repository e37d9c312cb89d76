import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { PrivateAddressError } from "../network/errors.ts";
import type { PublicKeyFetcher } from "../signatures/key-cache.ts";
import { verifyRequest } from "../signatures/verify.ts";
import { startTestServer } from "@fedify/fixture";
import { deliverSignedActivity, type DeliverSignedActivityOptions } from "./deliver.ts";
import { MissingSigningKeyError } from "./errors.ts";

const actor = new URL("https://example.com/users/alice");
const rsa = await generateCryptoKeyPair();
const ed25519 = await generateCryptoKeyPair("Ed25519");
const keys = [
  { keyId: new URL("#key-2", actor), privateKey: ed25519.privateKey },
  { keyId: new URL("#main-key", actor), privateKey: rsa.privateKey },
];
const activity = {
  "@context": "https://www.w3.org/ns/activitystreams",
  id: "https://example.com/follows/1",
  type: "Follow",
  actor: actor.href,
  object: "https://remote.example/users/bob",
};
const fetchKey: PublicKeyFetcher = (keyId) =>
  Promise.resolve(
    keyId.hash === "#main-key"
      ? { keyId, publicKey: rsa.publicKey, owner: actor, cached: false }
      : null,
  );

/** An inbox that verifies signatures with our verifier and may refuse RFC 9421. */
function inbox(options: { rejectRfc9421?: boolean; status?: number } = {}) {
  const seen: string[] = [];
  const server = startTestServer(async (request) => {
    const result = await verifyRequest(request, { fetchKey });
    if (!result.verified) {
      seen.push(`refused:${result.reason}`);
      return new Response(result.message, { status: 401 });
    }
    seen.push(result.spec);
    if (options.rejectRfc9421 && result.spec === "rfc9421") {
      return new Response("RFC 9421 not supported", { status: 401 });
    }
    assertEquals(await request.json(), activity);
    return new Response(null, { status: options.status ?? 202 });
  });
  return { server, seen };
}

function deliver(url: URL, extra: Partial<DeliverSignedActivityOptions> = {}) {
  return deliverSignedActivity({
    activity,
    inbox: url,
    keys,
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
    ...extra,
  });
}

test("deliverSignedActivity() signs with RFC 9421 first and the first RSA key", async () => {
  const { server: starting, seen } = inbox();
  await using server = await starting;
  const kv = new MemoryKvStore();
  const result = await deliver(new URL("/inbox", server.url), { kv });
  assertEquals(result.kind, "delivered");
  assert(result.kind === "delivered");
  assertEquals([result.status, result.spec], [202, "rfc9421"]);
  assertEquals(seen, ["rfc9421"]);
  assertEquals(server.requests[0].headers.get("content-type"), "application/activity+json");
  assertEquals(await kv.get(["fedwork", "http-signature-spec", server.url.origin]), "rfc9421");
});

test("deliverSignedActivity() knocks again with draft-cavage after a 401 and remembers it", async () => {
  const { server: starting, seen } = inbox({ rejectRfc9421: true });
  await using server = await starting;
  const kv = new MemoryKvStore();
  const first = await deliver(new URL("/inbox", server.url), { kv });
  assertEquals(first.kind === "delivered" && first.spec, "draft-cavage-http-signatures-12");
  assertEquals(seen, ["rfc9421", "draft-cavage-http-signatures-12"]);
  const second = await deliver(new URL("/users/bob/inbox", server.url), { kv });
  assertEquals(second.kind, "delivered");
  // The origin's scheme was remembered: no knock with RFC 9421 this time.
  assertEquals(seen, [
    "rfc9421",
    "draft-cavage-http-signatures-12",
    "draft-cavage-http-signatures-12",
  ]);
});

test("deliverSignedActivity() starts with the firstKnock scheme", async () => {
  const { server: starting, seen } = inbox();
  await using server = await starting;
  const result = await deliver(server.url, { firstKnock: "draft-cavage-http-signatures-12" });
  assertEquals(result.kind, "delivered");
  assertEquals(seen, ["draft-cavage-http-signatures-12"]);
});

test("deliverSignedActivity() reports 404 and 410 as permanent failures", async () => {
  for (const status of [404, 410]) {
    await using server = await startTestServer(() => new Response("gone", { status }));
    const result = await deliver(server.url);
    assertEquals([result.kind, result.status], ["permanentFailure", status]);
    // Both schemes were tried before giving up.
    assertEquals(server.requests.length, 2);
  }
  await using server = await startTestServer(() => new Response("nope", { status: 403 }));
  const custom = await deliver(server.url, { permanentFailureStatusCodes: [403] });
  assertEquals(custom.kind, "permanentFailure");
});

test("deliverSignedActivity() reports 5xx, 408 and 429 as retryable with the status", async () => {
  for (const status of [500, 503, 408, 429]) {
    await using server = await startTestServer(() => new Response("busy", { status }));
    const result = await deliver(server.url);
    assertEquals([result.kind, result.status], ["retryableFailure", status]);
    assert(result.kind === "retryableFailure");
    assertEquals(result.body, "busy");
  }
});

test("deliverSignedActivity() reports a network error as retryable with its cause", async () => {
  const server = await startTestServer(() => new Response(null));
  const url = server.url;
  await server.close();
  const result = await deliver(url);
  assertEquals([result.kind, result.status], ["retryableFailure", null]);
  assert(result.kind === "retryableFailure" && result.cause != null);
});

test("deliverSignedActivity() follows redirects, re-signing the request for each URL", async () => {
  const { server: starting, seen } = inbox();
  await using target = await starting;
  await using redirector = await startTestServer(() =>
    new Response(null, { status: 308, headers: { Location: new URL("/moved", target.url).href } })
  );
  const result = await deliver(new URL("/inbox", redirector.url));
  assert(result.kind === "delivered");
  assertEquals(result.url.href, new URL("/moved", target.url).href);
  // The target verified a signature made for its own URL.
  assertEquals(seen, ["rfc9421"]);
});

test("deliverSignedActivity() refuses private addresses unless allowed, permanently", async () => {
  await using server = await startTestServer(() => new Response(null, { status: 202 }));
  const result = await deliver(server.url, { allowPrivateAddress: false });
  assertEquals(result.kind, "permanentFailure");
  assert(result.kind === "permanentFailure");
  assertInstanceOf(result.cause, PrivateAddressError);
  assertEquals(server.requests.length, 0);
});

test("deliverSignedActivity() needs an RSA key", async () => {
  await assertRejects(
    () => deliver(new URL("https://remote.example/inbox"), { keys: [keys[0]] }),
    MissingSigningKeyError,
    "RSASSA-PKCS1-v1_5",
  );
});

test("a 429 or 503 with Retry-After gets no second knock and reports the wait; one without gets its second knock", async () => {
  for (
    const [status, retryAfter, requests, wait] of [
      [429, "7", 1, 7000],
      [503, "3", 1, 3000],
      [429, null, 2, undefined],
      [503, "soon", 2, undefined],
    ] as const
  ) {
    await using server = await startTestServer(() =>
      new Response("slow down", {
        status,
        headers: retryAfter == null ? {} : { "Retry-After": retryAfter },
      })
    );
    const result = await deliver(new URL("/inbox", server.url));
    assert(result.kind === "retryableFailure");
    assertEquals(result.status, status);
    assertEquals(result.retryAfterMs, wait);
    assertEquals(server.requests.length, requests, `${status} ${retryAfter}`);
  }
});

test("deliverSignedActivity() answers an Accept-Signature challenge with the nonce asked for", async () => {
  const nonces: (string | undefined)[] = [];
  await using server = await startTestServer(async (request) => {
    const result = await verifyRequest(request, { fetchKey });
    nonces.push(result.verified ? result.nonce : `refused:${result.reason}`);
    if (result.verified && result.spec === "rfc9421" && result.nonce === "fresh-1") {
      return new Response(null, { status: 202 });
    }
    return new Response("Sign again.", {
      status: 401,
      headers: {
        "Accept-Signature":
          'sig2=("@method" "@target-uri" "@authority" "content-digest");created;nonce="fresh-1"',
      },
    });
  });
  const kv = new MemoryKvStore();
  const result = await deliver(new URL("/inbox", server.url), { kv });
  assertEquals(result.kind === "delivered" && result.spec, "rfc9421");
  assertEquals(nonces, [undefined, "fresh-1"]);
  assert(server.requests[1].headers.get("signature-input")?.startsWith("sig2=("));
  assertEquals(await kv.get(["fedwork", "http-signature-spec", server.url.origin]), "rfc9421");
});

test("deliverSignedActivity() knocks with draft-cavage when a challenge cannot be fulfilled", async () => {
  const seen: string[] = [];
  await using server = await startTestServer(async (request) => {
    const result = await verifyRequest(request, { fetchKey });
    seen.push(result.verified ? result.spec : `refused:${result.reason}`);
    if (result.verified && result.spec === "draft-cavage-http-signatures-12") {
      return new Response(null, { status: 202 });
    }
    // A challenge for another key: not ours to answer.
    return new Response(null, {
      status: 401,
      headers: { "Accept-Signature": 'sig1=("@method");keyid="https://other.example/k"' },
    });
  });
  const result = await deliver(new URL("/inbox", server.url));
  assertEquals(result.kind === "delivered" && result.spec, "draft-cavage-http-signatures-12");
  assertEquals(seen, ["rfc9421", "draft-cavage-http-signatures-12"]);
});

test("deliverSignedActivity() asks a specDeterminer which scheme to try and tells it what worked", async () => {
  const { server: starting, seen } = inbox({ rejectRfc9421: true });
  await using server = await starting;
  const asked: string[] = [];
  const remembered: [string, string][] = [];
  const result = await deliver(new URL("/inbox", server.url), {
    specDeterminer: {
      determineSpec(origin) {
        asked.push(origin);
        return "rfc9421";
      },
      rememberSpec(origin, spec) {
        remembered.push([origin, spec]);
      },
    },
  });
  assertEquals(result.kind === "delivered" && result.spec, "draft-cavage-http-signatures-12");
  assertEquals(seen, ["rfc9421", "draft-cavage-http-signatures-12"]);
  assertEquals(asked, [server.url.origin]);
  assertEquals(remembered, [[server.url.origin, "draft-cavage-http-signatures-12"]]);
});
