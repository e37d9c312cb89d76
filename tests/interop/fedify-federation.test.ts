// A Fedwork server and a real Fedify 2.3.6 server on loopback follow each
// other, accept, and exchange a note, in both signature schemes.
import { assertEquals, test } from "@fedify/fixture";
import { Create, Follow, Note, PUBLIC_COLLECTION } from "@fedify/vocab";
import type { HttpSignatureSpec } from "@fedwork/core";
import { startFedifyApp, startFedworkApp, type TestApp } from "./apps.ts";
import { until, within } from "./support.ts";

const SPECS: HttpSignatureSpec[] = ["rfc9421", "draft-cavage-http-signatures-12"];

async function follow(from: TestApp, to: TestApp, id: string): Promise<void> {
  await from.send(
    "alice",
    { id: to.url("/users/bob"), inboxId: to.url("/users/bob/inbox") },
    new Follow({ id: from.url(id), actor: from.url("/users/alice"), object: to.url("/users/bob") }),
  );
}

/**
 * Resolves once an inbox has answered `count` POSTs with a 2xx (a listener
 * may run before its response is recorded).
 */
function acceptedPosts(app: TestApp, path: string, count: number): Promise<void> {
  return until(
    () => acceptedSpecs(app, path).length >= count,
    `${count} accepted POSTs to ${path}`,
  );
}

/** The schemes of the POSTs an inbox accepted (2xx). */
function acceptedSpecs(app: TestApp, path: string): (HttpSignatureSpec | null)[] {
  return app.posts.filter((post) => post.path === path && post.status < 300).map((post) =>
    post.spec
  );
}

for (const spec of SPECS) {
  test(`Fedify follows Fedwork and receives its signed Accept (${spec} first)`, async () => {
    await using fedwork = await startFedworkApp({ firstKnock: spec });
    await using fedify = await startFedifyApp({ firstKnock: spec });
    await follow(fedify, fedwork, "/follows/1");
    const accept = await within(fedify.accepted, "Fedify to receive the Accept");
    assertEquals(accept.actorId?.href, fedwork.url("/users/bob").href);
    assertEquals(accept.objectId?.href, fedify.url("/follows/1").href);
    assertEquals([...fedwork.followers.keys()], [fedify.url("/users/alice").href]);
    // Each side verified the other's first knock.
    await acceptedPosts(fedify, "/users/alice/inbox", 1);
    assertEquals(acceptedSpecs(fedwork, "/users/bob/inbox"), [spec]);
    assertEquals(acceptedSpecs(fedify, "/users/alice/inbox"), [spec]);
  });

  test(`Fedwork follows Fedify and receives its signed Accept (${spec} first)`, async () => {
    await using fedwork = await startFedworkApp({ firstKnock: spec });
    await using fedify = await startFedifyApp({ firstKnock: spec });
    await follow(fedwork, fedify, "/follows/2");
    const accept = await within(fedwork.accepted, "Fedwork to receive the Accept");
    assertEquals(accept.actorId?.href, fedify.url("/users/bob").href);
    assertEquals(accept.objectId?.href, fedwork.url("/follows/2").href);
    await acceptedPosts(fedwork, "/users/alice/inbox", 1);
    assertEquals(acceptedSpecs(fedify, "/users/bob/inbox"), [spec]);
    assertEquals(acceptedSpecs(fedwork, "/users/alice/inbox"), [spec]);
  });
}

test("a Create(Note) Fedwork fans out to its followers reaches Fedify's inbox", async () => {
  await using fedwork = await startFedworkApp();
  await using fedify = await startFedifyApp();
  await follow(fedify, fedwork, "/follows/3");
  await within(fedify.accepted, "Fedify to receive the Accept");
  const bob = fedwork.url("/users/bob");
  await fedwork.federation.createContext(fedwork.server.url, undefined).sendActivity(
    { identifier: "bob" },
    "followers",
    new Create({
      id: fedwork.url("/creates/1"),
      actor: bob,
      to: PUBLIC_COLLECTION,
      object: new Note({
        id: fedwork.url("/notes/1"),
        attribution: bob,
        to: PUBLIC_COLLECTION,
        content: "Hello, Fedify!",
      }),
    }),
    { fanout: "force" },
  );
  const note = await within(fedify.notes, "Fedify to receive the note");
  assertEquals(note.content?.toString(), "Hello, Fedify!");
  assertEquals(note.id?.href, fedwork.url("/notes/1").href);
});

test("Fedwork falls back to draft-cavage when a Fedify peer refuses RFC 9421, and remembers", async () => {
  await using fedwork = await startFedworkApp();
  await using fedify = await startFedifyApp({ refuseRfc9421: true, firstKnock: "rfc9421" });
  await follow(fedwork, fedify, "/follows/4");
  await within(fedwork.accepted, "Fedwork to receive the Accept");
  // The second delivery to that origin goes straight to draft-cavage.
  await follow(fedwork, fedify, "/follows/5");
  await acceptedPosts(fedify, "/users/bob/inbox", 2);
  assertEquals(
    fedify.posts.filter((post) => post.path === "/users/bob/inbox").map((post) => [
      post.spec,
      post.status,
    ]),
    [
      ["rfc9421", 401],
      ["draft-cavage-http-signatures-12", 202],
      ["draft-cavage-http-signatures-12", 202],
    ],
  );
});

test("Fedify falls back to draft-cavage when a Fedwork peer refuses RFC 9421", async () => {
  await using fedwork = await startFedworkApp({ refuseRfc9421: true });
  await using fedify = await startFedifyApp({ firstKnock: "rfc9421" });
  await follow(fedify, fedwork, "/follows/6");
  await within(fedify.accepted, "Fedify to receive the Accept");
  await acceptedPosts(fedwork, "/users/bob/inbox", 1);
  assertEquals(
    fedwork.posts.filter((post) => post.path === "/users/bob/inbox").map((post) => [
      post.spec,
      post.status,
    ]),
    [["rfc9421", 401], ["draft-cavage-http-signatures-12", 202]],
  );
});
