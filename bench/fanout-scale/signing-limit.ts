// This machine's raw RSA-2048 signing rate through WebCrypto, the bound of
// any signed fan-out: `crypto.subtle.sign()` in a loop over a signature
// base of the size a delivery signs, one at a time and with 8 in flight
// (Node.js runs WebCrypto jobs on its thread pool, so several in flight use
// more than one core).  Bounded: about a second each, after a warm-up.
import process from "node:process";

/** Signatures per second, one at a time and with 8 in flight. */
export interface SigningLimit {
  readonly sequentialPerSecond: number;
  readonly parallelPerSecond: number;
  /**
   * The process's CPU time per signature one at a time, in milliseconds:
   * steadier than the rates on a machine that other work shares.
   */
  readonly cpuMsPerSignature: number;
}

const DURATION_MS = 1000;
const base = new TextEncoder().encode(
  '"@method": POST\n"@target-uri": https://remote.example/inbox\n' +
    '"content-digest": sha-256=:' + "A".repeat(44) + ":\n" +
    '"@signature-params": ("@method" "@target-uri" "content-digest");keyid=' +
    '"https://sender.example/users/alice#main-key";created=1764650000',
);

async function loop(key: CryptoKey, lanes: number): Promise<[number, number]> {
  let count = 0;
  const cpu = process.cpuUsage();
  const deadline = performance.now() + DURATION_MS;
  const started = performance.now();
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (performance.now() < deadline) {
      await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, base);
      count++;
    }
  }));
  const used = process.cpuUsage(cpu);
  return [count / ((performance.now() - started) / 1000), (used.user + used.system) / 1000 / count];
}

/**
 * Measures the signing rate with a private key.
 * @param key An RSASSA-PKCS1-v1_5 SHA-256 private key.
 * @returns The rates.
 */
export async function measureSigningLimit(key: CryptoKey): Promise<SigningLimit> {
  for (let i = 0; i < 50; i++) await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, base);
  const [sequentialPerSecond, cpuMsPerSignature] = await loop(key, 1);
  const [parallelPerSecond] = await loop(key, 8);
  return { sequentialPerSecond, parallelPerSecond, cpuMsPerSignature };
}
