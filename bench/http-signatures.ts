// Measures signRequest() and verifyRequest() end to end (digest, signing
// string, RSA-2048, header parsing), one at a time, for both schemes, plus
// verification with a cold key cache (KV hit, CryptoKey import).  Bounded:
// a fixed number of operations per case.
// Run with node, deno run -A, or bun: bench/http-signatures.ts
import { exportSpki } from "@fedify/vocab-runtime";
import {
  createPublicKeyFetcher,
  generateCryptoKeyPair,
  type HttpSignatureSpec,
  MemoryKvStore,
  signRequest,
  verifyRequest,
} from "@fedwork/core";

const N = 500;
const actor = "https://example.com/users/alice";
const keyId = new URL(`${actor}#main-key`);
const { privateKey, publicKey } = await generateCryptoKeyPair();
const pem = await exportSpki(publicKey);
const body = JSON.stringify({
  type: "Create",
  actor,
  object: { type: "Note", content: "x".repeat(500) },
});

function post(): Request {
  return new Request("https://remote.example/inbox", {
    method: "POST",
    headers: { "Content-Type": "application/activity+json" },
    body,
  });
}

async function rate(label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 20; i++) await run(); // warm-up
  const start = performance.now();
  for (let i = 0; i < N; i++) await run();
  const seconds = (performance.now() - start) / 1000;
  console.log(`${label.padEnd(44)} ${Math.round(N / seconds).toLocaleString("en")} ops/s`);
}

for (const spec of ["draft-cavage-http-signatures-12", "rfc9421"] as HttpSignatureSpec[]) {
  await rate(`sign ${spec}`, () => signRequest(post(), privateKey, keyId, { spec }));
  const signed = await signRequest(post(), privateKey, keyId, { spec });
  const warm = createPublicKeyFetcher({
    kv: new MemoryKvStore(),
    documentLoader: (url) =>
      Promise.resolve({
        documentUrl: url,
        document: { id: actor, publicKey: { id: keyId.href, owner: actor, publicKeyPem: pem } },
        contextUrl: null,
      }),
  });
  await rate(
    `verify ${spec} (cached key)`,
    () => verifyRequest(signed.clone(), { fetchKey: warm }),
  );
  await rate(`verify ${spec} (imported key each time)`, async () => {
    const { importPem } = await import("@fedify/vocab-runtime");
    const key = await importPem(pem);
    return verifyRequest(signed.clone(), {
      fetchKey: (id) =>
        Promise.resolve({ keyId: id, publicKey: key, owner: new URL(actor), cached: false }),
    });
  });
}
