// The floor of a signed fan-out on this machine: no framework, only the work
// every delivery needs.  The shared inboxes are collected from the followers
// with a Map, and each is sent the same body with an RFC 9421 signature of
// its own (`crypto.subtle.sign()`, RSA-2048) through `node:http` with a
// keep-alive agent, 16 at once.  No queue, retries, time limits, records
// or address guard: what the frameworks add is the difference.
import { Agent, request } from "node:http";
import process from "node:process";
import type { Recipient } from "@fedify/vocab";

const CONCURRENCY = 16;
const encoder = new TextEncoder();

/**
 * Returns a fan-out of an activity to the recipients' shared inboxes.
 * @param privateKey The signing key.
 * @param keyId The key's id.
 * @returns How to send to recipients, and how to stop.
 */
export function bareSender(privateKey: CryptoKey, keyId: string): {
  send: (to: Recipient[], activity: unknown) => Promise<void>;
  stop: () => Promise<void>;
} {
  const agent = new Agent({ keepAlive: true });
  const post = (inbox: URL, body: Uint8Array, digest: string): Promise<void> => {
    const created = Math.floor(Date.now() / 1000);
    const params = `("@method" "@target-uri" "content-digest");keyid="${keyId}";` +
      `alg="rsa-v1_5-sha256";created=${created}`;
    const base = `"@method": POST\n"@target-uri": ${inbox.href}\n` +
      `"content-digest": ${digest}\n"@signature-params": ${params}`;
    return crypto.subtle.sign("RSASSA-PKCS1-v1_5", privateKey, encoder.encode(base)).then(
      (signature) =>
        new Promise<void>((resolve, reject) => {
          const req = request(inbox, {
            method: "POST",
            agent,
            headers: {
              "content-type": "application/activity+json",
              "content-length": body.byteLength,
              "content-digest": digest,
              "signature-input": `sig1=${params}`,
              "signature": `sig1=:${Buffer.from(signature).toString("base64")}:`,
            },
          }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
          req.end(body);
        }),
    );
  };
  return {
    async send(to, activity) {
      const inboxes = new Map<string, URL>();
      for (const recipient of to) {
        const inbox = recipient.endpoints?.sharedInbox ?? recipient.inboxId;
        if (inbox != null && !inboxes.has(inbox.href)) inboxes.set(inbox.href, inbox);
      }
      const body = encoder.encode(JSON.stringify(activity));
      const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
      const digest = `sha-256=:${Buffer.from(hash).toString("base64")}:`;
      const queue = [...inboxes.values()];
      let next = 0;
      // Not awaited, as a queue's enqueue is not: the time runs to the
      // last request's arrival.
      void Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < queue.length) await post(queue[next++], body, digest);
      })).catch((error) => {
        process.stderr.write(`bare fan-out failed: ${error}\n`);
        process.exit(1);
      });
    },
    stop() {
      agent.destroy();
      return Promise.resolve();
    },
  };
}
