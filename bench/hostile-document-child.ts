// One case of bench/hostile-peers.ts's remote-document section, in a
// process of its own so that its peak memory is its own: warms up on a
// small activity, then processes the case's document as Fedwork does
// ("inbox": POSTed to an inbox and parsed as a worker would; "lookup": as
// lookupObject() parses a fetched document; "ld-signature": its Linked Data
// signature checked) or as plain JSON-LD processing would ("naive":
// Activity.fromJsonLd() with the bundled contexts), and prints one JSON line: CPU milliseconds, the peak
// RSS above the warmed-up peak, and the outcome.
//
// Usage: <runtime> bench/hostile-document-child.ts <case> <inbox|lookup|ld-signature|naive>
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { Activity } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import {
  createFederation,
  generateCryptoKeyPair,
  MemoryKvStore,
  signJsonLd,
  verifyLdSignature,
} from "@fedwork/core";
import {
  contextBomb,
  deepContexts,
  manyValues,
  scopedTypeBomb,
} from "../packages/core/src/activitypub/network/testdata/hostile-documents.ts";
import { SERVER_DOCUMENTS } from "../packages/core/src/activitypub/network/testdata/server-documents.ts";

const AS = "https://www.w3.org/ns/activitystreams";
const [name, variant] = process.argv.slice(2);

function create(object: Record<string, unknown>, context: unknown = [AS]) {
  return {
    "@context": context,
    id: "https://attacker.example/activities/1",
    type: "Create",
    actor: "https://attacker.example/users/mallory",
    object: { id: "https://attacker.example/notes/1", type: "Note", ...object },
  };
}

function terms(n: number, prefix: string) {
  return Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `https://x.example/${prefix}${i}`]),
  );
}

/** Each case's document, the largest of its shape the default limits accept for "limit-…". */
const CASES: Record<string, () => Record<string, unknown>> = {
  "bomb-3000": () => contextBomb(3_000),
  "bomb-6000": () => contextBomb(6_000),
  "bomb-9000": () => contextBomb(9_000),
  "bomb-12000": () => contextBomb(12_000),
  "scoped-1600": () => scopedTypeBomb(1_600),
  // 4,998 values: tags of three values each.
  "limit-values": () =>
    create({ tag: Array.from({ length: 1_660 }, (_, i) => ({ type: "Hashtag", name: `#t${i}` })) }),
  "limit-strings": () => create(manyValues(4_990)),
  // 64 entries, 1,024 terms: 62 inline contexts of 16 terms and one of 32.
  "limit-contexts": () =>
    create({}, [AS, terms(32, "a"), ...Array.from({ length: 62 }, (_, i) => terms(16, `c${i}_`))]),
  // 60 nested inline contexts, 61 levels deep.
  "limit-deep": () => create({ inReplyTo: deepContexts(60, 61) }),
  // As many scoped-context uses as the context work allows.
  "limit-scoped": () => scopedTypeBomb(140),
  "limit-string-length": () => create({ content: "x".repeat(512 * 1024 - 100) }),
  // The most values a Linked Data signature is checked on: 2,000.
  "ld-limit-strings": () => create(manyValues(1_985)),
  "ld-limit-values": () =>
    create({ tag: Array.from({ length: 660 }, (_, i) => ({ type: "Hashtag", name: `#t${i}` })) }),
  ...Object.fromEntries(
    Object.entries(SERVER_DOCUMENTS).map(([label, document]) => [`real ${label}`, () => document]),
  ),
};

const loader = (url: string) => {
  if (!Object.hasOwn(preloadedContexts, url)) return Promise.reject(new Error(`No ${url}`));
  return Promise.resolve({ documentUrl: url, document: preloadedContexts[url], contextUrl: null });
};

const federation = createFederation<void>({
  kv: new MemoryKvStore(),
  skipSignatureVerification: true,
  documentLoader: loader,
});
federation.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Activity, () => {});

/** POSTs the document to the shared inbox (no queue: parsed in the request, as a worker would). */
async function throughInbox(document: unknown): Promise<string> {
  const response = await federation.fetch(
    new Request("https://example.com/inbox", {
      method: "POST",
      headers: { "Content-Type": "application/activity+json" },
      body: JSON.stringify(document),
    }),
    { contextData: undefined },
  );
  return `${response.status} ${(await response.text()).slice(0, 60)}`;
}

const rsa = await generateCryptoKeyPair();
const keyId = new URL("https://attacker.example/users/mallory#main-key");
const fetchKey = () =>
  Promise.resolve({
    keyId,
    owner: new URL("https://attacker.example/users/mallory"),
    publicKey: rsa.publicKey,
    cached: false,
  });

/** Made before the measurement: what the variant is given. */
async function prepare(document: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (variant !== "ld-signature") return document;
  // Signing canonicalizes the document too: done by the attacker, not
  // counted.  A document too large to sign in time gets a signature of the
  // right shape, which is all a refusal before canonicalization looks at.
  try {
    return await signJsonLd(document, rsa.privateKey, keyId);
  } catch {
    return {
      ...document,
      signature: {
        type: "RsaSignature2017",
        creator: keyId.href,
        created: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        signatureValue: "AAAA",
      },
    };
  }
}

const ctx = federation.createContext(new URL("https://example.com/"), undefined);

async function run(document: Record<string, unknown>): Promise<string> {
  switch (variant) {
    case "naive":
      await Activity.fromJsonLd(document, { documentLoader: loader, contextLoader: loader });
      return "parsed";
    case "ld-signature": {
      const result = await verifyLdSignature(document, { fetchKey });
      return result.verified ? "verified" : `refused: ${result.reason}`;
    }
    case "lookup": {
      // As ctx.lookupObject() parses a document any loader served.
      const object = await ctx.lookupObject("https://attacker.example/document", {
        // Served from its own id's origin, as a real server serves it.
        documentLoader: () =>
          Promise.resolve({
            documentUrl: typeof document.id === "string" ? document.id : "https://x.example/",
            document,
            contextUrl: null,
          }),
      });
      return object == null ? "refused" : `parsed ${object.constructor.name}`;
    }
    default:
      return await throughInbox(document);
  }
}

// Warm up: load and compile every path on a small document first.
for (let i = 0; i < 3; i++) {
  await run(
    await prepare({
      ...create({ content: "warm-up" }),
      id: `https://attacker.example/warm-up/${i}`,
    }),
  );
}
const document = await prepare(CASES[name]());
(globalThis as { gc?: () => void }).gc?.();
// The peak resident size during the case, less the resident size before
// it.  On Linux the peak is reset first (writing 5 to /proc/self/clear_refs
// resets VmHWM), so that start-up's own peak does not count; elsewhere the
// process's peak so far is what there is: an upper bound.
const procStatus = (field: string): number | null => {
  try {
    const status = readFileSync("/proc/self/status", "utf8");
    const kib = new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1];
    return kib == null ? null : Number(kib);
  } catch {
    return null;
  }
};
let peakReset = false;
try {
  writeFileSync("/proc/self/clear_refs", "5");
  peakReset = true;
} catch {
  // Not Linux, or not allowed.
}
const rss0 = procStatus("VmRSS") ?? process.memoryUsage().rss / 1024;
const cpu0 = process.cpuUsage();
let outcome: string;
try {
  outcome = await run(document);
} catch (error) {
  outcome = `error: ${String(error).slice(0, 80)}`;
}
const cpu = process.cpuUsage(cpu0);
const peakKiB = (peakReset ? procStatus("VmHWM") : null) ?? process.resourceUsage().maxRSS;
const peakMiB = Math.max(0, peakKiB - rss0) / 1024;
console.log(JSON.stringify({
  case: name,
  variant,
  kib: Math.round(JSON.stringify(document).length / 1024),
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  peakMiB: Math.round(peakMiB * 10) / 10,
  outcome,
}));
