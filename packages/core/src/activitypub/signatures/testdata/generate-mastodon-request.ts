// Writes mastodon-request.json: a POST signed exactly as Mastodon signs
// (draft-cavage, `(request-target) host date digest`, rsa-sha256), made with
// node:crypto alone so that it does not depend on the signer under test.
// It was run once; the output is committed and must not be regenerated
// without reason.  Run: node generate-mastodon-request.ts
import { createHash, createSign, generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";

const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const actorId = "https://mastodon.example/users/alice";
const keyId = `${actorId}#main-key`;
const url = new URL("https://fedwork.example/users/bob/inbox");
const body = JSON.stringify({
  "@context": "https://www.w3.org/ns/activitystreams",
  id: "https://mastodon.example/users/alice#follows/1",
  type: "Follow",
  actor: actorId,
  object: "https://fedwork.example/users/bob",
});
const date = "Mon, 23 Nov 2026 12:00:00 GMT";
const digest = `SHA-256=${createHash("sha256").update(body).digest("base64")}`;
const signingString = [
  `(request-target): post ${url.pathname}`,
  `host: ${url.host}`,
  `date: ${date}`,
  `digest: ${digest}`,
].join("\n");
const signature = createSign("sha256").update(signingString).sign(privateKey, "base64");
const fixture = {
  comment: "Signed once by generate-mastodon-request.ts; the key is a test key.",
  keyId,
  actor: {
    "@context": ["https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"],
    id: actorId,
    type: "Person",
    preferredUsername: "alice",
    inbox: `${actorId}/inbox`,
    publicKey: {
      id: keyId,
      owner: actorId,
      publicKeyPem: publicKey.export({ type: "spki", format: "pem" }),
    },
  },
  privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }),
  request: {
    method: "POST",
    url: url.href,
    headers: {
      "Host": url.host,
      "Date": date,
      "Digest": digest,
      "Content-Type": "application/activity+json",
      "Signature": `keyId="${keyId}",algorithm="rsa-sha256",` +
        `headers="(request-target) host date digest",signature="${signature}"`,
    },
    body,
  },
};
writeFileSync(
  new URL("mastodon-request.json", import.meta.url),
  JSON.stringify(fixture, null, 2) + "\n",
);
