import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { CryptographicKey, Person, Tombstone } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { signRequest } from "../activitypub/signatures/sign.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { UnknownOptionError } from "../options/known-options.ts";
import { createFederation } from "./federation.ts";
import { testKeyPair } from "./testdata/test-support.ts";

function federationWithGoneActor() {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "gone"
        ? new Tombstone({ id: ctx.getActorUri(identifier) })
        : new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }),
  );
  return federation;
}

test("getActor() suppresses a Tombstone unless tombstone is passthrough", async () => {
  const federation = federationWithGoneActor();
  const ctx = federation.createContext(new Request("https://example.com/"), undefined);
  assertEquals(await ctx.getActor("gone"), null);
  assertEquals(await ctx.getActor("gone", { tombstone: "suppress" }), null);
  const passed = await ctx.getActor("gone", { tombstone: "passthrough" });
  assert(passed instanceof Tombstone);
  assert((await ctx.getActor("alice", { tombstone: "passthrough" })) instanceof Person);
  await assertRejects(
    () => ctx.getActor("gone", { tombstone: "keep" as "passthrough" }),
    TypeError,
    "tombstone",
  );
  await assertRejects(
    () => ctx.getActor("gone", { tombstones: "passthrough" } as never),
    UnknownOptionError,
  );
});

test("getSignedKey() loads the key with the documentLoader it is given", async () => {
  const { publicKey, privateKey } = await testKeyPair();
  const actorId = new URL("https://sender.example/users/alice");
  const keyId = new URL("https://sender.example/users/alice#main-key");
  const actor = new Person({
    id: actorId,
    publicKey: new CryptographicKey({ id: keyId, owner: actorId, publicKey }),
  });
  const document = await actor.toJsonLd();
  const loaded: string[] = [];
  const documentLoader: DocumentLoader = (url) => {
    loaded.push(url);
    if (new URL(url).href.replace(/#.*$/, "") !== actorId.href) {
      return Promise.reject(new Error(`not found: ${url}`));
    }
    return Promise.resolve({ contextUrl: null, document, documentUrl: actorId.href });
  };
  const federation = federationWithGoneActor();
  const request = await signRequest(
    new Request("https://example.com/users/bob", {
      headers: { Accept: "application/activity+json" },
    }),
    privateKey,
    keyId,
  );
  const ctx = federation.createContext(request, undefined);
  const key = await ctx.getSignedKey({ documentLoader });
  assertEquals(key?.id?.href, keyId.href);
  assertEquals(key?.ownerId?.href, actorId.href);
  assert(loaded.length > 0, "the given loader fetched the key");
  await assertRejects(
    () => federation.createContext(request, undefined).getSignedKey({ loader: 1 } as never),
    UnknownOptionError,
  );
});
