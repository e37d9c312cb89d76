import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import { exportSpki } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { signJsonLd, verifyJsonLd, verifyLdSignature } from "./ld-signature.ts";
import mastodon from "./testdata/mastodon-create.json" with { type: "json" };

function loaderOf(documents: Record<string, unknown>, loaded: string[] = []): DocumentLoader {
  return (url) => {
    loaded.push(url);
    if (!(url in documents)) return Promise.reject(new Error(`No document at ${url}`));
    return Promise.resolve({ documentUrl: url, document: documents[url], contextUrl: null });
  };
}

const mastodonActor = mastodon.key.owner;
const mastodonDocuments = {
  [mastodonActor]: { id: mastodonActor, type: "Person", publicKey: mastodon.key },
};
// The fixed vectors are verified at the time they were made.
const whenMastodonSigned = Temporal.Instant.from(mastodon.activity.signature.created);
const whenSigned = Temporal.Instant.from("2026-01-02T03:04:05Z");

// Made before any test is registered: with --test-force-exit, Node.js
// ends a file once the tests it knows of have finished, so a top-level
// await between two test() calls could end it before the later ones.
const actorId = "https://remote.example/users/alice";
const keyId = new URL(`${actorId}#main-key`);
const rsa = await generateCryptoKeyPair();
const documents = {
  [actorId]: {
    id: actorId,
    type: "Person",
    publicKey: { id: keyId.href, owner: actorId, publicKeyPem: await exportSpki(rsa.publicKey) },
  },
};
const create = {
  "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
  id: `${actorId}/create/1`,
  type: "Create",
  actor: actorId,
  object: { id: `${actorId}/notes/1`, type: "Note", attributedTo: actorId, content: "Hi" },
};

test("verifyLdSignature accepts a Create signed by Mastodon", async () => {
  const result = await verifyLdSignature(mastodon.activity, {
    documentLoader: loaderOf(mastodonDocuments),
    currentTime: whenMastodonSigned,
  });
  assert(result.verified, result.verified ? "" : result.message);
  assertEquals(result.key.owner?.href, mastodonActor);
  assertEquals(
    await verifyJsonLd(mastodon.activity, {
      documentLoader: loaderOf(mastodonDocuments),
      currentTime: whenMastodonSigned,
    }),
    true,
  );
});

test("verifyLdSignature refuses the Mastodon Create once its content is changed", async () => {
  const tampered = {
    ...mastodon.activity,
    object: { ...mastodon.activity.object, content: "<p>Not what was said</p>" },
  };
  const result = await verifyLdSignature(tampered, {
    documentLoader: loaderOf(mastodonDocuments),
    currentTime: whenMastodonSigned,
  });
  assertEquals(result.verified ? null : result.reason, "invalidSignature");
});

test("signJsonLd makes a signature verifyLdSignature accepts", async () => {
  const signed = await signJsonLd(create, rsa.privateKey, keyId, {
    created: new Date("2026-01-02T03:04:05.000Z"),
  });
  assertEquals(signed.signature.created, "2026-01-02T03:04:05Z");
  assertEquals(signed.signature.creator, keyId.href);
  const received = JSON.parse(JSON.stringify(signed));
  const result = await verifyLdSignature(received, {
    documentLoader: loaderOf(documents),
    currentTime: whenSigned,
  });
  assert(result.verified, result.verified ? "" : result.message);
});

test("verifyLdSignature refuses a document whose inline context hides its real actor", async () => {
  const mallory = "https://remote.example/users/mallory";
  // Signed by Alice: the JSON says Alice is the actor, but the inline
  // context drops that property and makes Mallory the actor JSON-LD reads.
  const disguised = {
    ...create,
    "@context": [...create["@context"], {
      actor: null,
      agent: { "@id": "https://www.w3.org/ns/activitystreams#actor", "@type": "@id" },
    }],
    agent: mallory,
  };
  const signed = await signJsonLd(disguised, rsa.privateKey, keyId);
  const result = await verifyLdSignature(signed, { documentLoader: loaderOf(documents) });
  assertEquals(result.verified ? null : result.reason, "unattributed");
});

test("verifyLdSignature never fetches a context it does not know", async () => {
  const loaded: string[] = [];
  const unknownContext = {
    ...create,
    "@context": [...create["@context"], "https://contexts.example/evil.jsonld"],
  };
  const signed = {
    ...unknownContext,
    signature: {
      type: "RsaSignature2017",
      creator: keyId.href,
      created: "2026-01-02T03:04:05Z",
      signatureValue: "AAAA",
    },
  };
  const result = await verifyLdSignature(signed, {
    documentLoader: loaderOf(documents, loaded),
    currentTime: whenSigned,
  });
  assertEquals(result.verified ? null : result.reason, "unsupportedContext");
  assertEquals(loaded, []);
  await assertRejects(() => signJsonLd(unknownContext, rsa.privateKey, keyId), TypeError);
});

test("verifyLdSignature refuses malformed and other kinds of signatures before fetching", async () => {
  const loaded: string[] = [];
  const options = { documentLoader: loaderOf(documents, loaded) };
  const valid = (await signJsonLd(create, rsa.privateKey, keyId)).signature;
  const cases: [unknown, string][] = [
    [undefined, "noSignature"],
    ["a string", "malformedSignature"],
    [{ ...valid, type: "Ed25519Signature2018" }, "unsupportedSignature"],
    [{ ...valid, creator: "file:///etc/passwd" }, "malformedSignature"],
    [{ ...valid, created: 12 }, "malformedSignature"],
    [{ ...valid, signatureValue: "not base64!" }, "malformedSignature"],
    [{ ...valid, signatureValue: "A".repeat(4000) }, "malformedSignature"],
  ];
  for (const [signature, reason] of cases) {
    const result = await verifyLdSignature({ ...create, signature }, options);
    assertEquals(result.verified ? null : result.reason, reason, JSON.stringify(signature));
  }
  assertEquals(loaded, []);
});

test("verifyLdSignature refuses a document whose JSON id is not the @id that was signed", async () => {
  const signed = await signJsonLd(create, rsa.privateKey, keyId);
  const options = { documentLoader: loaderOf(documents) };
  assert((await verifyLdSignature(signed, options)).verified);
  const { id, ...withoutId } = signed;
  const forged: Record<string, unknown>[] = [
    // "@id" for "id": the same RDF, so the same signature, but no JSON id
    // to deduplicate by.
    { ...withoutId, "@id": id },
    // An inline context undefining "id" drops it from the signed RDF: the
    // JSON id is anything the forwarder likes.
    {
      ...withoutId,
      "@context": [...create["@context"], { id: null }],
      "@id": id,
      id: `${create.object.id}#delete`,
    },
  ];
  for (const document of forged) {
    const result = await verifyLdSignature(document, options);
    assertEquals(result.verified ? null : result.reason, "idMismatch", JSON.stringify(document));
  }
});

test("verifyLdSignature refuses a document of more than 2,000 values before fetching its key", async () => {
  const loaded: string[] = [];
  // The values are added after signing: the refusal comes before the
  // signature is checked, and canonicalizing 2,000 values to sign them may
  // itself pass the 2 s budget on a loaded machine.
  const signed = {
    ...await signJsonLd(create, rsa.privateKey, keyId),
    to: Array.from({ length: 2_000 }, (_, i) => `https://remote.example/users/u${i}`),
  };
  const result = await verifyLdSignature(signed, { documentLoader: loaderOf(documents, loaded) });
  assertEquals(result.verified ? null : result.reason, "tooComplex");
  assertEquals(loaded, []);
});
