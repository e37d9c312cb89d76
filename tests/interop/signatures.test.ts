// Our HTTP signatures against Fedify 2.3.6's: each verifies the other's.
import { assert, assertEquals, test } from "@fedify/fixture";
import { signRequest as fedifySign, verifyRequest as fedifyVerify } from "@fedify/fedify/sig";
import {
  createPublicKeyFetcher,
  type HttpSignatureSpec,
  MemoryKvStore,
  signRequest,
  verifyRequest,
} from "@fedwork/core";
import { createTestActor } from "./support.ts";

const SPECS: HttpSignatureSpec[] = ["draft-cavage-http-signatures-12", "rfc9421"];
const actor = await createTestActor("https://fedify.example/users/alice");

function inboxPost(): Request {
  return new Request("https://fedwork.example/users/bob/inbox", {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body: JSON.stringify({ type: "Follow", actor: actor.id.href }),
  });
}

for (const spec of SPECS) {
  test(`a POST signed by Fedify with ${spec} verifies with Fedwork`, async () => {
    const signed = await fedifySign(inboxPost(), actor.pair.privateKey, actor.pair.keyId, { spec });
    const fetchKey = createPublicKeyFetcher({
      kv: new MemoryKvStore(),
      documentLoader: actor.documentLoader,
    });
    const result = await verifyRequest(signed, { fetchKey });
    assert(result.verified, JSON.stringify(result));
    assertEquals([result.spec, result.key.owner?.href], [spec, actor.id.href]);
  });

  test(`a GET signed by Fedify with ${spec} verifies with Fedwork`, async () => {
    const request = new Request("https://fedwork.example/users/bob", {
      headers: { Accept: "application/activity+json" },
    });
    const signed = await fedifySign(request, actor.pair.privateKey, actor.pair.keyId, { spec });
    const fetchKey = createPublicKeyFetcher({
      kv: new MemoryKvStore(),
      documentLoader: actor.documentLoader,
    });
    const result = await verifyRequest(signed, { fetchKey });
    assert(result.verified, JSON.stringify(result));
  });

  test(`a POST signed by Fedwork with ${spec} verifies with Fedify`, async () => {
    const signed = await signRequest(inboxPost(), actor.pair.privateKey, actor.pair.keyId, {
      spec,
    });
    const key = await fedifyVerify(signed, {
      documentLoader: actor.documentLoader,
      contextLoader: actor.documentLoader,
    });
    assertEquals(key?.id?.href, actor.pair.keyId.href);
  });
}
