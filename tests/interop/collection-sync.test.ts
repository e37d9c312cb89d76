// FEP-8fcf followers synchronization between Fedwork and a real Fedify
// 2.3.6 server on loopback: the header Fedwork sends is the one Fedify
// builds for the same followers.
import { buildCollectionSynchronizationHeader as fedifyHeader } from "@fedify/fedify";
import { assertEquals, test } from "@fedify/fixture";
import { Create, Follow, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import { buildCollectionSynchronizationHeader } from "@fedwork/core";
import { startFedifyApp, startFedworkApp } from "./apps.ts";
import { until, within } from "./support.ts";

test("buildCollectionSynchronizationHeader() writes what Fedify's writes", async () => {
  const cases: [string, string[]][] = [
    ["https://example.com/users/alice/followers", ["https://remote.example/users/bob"]],
    ["https://example.com/u/1/followers", [
      "https://remote.example/users/bob",
      "https://remote.example/users/carol",
      "https://remote.example/users/bob",
    ]],
  ];
  for (const [collection, ids] of cases) {
    assertEquals(
      await buildCollectionSynchronizationHeader(collection, ids),
      await fedifyHeader(collection, ids),
    );
  }
});

test("sendActivity() to followers with syncCollection sends Fedify the FEP-8fcf header", async () => {
  await using fedwork = await startFedworkApp();
  await using fedify = await startFedifyApp();
  await fedify.send(
    "alice",
    { id: fedwork.url("/users/bob"), inboxId: fedwork.url("/users/bob/inbox") },
    new Follow({
      id: fedify.url("/follows/sync"),
      actor: fedify.url("/users/alice"),
      object: fedwork.url("/users/bob"),
    }),
  );
  await within(fedify.accepted, "Fedify to receive the Accept");
  const bob = fedwork.url("/users/bob");
  const ctx = fedwork.federation.createContext(fedwork.server.url, undefined);
  for (const syncCollection of [true, false]) {
    await ctx.sendActivity(
      { identifier: "bob" },
      "followers",
      new Create({
        id: fedwork.url(`/creates/sync-${syncCollection}`),
        actor: bob,
        to: PUBLIC_COLLECTION,
        object: new Note({ id: fedwork.url(`/notes/sync-${syncCollection}`), content: "Hi" }),
      }),
      // Through the fan-out worker once, straight to the outbox once.
      { syncCollection, fanout: syncCollection ? "force" : "skip" },
    );
  }
  const posts = () => fedify.posts.filter((post) => post.path === "/users/alice/inbox");
  await until(() => posts().length >= 3, "the Accept and two Creates at Fedify's inbox");
  assertEquals(posts().map((post) => post.status < 300), [true, true, true]);
  // The Accept and the Create without syncCollection carry none.
  assertEquals(posts().map((post) => post.collectionSync).sort(), [
    await fedifyHeader(fedwork.url("/users/bob/followers"), [fedify.url("/users/alice")]),
    null,
    null,
  ]);
});
