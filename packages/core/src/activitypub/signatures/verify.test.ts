import { assert, assertEquals, test } from "@fedify/fixture";
import { importPem } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import {
  type InnerList,
  type Item,
  parseDictionary,
  serializeDictionary,
} from "structured-headers";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import type { FetchedPublicKey, PublicKeyFetcher } from "./key-cache.ts";
import { signRequest } from "./sign.ts";
import type { HttpSignatureSpec } from "./spec.ts";
import { encodeBase64 } from "./base64.ts";
import { createDigestHeader } from "./digest.ts";
import { verifyRequest } from "./verify.ts";
import mastodon from "./testdata/mastodon-request.json" with { type: "json" };

const actor = new URL("https://example.com/users/alice");
const keyId = new URL("#main-key", actor);
const rsa = await generateCryptoKeyPair();
const otherRsa = await generateCryptoKeyPair();
const ed25519 = await generateCryptoKeyPair("Ed25519");
const SPECS: HttpSignatureSpec[] = ["draft-cavage-http-signatures-12", "rfc9421"];

function fetcherOf(publicKey: CryptoKey, calls: boolean[] = []): PublicKeyFetcher {
  return (id, options) => {
    calls.push(options?.refresh ?? false);
    const key: FetchedPublicKey = { keyId: id, publicKey, owner: actor, cached: false };
    return Promise.resolve(key);
  };
}

function post(body = '{"type":"Follow"}'): Request {
  return new Request("https://remote.example/users/bob/inbox?x=1", {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body,
  });
}

for (const spec of SPECS) {
  test(`a POST signed with ${spec} verifies, naming the scheme and key`, async () => {
    const signed = await signRequest(post(), rsa.privateKey, keyId, { spec });
    const result = await verifyRequest(signed, { fetchKey: fetcherOf(rsa.publicKey) });
    assert(result.verified, JSON.stringify(result));
    assertEquals(result.spec, spec);
    assertEquals(result.keyId.href, keyId.href);
    assertEquals(result.key.owner?.href, actor.href);
    // The body is still readable after signing and verifying.
    assertEquals(await signed.text(), '{"type":"Follow"}');
  });

  test(`a GET signed with ${spec} verifies`, async () => {
    const request = new Request("https://remote.example/users/bob", {
      headers: { Accept: "application/activity+json" },
    });
    const signed = await signRequest(request, rsa.privateKey, keyId, { spec });
    const result = await verifyRequest(signed, { fetchKey: fetcherOf(rsa.publicKey) });
    assert(result.verified, JSON.stringify(result));
  });

  test(`a ${spec} signature fails with a tampered body`, async () => {
    const signed = await signRequest(post(), rsa.privateKey, keyId, { spec });
    const tampered = new Request(signed, { body: '{"type":"Delete"}' });
    const result = await verifyRequest(tampered, { fetchKey: fetcherOf(rsa.publicKey) });
    assertEquals(result.verified ? "verified" : result.reason, "digestMismatch");
  });

  test(`a ${spec} signature fails with the wrong key`, async () => {
    const signed = await signRequest(post(), rsa.privateKey, keyId, { spec });
    const result = await verifyRequest(signed, { fetchKey: fetcherOf(otherRsa.publicKey) });
    assertEquals(result.verified ? "verified" : result.reason, "invalidSignature");
  });

  test(`a ${spec} signature fails outside the time window unless the window is off`, async () => {
    const signedAt = Temporal.Instant.from("2026-01-01T00:00:00Z");
    const signed = await signRequest(post(), rsa.privateKey, keyId, {
      spec,
      currentTime: signedAt,
    });
    const fetchKey = fetcherOf(rsa.publicKey);
    const late = await verifyRequest(signed, {
      fetchKey,
      currentTime: signedAt.add({ hours: 2 }),
    });
    assertEquals(late.verified ? "verified" : late.reason, "outsideTimeWindow");
    const early = await verifyRequest(signed, {
      fetchKey,
      currentTime: signedAt.subtract({ minutes: 10 }),
      timeWindow: { minutes: 5 },
    });
    assertEquals(early.verified ? "verified" : early.reason, "outsideTimeWindow");
    const within = await verifyRequest(signed, {
      fetchKey,
      currentTime: signedAt.add({ minutes: 59 }),
    });
    assert(within.verified);
    const unchecked = await verifyRequest(signed, { fetchKey, timeWindow: false });
    assert(unchecked.verified);
  });

  test(`a ${spec} signature refetches a cached key once when it fails`, async () => {
    const signed = await signRequest(post(), rsa.privateKey, keyId, { spec });
    const calls: boolean[] = [];
    const fetchKey: PublicKeyFetcher = (id, options) => {
      calls.push(options?.refresh ?? false);
      return Promise.resolve({
        keyId: id,
        // The cache holds the key from before the rotation.
        publicKey: options?.refresh ? rsa.publicKey : otherRsa.publicKey,
        owner: actor,
        cached: !options?.refresh,
      });
    };
    const result = await verifyRequest(signed, { fetchKey });
    assert(result.verified);
    assertEquals(calls, [false, true]);
  });
}

test("an RFC 9421 signature made with an Ed25519 key verifies", async () => {
  const signed = await signRequest(post(), ed25519.privateKey, keyId, { spec: "rfc9421" });
  assertEquals(
    signed.headers.get("signature-input")?.includes('alg="ed25519"'),
    true,
  );
  const result = await verifyRequest(signed, { fetchKey: fetcherOf(ed25519.publicKey) });
  assert(result.verified);
  const wrongType = await verifyRequest(signed, { fetchKey: fetcherOf(rsa.publicKey) });
  assertEquals(wrongType.verified ? "verified" : wrongType.reason, "invalidSignature");
});

test("draft-cavage signing refuses an Ed25519 key", async () => {
  let error: unknown;
  try {
    await signRequest(post(), ed25519.privateKey, keyId);
  } catch (e) {
    error = e;
  }
  assert(error instanceof TypeError);
});

test("signatures with the exact headers each scheme defines are produced", async () => {
  const when = Temporal.Instant.from("2026-11-23T12:00:00Z");
  const cavage = await signRequest(post(), rsa.privateKey, keyId, { currentTime: when });
  assertEquals(cavage.headers.get("date"), "Mon, 23 Nov 2026 12:00:00 GMT");
  assert(cavage.headers.get("digest")?.startsWith("SHA-256="));
  assert(
    cavage.headers.get("signature")?.startsWith(
      `keyId="${keyId.href}",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="`,
    ),
  );
  const rfc = await signRequest(post(), rsa.privateKey, keyId, {
    spec: "rfc9421",
    currentTime: when,
  });
  assertEquals(
    rfc.headers.get("signature-input"),
    `sig1=("@method" "@target-uri" "@authority" "content-digest" "date");` +
      `alg="rsa-v1_5-sha256";keyid="${keyId.href}";created=${when.epochMilliseconds / 1000}`,
  );
  assert(rfc.headers.get("content-digest")?.startsWith("sha-256=:"));
  assert(rfc.headers.get("signature")?.match(/^sig1=:[A-Za-z0-9+/]+=*:$/));
});

test("RFC 9421 headers written as text match the structured-field serialization", async () => {
  const when = Temporal.Instant.from("2026-11-23T12:00:00Z");
  const created = when.epochMilliseconds / 1000;
  // Without a body: no content-digest among the components.
  const get = await signRequest(
    new Request("https://remote.example/users/bob", { method: "GET" }),
    rsa.privateKey,
    keyId,
    { spec: "rfc9421", currentTime: when },
  );
  assertEquals(
    get.headers.get("signature-input"),
    `sig1=("@method" "@target-uri" "@authority" "date");` +
      `alg="rsa-v1_5-sha256";keyid="${keyId.href}";created=${created}`,
  );
  assertEquals(get.headers.get("content-digest"), null);
  const input = parseDictionary(get.headers.get("signature-input")!);
  assertEquals(serializeDictionary(input), get.headers.get("signature-input"));
  // A key id with a backslash (a URL keeps one in its fragment) is escaped.
  const oddKeyId = new URL("https://example.com/users/alice#main\\key");
  const odd = await signRequest(post(), rsa.privateKey, oddKeyId, {
    spec: "rfc9421",
    currentTime: when,
  });
  assertEquals(
    odd.headers.get("signature-input"),
    `sig1=("@method" "@target-uri" "@authority" "content-digest" "date");` +
      `alg="rsa-v1_5-sha256";keyid="https://example.com/users/alice#main\\\\key";` +
      `created=${created}`,
  );
  const signature = parseDictionary(odd.headers.get("signature")!).get("sig1") as Item;
  assert(signature[0] instanceof ArrayBuffer);
  assertEquals(signature[0].byteLength, 256);
});

test("verification fails on a request without any signature", async () => {
  const result = await verifyRequest(post(), { fetchKey: fetcherOf(rsa.publicKey) });
  assertEquals(result.verified ? "verified" : result.reason, "noSignature");
});

test("a draft-cavage signature must cover the target, host, date and digest", async () => {
  const signed = await signRequest(post(), rsa.privateKey, keyId);
  const withHeaders = (headers: string) => {
    const request = new Request(signed.clone());
    request.headers.set(
      "Signature",
      signed.headers.get("signature")!.replace(/headers="[^"]*"/, `headers="${headers}"`),
    );
    return request;
  };
  const fetchKey = fetcherOf(rsa.publicKey);
  for (
    const headers of [
      "(request-target) host digest",
      "host date",
      "(request-target) host date",
      // Mastodon takes these two; they name no inbox, or no server.
      "host date digest",
      "(request-target) date digest",
    ]
  ) {
    const result = await verifyRequest(withHeaders(headers), { fetchKey });
    assertEquals(result.verified ? "verified" : result.reason, "missingRequiredComponent", headers);
  }
  const unsigned = new Request(signed.clone());
  unsigned.headers.delete("digest");
  const noDigest = await verifyRequest(unsigned, { fetchKey });
  assertEquals(noDigest.verified ? "verified" : noDigest.reason, "missingDigest");
});

test("an RFC 9421 signature must cover the method, target URI and content digest", async () => {
  const signed = await signRequest(post(), rsa.privateKey, keyId, { spec: "rfc9421" });
  const fetchKey = fetcherOf(rsa.publicKey);
  for (const component of ['"@method" ', '"@target-uri" ', '"content-digest" ']) {
    const request = new Request(signed.clone());
    request.headers.set(
      "Signature-Input",
      signed.headers.get("signature-input")!.replace(component, ""),
    );
    const result = await verifyRequest(request, { fetchKey });
    assertEquals(result.verified ? "verified" : result.reason, "missingRequiredComponent");
  }
  const noCreated = new Request(signed.clone());
  noCreated.headers.set(
    "Signature-Input",
    signed.headers.get("signature-input")!.replace(/;created=\d+/, ""),
  );
  const result = await verifyRequest(noCreated, { fetchKey });
  assertEquals(result.verified ? "verified" : result.reason, "malformedSignature");
});

test("a request signed exactly as Mastodon signs verifies (fixed test vector)", async () => {
  const { request: fixture } = mastodon;
  const request = new Request(fixture.url, {
    method: fixture.method,
    headers: fixture.headers,
    body: fixture.body,
  });
  const publicKey = await importPem(mastodon.actor.publicKey.publicKeyPem);
  const options = {
    fetchKey: fetcherOf(publicKey),
    currentTime: Temporal.Instant.from("2026-11-23T12:03:00Z"),
  };
  const result = await verifyRequest(request, options);
  assert(result.verified, JSON.stringify(result));
  assertEquals(result.spec, "draft-cavage-http-signatures-12");
  assertEquals(result.keyId.href, mastodon.keyId);
  const tampered = new Request(fixture.url, {
    method: fixture.method,
    headers: fixture.headers,
    body: fixture.body.replace("Follow", "Block"),
  });
  const refused = await verifyRequest(tampered, options);
  assertEquals(refused.verified ? "verified" : refused.reason, "digestMismatch");
  const expired = await verifyRequest(request, {
    ...options,
    currentTime: Temporal.Instant.from("2026-11-23T13:30:00Z"),
  });
  assertEquals(expired.verified ? "verified" : expired.reason, "outsideTimeWindow");
});

test("verification behind a proxy checks the URL against the public origin", async () => {
  const signed = await signRequest(post(), rsa.privateKey, keyId, { spec: "rfc9421" });
  const proxied = new Request("http://127.0.0.1:8000/users/bob/inbox?x=1", {
    method: "POST",
    headers: signed.headers,
    body: await signed.text(),
  });
  const fetchKey = fetcherOf(rsa.publicKey);
  const wrong = await verifyRequest(proxied.clone(), { fetchKey });
  assertEquals(wrong.verified ? "verified" : wrong.reason, "invalidSignature");
  const right = await verifyRequest(proxied, { fetchKey, origin: "https://remote.example" });
  assert(right.verified, JSON.stringify(right));
});

for (const spec of SPECS) {
  test(`verification behind a proxy that rewrote Host checks ${spec}'s host against the public origin`, async () => {
    const signed = await signRequest(post(), rsa.privateKey, keyId, { spec });
    // What nginx passes on by default: its upstream's address as the Host.
    const headers = new Headers(signed.headers);
    headers.set("host", "127.0.0.1:8000");
    const proxied = new Request("http://127.0.0.1:8000/users/bob/inbox?x=1", {
      method: "POST",
      headers,
      body: await signed.text(),
    });
    const fetchKey = fetcherOf(rsa.publicKey);
    const wrong = await verifyRequest(proxied.clone(), { fetchKey });
    assertEquals(wrong.verified ? "verified" : wrong.reason, "invalidSignature");
    const right = await verifyRequest(proxied.clone(), {
      fetchKey,
      origin: "https://remote.example",
    });
    assert(right.verified, JSON.stringify(right));
    // A request signed for another server is still refused there.
    const elsewhere = await verifyRequest(proxied, { fetchKey, origin: "https://other.example" });
    assertEquals(elsewhere.verified ? "verified" : elsewhere.reason, "invalidSignature");
  });
}

/** A fetcher that verifies with `publicKey` whatever the key id, recording each id asked for. */
function recordingFetcher(publicKey: CryptoKey, asked: string[]): PublicKeyFetcher {
  return (id) => {
    asked.push(id.href);
    return Promise.resolve({ keyId: id, publicKey, owner: actor, cached: false });
  };
}

/**
 * A request carrying `count` RFC 9421 signatures labelled `sig0`…, each
 * naming its own key `…#key-<i>`; the one at `genuineAt` (if any) is the
 * genuine signature made with `keyId`, the others copies of it whose
 * changed key id no longer verifies.
 */
async function manySignatures(count: number, genuineAt = -1): Promise<Request> {
  const signed = await signRequest(post(), rsa.privateKey, keyId, { spec: "rfc9421" });
  const [[components, parameters]] = parseDictionary(signed.headers.get("signature-input")!)
    .values() as Iterable<InnerList>;
  const [signature] = parseDictionary(signed.headers.get("signature")!).get("sig1") as Item;
  const inputs = new Map<string, InnerList>();
  const signatures = new Map<string, Item>();
  for (let i = 0; i < count; i++) {
    const ownKey = new Map(parameters).set("keyid", new URL(`#key-${i}`, actor).href);
    inputs.set(`sig${i}`, [components, i === genuineAt ? parameters : ownKey]);
    signatures.set(`sig${i}`, [signature, new Map()]);
  }
  const request = new Request(signed);
  request.headers.set("Signature-Input", serializeDictionary(inputs));
  request.headers.set("Signature", serializeDictionary(signatures));
  return request;
}

test("verifyRequest() checks only the first three signatures, in Signature-Input order", async () => {
  const firstThree = [0, 1, 2].map((i) => new URL(`#key-${i}`, actor).href);
  const asked: string[] = [];
  const refused = await verifyRequest(await manySignatures(100), {
    fetchKey: recordingFetcher(rsa.publicKey, asked),
  });
  assertEquals(refused.verified ? "verified" : refused.reason, "invalidSignature");
  assertEquals(asked, firstThree);
  // The genuine signature counts when it is among the first three...
  asked.length = 0;
  const third = await verifyRequest(await manySignatures(100, 2), {
    fetchKey: recordingFetcher(rsa.publicKey, asked),
  });
  assert(third.verified, JSON.stringify(third));
  assertEquals(asked, [...firstThree.slice(0, 2), keyId.href]);
  // ...and is refused unread when it comes fourth.
  asked.length = 0;
  const fourth = await verifyRequest(await manySignatures(100, 3), {
    fetchKey: recordingFetcher(rsa.publicKey, asked),
  });
  assertEquals(fourth.verified ? "verified" : fourth.reason, "invalidSignature");
  assertEquals(asked, firstThree);
});

test("a draft-cavage request with two Signature headers is refused without fetching a key", async () => {
  const signed = await signRequest(post(), rsa.privateKey, keyId);
  const request = new Request(signed);
  request.headers.append(
    "Signature",
    signed.headers.get("signature")!.replace(keyId.href, new URL("#other", actor).href),
  );
  const asked: string[] = [];
  const result = await verifyRequest(request, { fetchKey: recordingFetcher(rsa.publicKey, asked) });
  assertEquals(result.verified ? "verified" : result.reason, "malformedSignature");
  assertEquals(asked, []);
});

test("signatures naming invalid components or garbled times are malformed, and no key is fetched", async () => {
  const cavage = await signRequest(post(), rsa.privateKey, keyId);
  const rfc = await signRequest(post(), rsa.privateKey, keyId, { spec: "rfc9421" });
  const withHeader = (signed: Request, name: string, edit: (value: string) => string) => {
    const request = new Request(signed.clone());
    request.headers.set(name, edit(signed.headers.get(name)!));
    return request;
  };
  const cavageHeaders = (headers: string, extra = "") =>
    withHeader(
      cavage,
      "Signature",
      (value) => value.replace(/headers="[^"]*"/, `headers="${headers}"${extra}`),
    );
  const rfcInput = (edit: (value: string) => string) => withHeader(rfc, "Signature-Input", edit);
  const cases: Record<string, Request> = {
    "cavage (foo)": cavageHeaders("(request-target) host date digest (foo)"),
    "cavage a@b": cavageHeaders("(request-target) host date digest a@b"),
    "cavage created=soon": cavageHeaders(
      "(request-target) host (created) digest",
      ',created="soon"',
    ),
    "cavage created absurd": cavageHeaders(
      "(request-target) host (created) digest",
      ",created=12345678901234567890",
    ),
    "cavage expires=never": cavageHeaders(
      "(request-target) host date digest",
      ',expires="never"',
    ),
    "cavage keyId not a URL": withHeader(
      cavage,
      "Signature",
      (value) => value.replace(keyId.href, "alice"),
    ),
    'rfc9421 "(foo)"': rfcInput((value) => value.replace('"date"', '"date" "(foo)"')),
    'rfc9421 "bad name"': rfcInput((value) => value.replace('"date"', '"date" "bad name"')),
    'rfc9421 "Date"': rfcInput((value) => value.replace('"date"', '"Date"')),
    "rfc9421 date twice": rfcInput((value) => value.replace('"date"', '"date" "date"')),
    'rfc9421 created="soon"': rfcInput((value) => value.replace(/created=\d+/, 'created="soon"')),
    'rfc9421 created="<digits>"': rfcInput((value) =>
      value.replace(/created=(\d+)/, 'created="$1"')
    ),
    "rfc9421 expires=?1": rfcInput((value) => `${value};expires=?1`),
    "rfc9421 keyid not a URL": rfcInput((value) => value.replace(keyId.href, "alice")),
    "rfc9421 garbage base64": withHeader(rfc, "Signature", () => "sig1=:!!not base64!!:"),
  };
  for (const [name, request] of Object.entries(cases)) {
    const asked: string[] = [];
    const result = await verifyRequest(request, {
      fetchKey: recordingFetcher(rsa.publicKey, asked),
    });
    assertEquals(
      [result.verified ? "verified" : result.reason, asked],
      ["malformedSignature", []],
      name,
    );
  }
});

test("verifyRequest() reads no more of an unread body than maxBodyBytes", async () => {
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(64 * 1024));
    },
  });
  const request = new Request("https://example.com/inbox", {
    method: "POST",
    body: endless,
    headers: { Signature: 'keyId="https://remote.example/key",signature="x"' },
    duplex: "half",
  } as RequestInit);
  const result = await verifyRequest(request, {
    fetchKey: () => Promise.reject(new Error("no key should be fetched")),
    maxBodyBytes: 256 * 1024,
  });
  assertEquals(result.verified ? "verified" : result.reason, "bodyTooLarge");
  assert(pulled <= 8, `pulled ${pulled} chunks`);
});

/**
 * Signs a request the draft-cavage way over exactly `names` (real header
 * names only), with `Date` and, when there is a body, `Digest` set: a
 * signature that verifies, whatever it covers.
 */
async function signCavageOver(
  url: string,
  names: readonly string[],
  body: string | null,
): Promise<Request> {
  const headers = new Headers({ Date: new Date().toUTCString() });
  if (body != null || names.includes("digest")) {
    headers.set("Digest", await createDigestHeader(new TextEncoder().encode(body ?? "")));
  }
  const target = new URL(url);
  const method = body == null ? "GET" : "POST";
  const data = names.map((name) => {
    if (name === "(request-target)") return `${name}: ${method.toLowerCase()} ${target.pathname}`;
    return `${name}: ${name === "host" ? target.host : headers.get(name)}`;
  }).join("\n");
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    rsa.privateKey,
    new TextEncoder().encode(data),
  );
  headers.set(
    "Signature",
    `keyId="${keyId.href}",algorithm="rsa-sha256",headers="${names.join(" ")}",` +
      `signature="${encodeBase64(new Uint8Array(signature))}"`,
  );
  return new Request(url, { method, headers, body });
}

test("hostile peer: a draft-cavage POST signed over date and digest alone replays to no inbox", async () => {
  const body = '{"type":"Delete"}';
  const captured = await signCavageOver("https://one.example/inbox", ["date", "digest"], body);
  const fetchKey = fetcherOf(rsa.publicKey);
  // The same headers and body, sent to four inboxes of two servers.
  const inboxes = [
    "https://one.example/inbox",
    "https://one.example/users/bob/inbox",
    "https://two.example/inbox",
    "https://two.example/users/carol/inbox",
  ];
  for (const inbox of inboxes) {
    const replayed = new Request(inbox, { method: "POST", headers: captured.headers, body });
    const result = await verifyRequest(replayed, { fetchKey });
    assertEquals(result.verified ? "verified" : result.reason, "missingRequiredComponent", inbox);
    const message = result.verified ? "verified" : result.message;
    assert(/\(request-target\), host/.test(message), message);
  }
});

test("hostile peer: a draft-cavage GET must name its target, so it fetches nothing else", async () => {
  const fetchKey = fetcherOf(rsa.publicKey);
  // An authorized fetch of one resource, replayed for another on that host.
  for (const names of [["host", "date"], ["host", "date", "digest"]]) {
    const captured = await signCavageOver("https://one.example/users/bob", names, null);
    const replayed = new Request("https://one.example/users/bob/followers", {
      headers: captured.headers,
    });
    const result = await verifyRequest(replayed, { fetchKey });
    assertEquals(
      result.verified ? "verified" : result.reason,
      "missingRequiredComponent",
      names.join(" "),
    );
  }
  // What Mastodon and Fedwork sign verifies.
  const get = await signCavageOver(
    "https://one.example/users/bob",
    ["(request-target)", "host", "date"],
    null,
  );
  const accepted = await verifyRequest(get, { fetchKey });
  assert(accepted.verified, JSON.stringify(accepted));
  const post = await signCavageOver(
    "https://one.example/inbox",
    ["(request-target)", "host", "date", "digest"],
    "{}",
  );
  const delivered = await verifyRequest(post, { fetchKey });
  assert(delivered.verified, JSON.stringify(delivered));
});
