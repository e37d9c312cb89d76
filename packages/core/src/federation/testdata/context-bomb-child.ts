// Run by context-bomb.test.ts in a child process with a capped heap: feeds
// the context bomb (n = 12,000, 495 KiB; it took a 1 GiB Node.js heap out
// of memory before the document limits) to every path a remote document
// takes, and prints one line per path: "<path> <outcome>".  A regression
// kills this process (out of memory, or the parent's memory watch), not the
// test runner.
import { Activity, Follow } from "@fedify/vocab";
import process from "node:process";
import { generateCryptoKeyPair } from "../../activitypub/actors/keys.ts";
import { contextBomb } from "../../activitypub/network/testdata/hostile-documents.ts";
import { verifyLdSignature } from "../../activitypub/proofs/ld-signature.ts";
import { signRequest } from "../../activitypub/signatures/sign.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createFederation } from "../federation.ts";
import { queuedInboxMessage } from "./inbox-test-support.ts";

const n = Number(process.argv[2] ?? 12_000);
const bomb = contextBomb(n);
const body = JSON.stringify(bomb);
const queue = new InProcessMessageQueue();
const federation = createFederation<void>({
  kv: new MemoryKvStore(),
  queue,
  manuallyStartQueue: true,
  allowPrivateAddress: true,
});
let hookCalls = 0;
federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Follow, () => {})
  .onUnverifiedActivity(() => {
    hookCalls++;
    return new Response(null, { status: 202 });
  });
const post = () =>
  new Request("https://example.com/inbox", {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body,
  });
const statusOf = async (request: Request) => {
  const response = await federation.fetch(request, { contextData: undefined });
  await response.body?.cancel();
  return response.status;
};
const { privateKey } = await generateCryptoKeyPair();
const keyId = new URL("https://attacker.example/users/mallory#main-key");

// 1. Signed, to an inbox (the LD signature and the listener would parse it).
console.log(`signed-inbox ${await statusOf(await signRequest(post(), privateKey, keyId))}`);
// 2. Unsigned, with onUnverifiedActivity() registered.
console.log(`unverified-hook ${await statusOf(post())} hook=${hookCalls}`);
// 3. A queue row holding it, to the inbox worker.
let droppedReason!: (reason: string) => void;
const dropped = new Promise<string>((resolve) => droppedReason = resolve);
federation.on("dropped", (event) => droppedReason(event.reason));
await queue.enqueue(queuedInboxMessage(bomb));
const controller = new AbortController();
const workers = federation.startQueue(undefined, { signal: controller.signal });
const reason = await dropped;
controller.abort();
await workers;
console.log(`inbox-worker ${reason.includes("too complex") ? "dropped" : `other: ${reason}`}`);
// 4. lookupObject(), whatever loader served it.
const ctx = federation.createContext(new URL("https://example.com/"), undefined);
const found = await ctx.lookupObject("https://attacker.example/bomb", {
  documentLoader: (url) => Promise.resolve({ documentUrl: url, document: bomb, contextUrl: null }),
});
console.log(`lookup ${found == null ? "null" : found.constructor.name}`);
// 5. Its Linked Data signature checked.
const signature = {
  type: "RsaSignature2017",
  creator: keyId.href,
  created: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  signatureValue: "AAAA",
};
const verification = await verifyLdSignature({ ...bomb, signature }, {
  fetchKey: () => Promise.reject(new Error("no key should be fetched")),
});
console.log(`ld-signature ${verification.verified ? "verified" : verification.reason}`);
// And, for contrast, what the JSON-LD processing it was kept from costs,
// only when asked (it does not finish in a capped heap).
if (process.argv.includes("--naive")) await Activity.fromJsonLd(bomb);
console.log("done");
