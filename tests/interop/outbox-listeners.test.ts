// A client POSTs a Create to a Fedwork actor's outbox (ActivityPub's
// client-to-server protocol); the outbox listener sends it on to the
// actor's followers, one of them on a real Fedify 2.3.6 server.
import { assertEquals, test } from "@fedify/fixture";
import { Create, Follow, PUBLIC_COLLECTION } from "@fedify/vocab";
import { startFedifyApp, startFedworkApp } from "./apps.ts";
import { within } from "./support.ts";

test("a Create POSTed to a Fedwork outbox reaches the actor's Fedify follower", async () => {
  await using fedwork = await startFedworkApp();
  const posted: string[] = [];
  fedwork.federation.setOutboxListeners("/users/{identifier}/outbox")
    .authorize((ctx, identifier) =>
      ctx.request.headers.get("authorization") === `Bearer ${identifier}-token`
    )
    .on(Create, async (ctx, create) => {
      posted.push(create.id?.href ?? "");
      await ctx.sendActivity({ identifier: ctx.identifier }, "followers", create);
    });
  await using fedify = await startFedifyApp();
  await fedify.send(
    "alice",
    { id: fedwork.url("/users/bob"), inboxId: fedwork.url("/users/bob/inbox") },
    new Follow({
      id: fedify.url("/follows/c2s"),
      actor: fedify.url("/users/alice"),
      object: fedwork.url("/users/bob"),
    }),
  );
  await within(fedify.accepted, "Fedify to receive the Accept");
  const bob = fedwork.url("/users/bob").href;
  const response = await fetch(fedwork.url("/users/bob/outbox"), {
    method: "POST",
    headers: {
      authorization: "Bearer bob-token",
      "content-type": 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
    },
    body: JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      type: "Create",
      id: `${bob}/creates/c2s`,
      actor: bob,
      to: PUBLIC_COLLECTION.href,
      object: {
        type: "Note",
        id: `${bob}/notes/c2s`,
        attributedTo: bob,
        to: PUBLIC_COLLECTION.href,
        content: "Posted by a client",
      },
    }),
  });
  assertEquals(response.status, 202);
  await response.body?.cancel();
  const note = await within(fedify.notes, "Fedify to receive the note");
  assertEquals(note.content?.toString(), "Posted by a client");
  assertEquals(posted, [`${bob}/creates/c2s`]);
});
