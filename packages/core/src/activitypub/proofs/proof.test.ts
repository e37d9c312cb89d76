import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { Activity, Create, type DocumentLoader } from "@fedify/vocab";
import { decodeMultibase, exportMultibaseKey } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { canonicalizeJson } from "./jcs.ts";
import {
  createProof,
  MAX_PROOFS_PER_OBJECT,
  signObject,
  verifyObject,
  verifyProof,
} from "./proof.ts";

function loaderOf(documents: Record<string, unknown>, loaded: string[] = []): DocumentLoader {
  return (url) => {
    loaded.push(url);
    if (!(url in documents)) return Promise.reject(new Error(`No document at ${url}`));
    return Promise.resolve({ documentUrl: url, document: documents[url], contextUrl: null });
  };
}

// FEP-8b32's test vector (fep-8b32.feature, "Signing document" and
// "Verifying a signature"): its secret key, document, time and proof value.
const fepSecretKey = "z3u2en7t5LR2WtQH5PfFqMqwVHBeXouLzo6haApm8XHqvjxq";
const fepPublicKey = "z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2";
const fepKeyId = "https://server.example/users/alice#ed25519-key";
const fepContext = [
  "https://www.w3.org/ns/activitystreams",
  "https://w3id.org/security/data-integrity/v2",
];
const fepDocument = {
  "@context": fepContext,
  id: "https://server.example/activities/1",
  type: "Create",
  actor: "https://server.example/users/alice",
  object: {
    id: "https://server.example/objects/1",
    type: "Note",
    attributedTo: "https://server.example/users/alice",
    content: "Hello world",
    location: { type: "Place", longitude: -71.184902, latitude: 25.273962 },
  },
};
const fepProofValue =
  "z42ffGu6AUKPCFcFPiabmUvnGLPJzC7e4DGWC52NUasSSH37UMa9c58tdgVszUcZfytxa4fQ5TYHaJENCxUDe9SdL";
const fepActor = {
  "@context": [...fepContext, "https://w3id.org/security/multikey/v1"],
  type: "Person",
  id: "https://server.example/users/alice",
  inbox: "https://server.example/users/alice/inbox",
  assertionMethod: [{
    id: fepKeyId,
    type: "Multikey",
    controller: "https://server.example/users/alice",
    publicKeyMultibase: fepPublicKey,
  }],
};

/** Imports a multibase Ed25519 secret key (multicodec 0x1300) as PKCS #8. */
async function importFepSecretKey(multibase: string): Promise<CryptoKey> {
  const bytes = decodeMultibase(multibase);
  assertEquals([bytes[0], bytes[1], bytes.length], [0x80, 0x26, 34]);
  const pkcs8 = new Uint8Array([
    0x30,
    0x2e,
    0x02,
    0x01,
    0x00,
    0x30,
    0x05,
    0x06,
    0x03,
    0x2b,
    0x65,
    0x70,
    0x04,
    0x22,
    0x04,
    0x20,
    ...bytes.slice(2),
  ]);
  return await crypto.subtle.importKey("pkcs8", pkcs8, "Ed25519", false, ["sign"]);
}

// Made before any test is registered: with --test-force-exit, Node.js
// ends a file once the tests it knows of have finished, so a top-level
// await between two test() calls could end it before the later ones.
const actorId = "https://remote.example/users/alice";
const multikeyId = new URL(`${actorId}#multikey-1`);
const ed25519 = await generateCryptoKeyPair("Ed25519");
const actor = {
  id: actorId,
  type: "Person",
  assertionMethod: [{
    id: multikeyId.href,
    type: "Multikey",
    controller: actorId,
    publicKeyMultibase: await exportMultibaseKey(ed25519.publicKey),
  }],
};
const note = {
  "@context": [
    "https://www.w3.org/ns/activitystreams",
    "https://w3id.org/security/data-integrity/v1",
  ],
  id: `${actorId}/create/1`,
  type: "Create",
  actor: actorId,
  object: { id: `${actorId}/notes/1`, type: "Note", attributedTo: actorId, content: "Hi" },
};

test("canonicalizeJson writes RFC 8785's canonical form", () => {
  assertEquals(
    canonicalizeJson({ b: [1e21, 0.1, -0, 1e-7, "\u20ac\n"], a: { z: null, "\u00e9": true } }),
    '{"a":{"z":null,"\u00e9":true},"b":[1e+21,0.1,0,1e-7,"\u20ac\\n"]}',
  );
  // Sorted by UTF-16 code units: U+1F600 (a surrogate pair) before U+FB33.
  assertEquals(canonicalizeJson({ "\ufb33": 1, "\u{1f600}": 2 }), '{"\u{1f600}":2,"\ufb33":1}');
});

test("createProof reproduces the FEP-8b32 test vector's proof value", async () => {
  const privateKey = await importFepSecretKey(fepSecretKey);
  const proof = await createProof(fepDocument, {
    privateKey,
    keyId: new URL(fepKeyId),
    created: new Date("2023-02-24T23:36:38Z"),
  });
  assertEquals(proof, {
    type: "DataIntegrityProof",
    cryptosuite: "eddsa-jcs-2022",
    verificationMethod: fepKeyId,
    proofPurpose: "assertionMethod",
    created: "2023-02-24T23:36:38Z",
    proofValue: fepProofValue,
  });
});

test("verifyObject accepts the FEP-8b32 test vector's signed document", async () => {
  const signed = {
    ...fepDocument,
    proof: {
      "@context": fepContext,
      type: "DataIntegrityProof",
      cryptosuite: "eddsa-jcs-2022",
      verificationMethod: fepKeyId,
      proofPurpose: "assertionMethod",
      proofValue: fepProofValue,
      created: "2023-02-24T23:36:38Z",
    },
  };
  // The test vector is verified at the time it was made.
  const currentTime = Temporal.Instant.from("2023-02-24T23:40:00Z");
  const result = await verifyObject(signed, {
    documentLoader: loaderOf({ "https://server.example/users/alice": fepActor }),
    currentTime,
  });
  assert(result.verified, result.verified ? "" : result.message);
  assertEquals(result.keys.map((key) => key.owner?.href), ["https://server.example/users/alice"]);
  // One character of the content changed: the proof no longer holds.
  const tampered = { ...signed, object: { ...signed.object, content: "Hello world!" } };
  const refused = await verifyObject(tampered, {
    documentLoader: loaderOf({ "https://server.example/users/alice": fepActor }),
    currentTime,
  });
  assertEquals(refused.verified ? null : refused.reason, "invalidProof");
});

test("signObject adds a proof that verifyObject accepts, after a JSON round trip", async () => {
  const signed = await signObject(note, { privateKey: ed25519.privateKey, keyId: multikeyId });
  assertEquals("proof" in note, false);
  assert(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test((signed.proof as { created: string }).created));
  const received = JSON.parse(JSON.stringify(signed, null, 2));
  const result = await verifyObject(received, { documentLoader: loaderOf({ [actorId]: actor }) });
  assert(result.verified);
  assertEquals(result.keys[0]?.keyId.href, multikeyId.href);
});

test("verifyObject refuses a proof by a key that is not the actor's", async () => {
  const mallory = "https://remote.example/users/mallory";
  const other = await generateCryptoKeyPair("Ed25519");
  const malloryKeyId = new URL(`${mallory}#multikey-1`);
  const documents = {
    [actorId]: actor,
    [mallory]: {
      id: mallory,
      assertionMethod: [{
        id: malloryKeyId.href,
        type: "Multikey",
        controller: mallory,
        publicKeyMultibase: await exportMultibaseKey(other.publicKey),
      }],
    },
  };
  const signed = await signObject(note, { privateKey: other.privateKey, keyId: malloryKeyId });
  const result = await verifyObject(signed, { documentLoader: loaderOf(documents) });
  assertEquals(result.verified ? null : result.reason, "unattributed");
  // A proof naming the actor's key, made with another key, is invalid.
  const forged = await signObject(note, { privateKey: other.privateKey, keyId: multikeyId });
  const forgedResult = await verifyObject(forged, { documentLoader: loaderOf(documents) });
  assertEquals(forgedResult.verified ? null : forgedResult.reason, "invalidProof");
});

test("verifyObject refuses more proofs than it verifies without fetching a key", async () => {
  const proof = (await signObject(note, { privateKey: ed25519.privateKey, keyId: multikeyId }))
    .proof;
  const loaded: string[] = [];
  const result = await verifyObject(
    { ...note, proof: Array.from({ length: MAX_PROOFS_PER_OBJECT + 1 }, () => proof) },
    { documentLoader: loaderOf({ [actorId]: actor }, loaded) },
  );
  assertEquals(result.verified ? null : result.reason, "tooManyProofs");
  assertEquals(loaded, []);
  const none = await verifyObject(note, { documentLoader: loaderOf({}) });
  assertEquals(none.verified ? null : none.reason, "noProof");
});

test("verifyProof refuses malformed proofs and other cryptosuites before fetching", async () => {
  const loaded: string[] = [];
  const options = { documentLoader: loaderOf({ [actorId]: actor }, loaded) };
  const valid = await createProof(note, { privateKey: ed25519.privateKey, keyId: multikeyId });
  const cases: [unknown, string][] = [
    ["a string", "malformedProof"],
    [{ ...valid, cryptosuite: "eddsa-rdfc-2022" }, "unsupportedCryptosuite"],
    [{ ...valid, type: "Ed25519Signature2020" }, "unsupportedCryptosuite"],
    [{ ...valid, verificationMethod: "file:///etc/passwd" }, "malformedProof"],
    [{ ...valid, proofPurpose: "authentication" }, "malformedProof"],
    [{ ...valid, proofValue: "u" + valid.proofValue.slice(1) }, "malformedProof"],
    [{ ...valid, proofValue: "z" + "1".repeat(500) }, "malformedProof"],
    [{ ...valid, proofValue: "z0OIl" }, "malformedProof"],
  ];
  for (const [proof, reason] of cases) {
    const result = await verifyProof(note, proof, options);
    assertEquals(result.verified ? null : result.reason, reason);
  }
  assertEquals(loaded, []);
  const result = await verifyProof(note, valid, options);
  assertEquals(result.verified, true);
});

test("verifyProof refetches a cached key once when it fails", async () => {
  const rotated = await generateCryptoKeyPair("Ed25519");
  const proof = await createProof(note, { privateKey: rotated.privateKey, keyId: multikeyId });
  const loaded: string[] = [];
  const cached = {
    keyId: multikeyId,
    publicKey: ed25519.publicKey,
    owner: new URL(actorId),
    cached: true,
  };
  const result = await verifyProof(note, proof, {
    fetchKey: (_keyId, options) => {
      loaded.push(options?.refresh ? "refresh" : "cache");
      return Promise.resolve(
        options?.refresh ? { ...cached, publicKey: rotated.publicKey, cached: false } : cached,
      );
    },
  });
  assertEquals(result.verified, true);
  assertEquals(loaded, ["cache", "refresh"]);
});

test("createProof refuses a key that is not an Ed25519 private key", async () => {
  const rsa = await generateCryptoKeyPair();
  await assertRejects(
    () => createProof(note, { privateKey: rsa.privateKey, keyId: multikeyId }),
    TypeError,
    "Ed25519",
  );
  await assertRejects(
    () => createProof(note, { privateKey: ed25519.publicKey, keyId: multikeyId }),
    TypeError,
  );
});

test("verifyObject accepts a proof made before a Linked Data signature was added", async () => {
  const proved = await signObject(note, { privateKey: ed25519.privateKey, keyId: multikeyId });
  // As Fedify sends it: the RsaSignature2017 covers the proved activity.
  const signed = {
    ...proved,
    signature: {
      type: "RsaSignature2017",
      creator: `${actorId}#main-key`,
      created: "2026-01-01T00:00:00Z",
      signatureValue: "AAAA",
    },
  };
  const result = await verifyObject(signed, { documentLoader: loaderOf({ [actorId]: actor }) });
  assert(result.verified, result.verified ? "" : result.message);
});

test("the object functions refuse Fedify's vocabulary-object call shapes loudly", async () => {
  const create = new Create({ id: new URL(note.id), actor: new URL(actorId) });
  const options = { documentLoader: loaderOf({ [actorId]: actor }) };
  // Fedify: verifyObject(Activity, json, options) and
  // signObject(object, privateKey, keyId).
  // deno-lint-ignore no-explicit-any
  const untyped = { verifyObject, signObject } as any;
  await assertRejects(() => untyped.verifyObject(Activity, note, options), TypeError, "toJsonLd");
  await assertRejects(
    () => untyped.signObject(create, ed25519.privateKey, multikeyId),
    TypeError,
    "toJsonLd",
  );
  await assertRejects(() => untyped.verifyObject(create, options), TypeError, "toJsonLd");
});

test("verifyProof refuses a proof older than maxAge or made in the future, before fetching", async () => {
  const loaded: string[] = [];
  const documentLoader = loaderOf({ [actorId]: actor }, loaded);
  const made = Temporal.Instant.from("2026-03-01T12:00:00Z");
  const proof = await createProof(note, {
    privateKey: ed25519.privateKey,
    keyId: multikeyId,
    created: made,
  });
  const at = (duration: Temporal.DurationLike) => made.add(duration);
  const refused: [string, Record<string, unknown>][] = [
    ["8 days later, by default", { currentTime: at({ hours: 8 * 24 }) }],
    ["2 hours later, with maxAge 1 hour", { currentTime: at({ hours: 2 }), maxAge: { hours: 1 } }],
    ["2 hours earlier, by default", { currentTime: at({ hours: -2 }) }],
    ["1 minute earlier, with timeWindow 30s", {
      currentTime: at({ minutes: -1 }),
      timeWindow: { seconds: 30 },
    }],
  ];
  for (const [name, options] of refused) {
    const result = await verifyProof(note, proof, { documentLoader, ...options });
    assertEquals(result.verified ? null : result.reason, "outsideTimeWindow", name);
  }
  assertEquals(loaded, []);
  const accepted: [string, Record<string, unknown>][] = [
    ["6 days later, by default", { currentTime: at({ hours: 6 * 24 }) }],
    ["30 minutes earlier, by default", { currentTime: at({ minutes: -30 }) }],
    ["years later, with maxAge false", { currentTime: at({ hours: 5 * 8760 }), maxAge: false }],
    ["a day earlier, with timeWindow false", {
      currentTime: at({ hours: -24 }),
      timeWindow: false,
    }],
  ];
  for (const [name, options] of accepted) {
    const result = await verifyProof(note, proof, { documentLoader, ...options });
    assert(result.verified, `${name}: ${JSON.stringify(result)}`);
  }
});

test("verifyProof refuses a proof whose created is absent or not an instant while age is checked", async () => {
  const loaded: string[] = [];
  const documentLoader = loaderOf({ [actorId]: actor }, loaded);
  const { created: _, ...undated } = await createProof(note, {
    privateKey: ed25519.privateKey,
    keyId: multikeyId,
  });
  for (const created of [undefined, "yesterday", "2026-03-01T12:00:00", "9".repeat(100)]) {
    const proof = created === undefined ? undated : { ...undated, created };
    const result = await verifyProof(note, proof, { documentLoader });
    assertEquals(result.verified ? null : result.reason, "malformedProof", String(created));
  }
  assertEquals(loaded, []);
  // With both checks off, no created is needed (the signature decides).
  const result = await verifyProof(note, undated, {
    documentLoader,
    maxAge: false,
    timeWindow: false,
  });
  assertEquals(result.verified ? null : result.reason, "invalidProof");
});
