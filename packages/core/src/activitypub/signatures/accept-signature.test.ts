import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import {
  formatAcceptSignature,
  fulfillAcceptSignature,
  MAX_ACCEPT_SIGNATURE_COMPONENTS,
  MAX_ACCEPT_SIGNATURE_LENGTH,
  MAX_ACCEPT_SIGNATURE_MEMBERS,
  parseAcceptSignature,
  validateAcceptSignature,
} from "./accept-signature.ts";
import type { PublicKeyFetcher } from "./key-cache.ts";
import { signRequest } from "./sign.ts";
import { verifyRequest } from "./verify.ts";

const actor = new URL("https://example.com/users/alice");
const keyId = new URL("#main-key", actor);
const rsa = await generateCryptoKeyPair();
const fetchKey: PublicKeyFetcher = (id) =>
  Promise.resolve(
    id.href === keyId.href
      ? { keyId, publicKey: rsa.publicKey, owner: actor, cached: false }
      : null,
  );

test("parseAcceptSignature() reads labels, components with parameters and signature parameters", () => {
  const members = parseAcceptSignature(
    'sig1=("@method" "@target-uri" "content-type";sf);created;nonce="n-1";alg="ed25519", ' +
      'sig2=("@authority");keyid="https://example.com/k";expires;tag="app"',
  );
  assertEquals(members, [
    {
      label: "sig1",
      components: [
        { value: "@method", params: {} },
        { value: "@target-uri", params: {} },
        { value: "content-type", params: { sf: true } },
      ],
      parameters: { alg: "ed25519", created: true, nonce: "n-1" },
    },
    {
      label: "sig2",
      components: [{ value: "@authority", params: {} }],
      parameters: { keyid: "https://example.com/k", expires: true, tag: "app" },
    },
  ]);
});

test("formatAcceptSignature() writes what parseAcceptSignature() reads back", () => {
  const header = 'sig1=("@method" "@target-uri" "content-digest");created;nonce="abc"';
  const members = parseAcceptSignature(header);
  assertEquals(formatAcceptSignature(members), header);
  assertEquals(parseAcceptSignature(formatAcceptSignature(members)), members);
});

test("parseAcceptSignature() gives nothing for a malformed, empty or oversized header", () => {
  assertEquals(parseAcceptSignature('sig1=("@method"'), []);
  assertEquals(parseAcceptSignature(""), []);
  assertEquals(parseAcceptSignature("sig1=?1"), []);
  const long = `sig1=("@method");nonce="${"a".repeat(MAX_ACCEPT_SIGNATURE_LENGTH)}"`;
  assertEquals(parseAcceptSignature(long), []);
});

test("parseAcceptSignature() reads a bounded number of members and components", () => {
  const many = Array.from({ length: 50 }, (_, i) => `s${i}=("@method")`).join(", ");
  assertEquals(
    parseAcceptSignature(many).map((member) => member.label),
    Array.from({ length: MAX_ACCEPT_SIGNATURE_MEMBERS }, (_, i) => `s${i}`),
  );
  const wide = Array.from(
    { length: MAX_ACCEPT_SIGNATURE_COMPONENTS + 1 },
    (_, i) => `"x-h${i}"`,
  ).join(" ");
  assertEquals(parseAcceptSignature(`sig1=(${wide}), sig2=("@method")`).map((m) => m.label), [
    "sig2",
  ]);
});

test("validateAcceptSignature() drops the members asking to cover @status", () => {
  const members = parseAcceptSignature('a=("@status"), b=("@method" "@target-uri")');
  assertEquals(validateAcceptSignature(members).map((member) => member.label), ["b"]);
});

test("fulfillAcceptSignature() refuses another key or algorithm and passes the rest on", () => {
  const [member] = parseAcceptSignature(
    'sig7=("@method" "@target-uri");keyid="https://example.com/users/alice#main-key";' +
      'alg="rsa-v1_5-sha256";nonce="xyz";tag="t";expires',
  );
  assertEquals(fulfillAcceptSignature(member, keyId.href, "rsa-v1_5-sha256"), {
    label: "sig7",
    components: member.components,
    nonce: "xyz",
    tag: "t",
    expires: true,
  });
  assertEquals(fulfillAcceptSignature(member, keyId.href, "ed25519"), null);
  assertEquals(
    fulfillAcceptSignature(member, "https://example.com/other", "rsa-v1_5-sha256"),
    null,
  );
});

test("signRequest() signs with the label, components and nonce of the rfc9421 option", async () => {
  const [member] = parseAcceptSignature(
    'chal=("@method" "@target-uri" "@authority" "content-type");created;nonce="n-42";expires',
  );
  const options = fulfillAcceptSignature(member, keyId.href, "rsa-v1_5-sha256");
  assert(options != null);
  const signed = await signRequest(
    new Request("https://remote.example/inbox", {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: '{"type":"Follow"}',
    }),
    rsa.privateKey,
    keyId,
    { spec: "rfc9421", rfc9421: options },
  );
  const input = signed.headers.get("signature-input") ?? "";
  assert(
    input.startsWith(
      'chal=("@method" "@target-uri" "@authority" "content-type" "content-digest");',
    ),
    input,
  );
  assert(/;expires=\d+/.test(input) && input.includes(';nonce="n-42"'), input);
  const result = await verifyRequest(signed, { fetchKey });
  assert(result.verified, JSON.stringify(result));
  assertEquals([result.label, result.nonce], ["chal", "n-42"]);
});

test("signRequest() refuses components it cannot cover", async () => {
  const request = new Request("https://remote.example/inbox", { method: "POST", body: "{}" });
  for (
    const components of [
      [{ value: "content-type", params: { sf: true } }],
      [{ value: "@query-param", params: {} }],
      [{ value: "x-absent", params: {} }],
      [{ value: "@status", params: {} }],
    ]
  ) {
    await assertRejects(
      () =>
        signRequest(request, rsa.privateKey, keyId, { spec: "rfc9421", rfc9421: { components } }),
      TypeError,
    );
  }
});
