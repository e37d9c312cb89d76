// Activities forwarded by a third server: signed over HTTP by the forwarder,
// trusted only through their actor's Object Integrity Proof.
import { assert, assertEquals, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import { exportMultibaseKey, exportSpki } from "@fedify/vocab-runtime";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { generateCryptoKeyPair } from "../actors/keys.ts";
import { signJsonLd } from "../proofs/ld-signature.ts";
import { signObject } from "../proofs/proof.ts";
import { signRequest } from "../signatures/sign.ts";
import { verifyInboxRequest } from "./verify.ts";

const alice = "https://origin.example/users/alice";
const aliceProofKeyId = new URL(`${alice}#multikey-1`);
const carol = "https://forwarder.example/users/carol";
const aliceEd25519 = await generateCryptoKeyPair("Ed25519");
const aliceRsa = await generateCryptoKeyPair();
const carolRsa = await generateCryptoKeyPair();
const carolEd25519 = await generateCryptoKeyPair("Ed25519");
const strayKeyId = new URL("https://stray.example/keys/1");
const documents: Record<string, unknown> = {
  [alice]: {
    id: alice,
    type: "Person",
    publicKey: {
      id: `${alice}#main-key`,
      owner: alice,
      publicKeyPem: await exportSpki(aliceRsa.publicKey),
    },
    assertionMethod: [{
      id: aliceProofKeyId.href,
      type: "Multikey",
      controller: alice,
      publicKeyMultibase: await exportMultibaseKey(aliceEd25519.publicKey),
    }],
  },
  [carol]: {
    id: carol,
    type: "Person",
    publicKey: {
      id: `${carol}#main-key`,
      owner: carol,
      publicKeyPem: await exportSpki(carolRsa.publicKey),
    },
  },
  // A key on another origin claiming Alice as its controller; Alice does
  // not list it.
  [strayKeyId.href]: {
    id: strayKeyId.href,
    type: "Multikey",
    controller: alice,
    publicKeyMultibase: await exportMultibaseKey(carolEd25519.publicKey),
  },
};
const reply = {
  "@context": [
    "https://www.w3.org/ns/activitystreams",
    "https://w3id.org/security/data-integrity/v1",
  ],
  id: `${alice}/statuses/1/activity`,
  type: "Create",
  actor: alice,
  object: {
    id: `${alice}/statuses/1`,
    type: "Note",
    attributedTo: alice,
    inReplyTo: "https://example.com/users/bob/posts/1",
    content: "A reply",
  },
};

function loader(loaded: string[] = []): DocumentLoader {
  return (url) => {
    loaded.push(url);
    return url in documents
      ? Promise.resolve({ documentUrl: url, document: documents[url], contextUrl: null })
      : Promise.reject(new Error(`404 ${url}`));
  };
}

/** The activity as Carol's server forwards it: HTTP-signed by Carol. */
function forwarded(activity: unknown): Promise<Request> {
  return signRequest(
    new Request("https://example.com/inbox", {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: JSON.stringify(activity),
    }),
    carolRsa.privateKey,
    new URL(`${carol}#main-key`),
  );
}

test("verifyInboxRequest() accepts a forwarded activity whose actor's proof verifies", async () => {
  const signed = await signObject(reply, {
    privateKey: aliceEd25519.privateKey,
    keyId: aliceProofKeyId,
  });
  const result = await verifyInboxRequest(await forwarded(signed), {
    kv: new MemoryKvStore(),
    documentLoader: loader(),
  });
  assert(result.ok, JSON.stringify(result));
  assertEquals(result.signer.href, alice);
  assertEquals(result.key.owner?.href, carol);
  assertEquals(result.proofKey?.keyId.href, aliceProofKeyId.href);
  assertEquals(result.activity, JSON.parse(JSON.stringify(signed)));
});

test("verifyInboxRequest() answers 401 for a forwarded activity without a proof, or a forged one", async () => {
  const options = { kv: new MemoryKvStore(), documentLoader: loader() };
  const signed = await signObject(reply, {
    privateKey: aliceEd25519.privateKey,
    keyId: aliceProofKeyId,
  });
  const cases: [string, unknown][] = [
    ["no proof", reply],
    // Carol's own key, claiming to be Alice's.
    [
      "a proof made with another key",
      await signObject(reply, { privateKey: carolEd25519.privateKey, keyId: aliceProofKeyId }),
    ],
    ["a proof of another content", {
      ...signed,
      object: { ...reply.object, content: "Something Alice never said" },
    }],
    // Carol's key is on Carol's server: a valid proof, but not by the actor.
    ["a proof by the forwarder", {
      ...reply,
      proof: (await signObject(reply, {
        privateKey: carolEd25519.privateKey,
        keyId: new URL(`${carol}#main-key`),
      })).proof,
    }],
  ];
  for (const [name, activity] of cases) {
    const result = await verifyInboxRequest(await forwarded(activity), options);
    assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "actorMismatch"], name);
  }
});

test("verifyInboxRequest() refuses a proof whose key is on another origin and not listed by the actor", async () => {
  const loaded: string[] = [];
  const signed = await signObject(reply, {
    privateKey: carolEd25519.privateKey,
    keyId: strayKeyId,
  });
  const result = await verifyInboxRequest(await forwarded(signed), {
    kv: new MemoryKvStore(),
    documentLoader: loader(loaded),
  });
  assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "actorMismatch"]);
  // The claimed controller was asked, and did not list the key.
  assert(loaded.includes(alice), JSON.stringify(loaded));
});

test("verifyInboxRequest() checks two proofs at most, fetching nothing for more", async () => {
  const { proof } = await signObject(reply, {
    privateKey: aliceEd25519.privateKey,
    keyId: aliceProofKeyId,
  });
  const loaded: string[] = [];
  const result = await verifyInboxRequest(
    await forwarded({ ...reply, proof: [proof, proof, proof] }),
    { kv: new MemoryKvStore(), documentLoader: loader(loaded) },
  );
  assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "actorMismatch"]);
  // Carol's key for the HTTP signature, nothing for the proofs.
  assertEquals(loaded, [carol]);
});

test("verifyInboxRequest() accepts a forwarded activity signed by its actor with a Linked Data signature", async () => {
  const options = { kv: new MemoryKvStore(), documentLoader: loader() };
  // What Mastodon forwards: an RsaSignature2017 by the actor, no proof.
  const signed = await signJsonLd(reply, aliceRsa.privateKey, new URL(`${alice}#main-key`));
  const result = await verifyInboxRequest(await forwarded(signed), options);
  assert(result.ok, JSON.stringify(result));
  assertEquals(result.signer.href, alice);
  assertEquals(result.proofKey?.keyId.href, `${alice}#main-key`);
  const tampered = { ...signed, object: { ...reply.object, content: "Something else" } };
  const refused = await verifyInboxRequest(await forwarded(tampered), options);
  assertEquals(refused.ok ? "ok" : [refused.status, refused.reason], [401, "actorMismatch"]);
  // Signed by Carol, the forwarder, claiming Alice as the actor.
  const byCarol = await signJsonLd(reply, carolRsa.privateKey, new URL(`${carol}#main-key`));
  const impostor = await verifyInboxRequest(await forwarded(byCarol), options);
  assertEquals(impostor.ok ? "ok" : [impostor.status, impostor.reason], [401, "actorMismatch"]);
});

test("verifyInboxRequest() refuses a forwarded activity whose proof or Linked Data signature is too old or in the future", async () => {
  const ago = (hours: number) => new Date(Math.floor(Date.now() / 3_600_000 - hours) * 3_600_000);
  const proved = (created: Date) =>
    signObject(reply, { privateKey: aliceEd25519.privateKey, keyId: aliceProofKeyId, created });
  const ldSigned = (created: Date) =>
    signJsonLd(reply, aliceRsa.privateKey, new URL(`${alice}#main-key`), { created });
  const in2019 = new Date("2019-06-01T00:00:00Z");
  const cases: [string, unknown, RegExp][] = [
    ["a proof made in 2019", await proved(in2019), /proof is too old/],
    ["a Linked Data signature made in 2019", await ldSigned(in2019), /signature is too old/],
    ["a proof made 8 days ago", await proved(ago(8 * 24)), /too old/],
    ["a proof made 2 hours from now", await proved(ago(-2)), /in the future/],
    ["a signature made 2 hours from now", await ldSigned(ago(-2)), /in the future/],
  ];
  for (const [name, activity, message] of cases) {
    const loaded: string[] = [];
    const result = await verifyInboxRequest(await forwarded(activity), {
      kv: new MemoryKvStore(),
      documentLoader: loader(loaded),
    });
    assertEquals(result.ok ? "ok" : [result.status, result.reason], [401, "actorMismatch"], name);
    assert(!result.ok && message.test(result.message), `${name}: ${JSON.stringify(result)}`);
    // Refused on its date, before the actor's key is fetched.
    assertEquals(loaded, [carol], name);
  }
  // Six days old is within the default week; proofMaxAge: false accepts 2019.
  const recent = await verifyInboxRequest(await forwarded(await proved(ago(6 * 24))), {
    kv: new MemoryKvStore(),
    documentLoader: loader(),
  });
  assert(recent.ok, JSON.stringify(recent));
  for (const activity of [await proved(in2019), await ldSigned(in2019)]) {
    const unbounded = await verifyInboxRequest(await forwarded(activity), {
      kv: new MemoryKvStore(),
      documentLoader: loader(),
      proofMaxAge: false,
    });
    assert(unbounded.ok, JSON.stringify(unbounded));
  }
});
