// RFC 9421 `Accept-Signature` challenges between Fedwork and a real Fedify
// 2.3.6 server on loopback, both ways: an inbox asking for a signature
// with a one-time nonce refuses the first knock with a challenge, and the
// sender signs again as asked.
import { assertEquals, test } from "@fedify/fixture";
import { Follow } from "@fedify/vocab";
import { startFedifyApp, startFedworkApp, type TestApp } from "./apps.ts";
import { until, within } from "./support.ts";

const CHALLENGING = { inboxChallengePolicy: { enabled: true, requestNonce: true } };
// Fedify 2.3.6 covers content-digest a second time when a challenge asks
// for it (it adds it to any body's signature), which RFC 9421 §2.5 makes an
// error: a Fedwork inbox with Fedify senders leaves it out of the list.
const CHALLENGING_FOR_FEDIFY = {
  inboxChallengePolicy: {
    enabled: true,
    requestNonce: true,
    components: ["@method", "@target-uri", "@authority"],
  },
};

async function follow(from: TestApp, to: TestApp, id: string): Promise<void> {
  await from.send(
    "alice",
    { id: to.url("/users/bob"), inboxId: to.url("/users/bob/inbox") },
    new Follow({ id: from.url(id), actor: from.url("/users/alice"), object: to.url("/users/bob") }),
  );
}

function inboxPosts(app: TestApp): [string | null, number][] {
  return app.posts.filter((post) => post.path === "/users/bob/inbox").map((post) => [
    post.spec,
    post.status,
  ]);
}

test("Fedwork answers a Fedify inbox's Accept-Signature challenge with the nonce", async () => {
  await using fedwork = await startFedworkApp();
  // Fedify 2.3.6 challenges a failed signature only: the first knock
  // reaches it unsigned, the answer to its challenge as sent.
  await using fedify = await startFedifyApp({ ...CHALLENGING, unsignedUnlessNonce: true });
  await follow(fedwork, fedify, "/follows/challenged-1");
  await within(fedwork.accepted, "Fedwork to receive the Accept");
  await until(() => inboxPosts(fedify).length >= 2, "two POSTs to Fedify's inbox");
  // The challenge was met in RFC 9421, with no fall back to draft-cavage.
  assertEquals(inboxPosts(fedify), [["rfc9421", 401], ["rfc9421", 202]]);
});

test("Fedify answers a Fedwork inbox's Accept-Signature challenge with the nonce", async () => {
  await using fedwork = await startFedworkApp(CHALLENGING_FOR_FEDIFY);
  await using fedify = await startFedifyApp();
  await follow(fedify, fedwork, "/follows/challenged-2");
  await within(fedify.accepted, "Fedify to receive the Accept");
  await until(() => inboxPosts(fedwork).length >= 2, "two POSTs to Fedwork's inbox");
  assertEquals(inboxPosts(fedwork), [["rfc9421", 401], ["rfc9421", 202]]);
});
