// Our signed delivery against an inbox that verifies with Fedify 2.3.6.
import { assertEquals, test } from "@fedify/fixture";
import { verifyRequest as fedifyVerify } from "@fedify/fedify/sig";
import { deliverSignedActivity, MemoryKvStore } from "@fedwork/core";
import { createTestActor, startServer } from "./support.ts";

const actor = await createTestActor("https://fedwork.example/users/alice");
const activity = {
  "@context": "https://www.w3.org/ns/activitystreams",
  id: "https://fedwork.example/follows/1",
  type: "Follow",
  actor: actor.id.href,
  object: "https://fedify.example/users/bob",
};

/** An inbox that verifies with Fedify, optionally refusing RFC 9421 with 401. */
function fedifyInbox(rejectRfc9421: boolean) {
  return startServer(async (request) => {
    if (rejectRfc9421 && request.headers.has("signature-input")) {
      return new Response("RFC 9421 is not supported here", { status: 401 });
    }
    const key = await fedifyVerify(request, {
      documentLoader: actor.documentLoader,
      contextLoader: actor.documentLoader,
    });
    return new Response(null, { status: key == null ? 401 : 202 });
  });
}

test("Fedwork's RFC 9421 delivery is accepted by a Fedify-verified inbox at the first knock", async () => {
  await using server = await fedifyInbox(false);
  const result = await deliverSignedActivity({
    activity,
    inbox: new URL("/inbox", server.url),
    keys: [actor.pair],
    kv: new MemoryKvStore(),
    allowPrivateAddress: true,
  });
  assertEquals(result.kind === "delivered" && result.spec, "rfc9421");
  assertEquals(server.requests.length, 1);
});

test("Fedwork's double knock falls back to draft-cavage when RFC 9421 gets a 401", async () => {
  await using server = await fedifyInbox(true);
  const kv = new MemoryKvStore();
  const options = {
    activity,
    inbox: new URL("/inbox", server.url),
    keys: [actor.pair],
    kv,
    allowPrivateAddress: true,
  };
  const first = await deliverSignedActivity(options);
  assertEquals(first.kind === "delivered" && first.spec, "draft-cavage-http-signatures-12");
  assertEquals(server.requests.map((h) => h.has("signature-input")), [true, false]);
  const second = await deliverSignedActivity(options);
  assertEquals(second.kind, "delivered");
  assertEquals(server.requests.map((h) => h.has("signature-input")), [true, false, false]);
});
