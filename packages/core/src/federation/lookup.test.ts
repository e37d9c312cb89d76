import { assert, assertEquals, test, withLogs } from "@fedify/fixture";
import { Note, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation, type Federation } from "./federation.ts";
import { serveFederation, testKeyPair } from "./testdata/test-support.ts";

/**
 * A federation whose actors answer only requests signed by an actor named
 * `allowed` (authorized fetch), and whose notes anyone may read.
 */
function createServer(allowed?: () => string): {
  federation: Federation<void>;
  signers: (string | null)[];
} {
  const signers: (string | null)[] = [];
  const federation = createFederation<void>({ kv: new MemoryKvStore(), allowPrivateAddress: true });
  const setters = federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier === "nobody") return null;
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => [await testKeyPair()]);
  if (allowed != null) {
    setters.authorize(async (ctx) => {
      const owner = await ctx.getSignedKeyOwner();
      signers.push(owner?.id?.href ?? null);
      return owner?.id?.href === allowed();
    });
  }
  federation.setObjectDispatcher(
    Note,
    "/notes/{id}",
    (ctx, values) => new Note({ id: ctx.getObjectUri(Note, values), content: `note ${values.id}` }),
  );
  return { federation, signers };
}

test("lookupObject() resolves handles through WebFinger and fetches URIs", async () => {
  const remote = createServer();
  await using server = await serveFederation(remote.federation, undefined);
  const local = createServer();
  const ctx = local.federation.createContext(new URL("https://local.example/"), undefined);
  const host = server.url.host;
  for (const handle of [`@bob@${host}`, `bob@${host}`, `acct:bob@${host}`]) {
    const bob = await ctx.lookupObject(handle);
    assert(bob instanceof Person, handle);
    assertEquals(bob.id?.href, new URL("/users/bob", server.url).href);
  }
  const note = await ctx.lookupObject(new URL("/notes/7", server.url));
  assert(note instanceof Note);
  assertEquals(note.content?.toString(), "note 7");
  assertEquals(await ctx.lookupObject(`@nobody@${host}`), null);
  assertEquals(await ctx.lookupObject(new URL("/elsewhere", server.url)), null);
});

test("getDocumentLoader() signs GETs as the actor, so authorized fetch lets them through", async () => {
  const local = createServer();
  await using localServer = await serveFederation(local.federation, undefined);
  const alice = new URL("/users/alice", localServer.url).href;
  const remote = createServer(() => alice);
  await using remoteServer = await serveFederation(remote.federation, undefined);
  const ctx = local.federation.createContext(localServer.url, undefined);
  const handle = `@bob@${remoteServer.url.host}`;
  assertEquals(await ctx.lookupObject(handle), null, "an unsigned GET is refused");
  const documentLoader = await ctx.getDocumentLoader({ identifier: "alice" });
  const bob = await ctx.lookupObject(handle, { documentLoader });
  assert(bob instanceof Person, "a signed GET is let through");
  assertEquals(remote.signers, [null, alice]);
});

test("lookupObject() logs why it returns null, at the debug level", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await withLogs(async (records) => {
    assertEquals(await ctx.lookupObject(new URL("http://127.0.0.1:9/notes/1")), null);
    const lookups = records.filter((record) =>
      record.category.join(".") === "fedwork.federation.lookup"
    );
    assertEquals(lookups.map((record) => record.level), ["debug"]);
    assertEquals(String(lookups[0].properties.reason).startsWith("PrivateAddressError"), true);
  });
});
