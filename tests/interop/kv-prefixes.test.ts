// The kvPrefixes option moves the federation's records in the KvStore, as
// Fedify's does, while a Fedwork server and a real Fedify 2.3.6 server
// follow each other.
import { assertEquals, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { type KvKey, MemoryKvStore } from "@fedwork/core";
import { startFedifyApp, startFedworkApp } from "./apps.ts";
import { until, within } from "./support.ts";

async function keysUnder(kv: MemoryKvStore, prefix: KvKey): Promise<KvKey[]> {
  const keys: KvKey[] = [];
  for await (const entry of kv.list(prefix)) keys.push(entry.key);
  return keys;
}

test("kvPrefixes keeps idempotence records, public keys and schemes under the prefixes given", async () => {
  const kv = new MemoryKvStore();
  await using fedwork = await startFedworkApp({
    kv,
    kvPrefixes: {
      activityIdempotence: ["app", "idempotence"],
      publicKey: ["app", "keys"],
      httpMessageSignaturesSpec: ["app", "spec"],
    },
  });
  await using fedify = await startFedifyApp();
  await fedify.send(
    "alice",
    { id: fedwork.url("/users/bob"), inboxId: fedwork.url("/users/bob/inbox") },
    new Follow({
      id: fedify.url("/follows/prefixed"),
      actor: fedify.url("/users/alice"),
      object: fedwork.url("/users/bob"),
    }),
  );
  await within(fedify.accepted, "Fedify to receive the Accept");
  assertEquals((await keysUnder(kv, ["app", "idempotence"])).length, 1);
  assertEquals((await keysUnder(kv, ["app", "keys"])).length > 0, true);
  // The scheme is remembered once Fedify has answered the Accept's POST.
  let schemes: KvKey[] = [];
  await until(() => {
    void keysUnder(kv, ["app", "spec"]).then((keys) => schemes = keys);
    return schemes.length > 0;
  }, "the scheme Fedify accepted to be remembered");
  assertEquals(schemes, [["app", "spec", fedify.server.url.origin]]);
  const old: KvKey[] = [["fedwork", "activity-idempotence"], ["fedwork", "public-key"]];
  for (const prefix of old) {
    assertEquals(await keysUnder(kv, prefix), [], prefix.join("/"));
  }
  assertEquals(await keysUnder(kv, ["fedwork", "http-signature-spec"]), []);
});
