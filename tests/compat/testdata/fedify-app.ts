// A Fedify app whose queue and key–value store are Fedwork's: what the test
// process and the worker process (fedify-worker.ts) both build.
import { createFederation, type Federation, generateCryptoKeyPair } from "@fedify/fedify";
import { Create, Note } from "@fedify/vocab";
import type { EngineInstance } from "./fedwork-engines.ts";

/**
 * A Fedify federation on a Fedwork engine.  Its workers start only when
 * asked (`startQueue()`), so that the test decides which process delivers.
 */
export function createFedifyApp(instance: EngineInstance): Federation<void> {
  return createFederation<void>({
    // Fedwork's store and queue, as Fedify's KvStore and MessageQueue.
    kv: instance.kv,
    queue: instance.queue,
    manuallyStartQueue: true,
    // The inbox is a loopback server.
    allowPrivateAddress: true,
  });
}

/**
 * Sends a `Create(Note)` from `https://example.com/users/alice` to the inbox
 * at `inbox`, through the federation's outbox queue.
 * @returns The activity's id.
 */
export async function sendNote(federation: Federation<void>, inbox: URL): Promise<string> {
  const { privateKey } = await generateCryptoKeyPair("RSASSA-PKCS1-v1_5");
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  const id = new URL(`https://example.com/activities/${crypto.randomUUID()}`);
  const activity = new Create({
    id,
    actor: new URL("https://example.com/users/alice"),
    object: new Note({
      id: new URL(`https://example.com/notes/${crypto.randomUUID()}`),
      content: "Hello from a Fedify app on a Fedwork engine",
    }),
  });
  await ctx.sendActivity(
    { keyId: new URL("https://example.com/users/alice#main-key"), privateKey },
    { id: new URL("/users/bob", inbox), inboxId: new URL("/inbox", inbox) },
    activity,
  );
  return id.href;
}
