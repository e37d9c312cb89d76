// Signatures on objects across the two implementations: an Object Integrity
// Proof or a Linked Data signature Fedify 2.3 makes verifies with Fedwork,
// and one Fedwork makes verifies with Fedify.  Keys are served by an in-memory document loader,
// contexts by Fedify's preloaded ones.
import { assert, assertEquals, test } from "@fedify/fixture";
import {
  signJsonLd as fedifySignJsonLd,
  signObject as fedifySignObject,
  verifyJsonLd as fedifyVerifyJsonLd,
  verifyObject as fedifyVerifyObject,
} from "@fedify/fedify";
import { Activity, Create, CryptographicKey, Multikey, Note, Person } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { getDocumentLoader } from "@fedify/vocab-runtime";
import {
  generateCryptoKeyPair,
  signJsonLd,
  signObject,
  verifyLdSignature,
  verifyObject,
} from "@fedwork/core";

const rsa = await generateCryptoKeyPair();

const actorId = new URL("https://fedify.example/users/alice");
const multikeyId = new URL("#multikey-1", actorId);
const keys = await generateCryptoKeyPair("Ed25519");
const actor = await new Person({
  id: actorId,
  preferredUsername: "alice",
  inbox: new URL("/users/alice/inbox", actorId),
  publicKey: new CryptographicKey({
    id: new URL("#main-key", actorId),
    owner: actorId,
    publicKey: rsa.publicKey,
  }),
  assertionMethods: [
    new Multikey({ id: multikeyId, controller: actorId, publicKey: keys.publicKey }),
  ],
}).toJsonLd();

const contextLoader = getDocumentLoader();
const documentLoader: DocumentLoader = (url, options) => {
  const withoutFragment = new URL(url);
  withoutFragment.hash = "";
  if (withoutFragment.href === actorId.href) {
    return Promise.resolve({
      documentUrl: withoutFragment.href,
      document: actor,
      contextUrl: null,
    });
  }
  return contextLoader(url, options);
};

const create = new Create({
  id: new URL("/activities/1", actorId),
  actor: actorId,
  object: new Note({
    id: new URL("/notes/1", actorId),
    attribution: actorId,
    content: "<p>Hello, proofs</p>",
  }),
});

test("a proof made by Fedify 2.3's signObject() verifies with Fedwork's verifyObject()", async () => {
  const signed = await fedifySignObject(create, keys.privateKey, multikeyId, { contextLoader });
  // As it arrives at an inbox: serialized, then parsed.
  const received = JSON.parse(JSON.stringify(await signed.toJsonLd({ contextLoader })));
  assertEquals(received.proof?.cryptosuite, "eddsa-jcs-2022");
  const result = await verifyObject(received, { documentLoader });
  assert(result.verified, result.verified ? "" : result.message);
  assertEquals(result.keys.map((key) => key.owner?.href), [actorId.href]);
  received.object.content = "<p>Hello, forgery</p>";
  const tampered = await verifyObject(received, { documentLoader });
  assertEquals(tampered.verified ? null : tampered.reason, "invalidProof");
});

test("a proof made by Fedwork's signObject() verifies with Fedify 2.3's verifyObject()", async () => {
  const json = await create.toJsonLd({ contextLoader }) as Record<string, unknown>;
  const signed = await signObject(json, { privateKey: keys.privateKey, keyId: multikeyId });
  const received = JSON.parse(JSON.stringify(signed));
  const verified = await fedifyVerifyObject(Activity, received, { documentLoader, contextLoader });
  assert(verified != null, "Fedify refused the proof");
  assertEquals(verified.id?.href, create.id?.href);
  received.object.content = "<p>Hello, forgery</p>";
  assertEquals(
    await fedifyVerifyObject(Activity, received, { documentLoader, contextLoader }),
    null,
  );
});

test("a Fedify 2.3 proof under its Linked Data signature verifies with Fedwork's verifyObject()", async () => {
  // What Fedify's sendActivity() sends: the proof first, then an
  // RsaSignature2017 over the proved activity.
  const proved = await fedifySignObject(create, keys.privateKey, multikeyId, { contextLoader });
  const signed = await fedifySignJsonLd(
    await proved.toJsonLd({ contextLoader }),
    rsa.privateKey,
    new URL("#main-key", actorId),
    { contextLoader },
  );
  const received = JSON.parse(JSON.stringify(signed));
  assertEquals(received.signature?.type, "RsaSignature2017");
  const result = await verifyObject(received, { documentLoader });
  assert(result.verified, result.verified ? "" : result.message);
});

test("a Linked Data signature made by Fedify 2.3's signJsonLd() verifies with Fedwork", async () => {
  const signed = await fedifySignJsonLd(
    await create.toJsonLd({ contextLoader }),
    rsa.privateKey,
    new URL("#main-key", actorId),
    { contextLoader },
  );
  const received = JSON.parse(JSON.stringify(signed));
  const result = await verifyLdSignature(received, { documentLoader });
  assert(result.verified, result.verified ? "" : result.message);
  assertEquals(result.key.owner?.href, actorId.href);
});

test("a Linked Data signature made by Fedwork's signJsonLd() verifies with Fedify 2.3", async () => {
  const json = await create.toJsonLd({ contextLoader }) as Record<string, unknown>;
  const signed = await signJsonLd(json, rsa.privateKey, new URL("#main-key", actorId));
  const received = JSON.parse(JSON.stringify(signed));
  assertEquals(await fedifyVerifyJsonLd(received, { documentLoader, contextLoader }), true);
  received.object.content = "<p>Hello, forgery</p>";
  assertEquals(await fedifyVerifyJsonLd(received, { documentLoader, contextLoader }), false);
});
