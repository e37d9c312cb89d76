// The receiving side of the fan-out benchmark, in a process of its own: one
// HTTP server per host, each on its own loopback address (127.1.x.y; all of
// 127.0.0.0/8 is loopback on Linux), so that every host is a distinct host
// name to the sender, as on the fediverse.  Where an address cannot be bound
// (not Linux), the hosts fall back to distinct ports on 127.0.0.1.
//
// Each shared inbox parses what it receives: the body as JSON (an activity
// with a type), the signature headers (RFC 9421 `Signature-Input` and
// `Signature`, or draft-cavage `Signature`) down to a key id and an RSA-2048
// sized signature.  It does not verify the signature: that is the
// receiver's cost, not the sender's, and the two senders sign with the same
// key.  A control server answers `/wait?run=R&count=C` once C requests of
// run R arrived, and `/stats?run=R` with what was counted.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";

/** What the receiver counted for one run (the first path segment). */
export interface RunStats {
  received: number;
  signed: number;
  rejected: number;
  bytes: number;
}

const MAX_BODY_BYTES = 1024 * 1024;
const hosts = Number(process.argv[2] ?? 20);
const runs = new Map<string, RunStats>();
const waiters = new Map<string, { count: number; resolve: () => void }[]>();

function statsOf(run: string): RunStats {
  let stats = runs.get(run);
  if (stats == null) {
    stats = { received: 0, signed: 0, rejected: 0, bytes: 0 };
    runs.set(run, stats);
  }
  return stats;
}

/** The key id of a request's signature, or `null` when it has none that parses. */
function signatureKeyId(req: IncomingMessage): string | null {
  const input = req.headers["signature-input"];
  const signature = req.headers["signature"];
  if (typeof signature !== "string") return null;
  if (typeof input === "string") {
    // RFC 9421: sig1=("@method" ...);keyid="...";alg="...";created=N
    const keyId = /;keyid="([^"]+)"/.exec(input)?.[1];
    const value = /^[\w-]+=:([A-Za-z0-9+/=]+):/.exec(signature)?.[1];
    if (keyId == null || value == null) return null;
    return Buffer.from(value, "base64").byteLength === 256 ? keyId : null;
  }
  // draft-cavage: keyId="...",algorithm="...",headers="...",signature="..."
  const keyId = /keyId="([^"]+)"/.exec(signature)?.[1];
  const value = /signature="([A-Za-z0-9+/=]+)"/.exec(signature)?.[1];
  if (keyId == null || value == null) return null;
  return Buffer.from(value, "base64").byteLength === 256 ? keyId : null;
}

function inbox(req: IncomingMessage, res: ServerResponse): void {
  const run = req.url?.split("/")[1] ?? "";
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.byteLength;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on("end", () => {
    const stats = statsOf(run);
    stats.received++;
    stats.bytes += size;
    let ok = req.method === "POST" && size <= MAX_BODY_BYTES;
    if (ok) {
      try {
        const activity = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        ok = typeof activity?.type === "string";
      } catch {
        ok = false;
      }
    }
    if (ok && signatureKeyId(req) != null) {
      stats.signed++;
      res.writeHead(202).end();
    } else {
      stats.rejected++;
      res.writeHead(401).end();
    }
    const pending = waiters.get(run);
    if (pending == null) return;
    for (const waiter of [...pending]) {
      if (stats.received >= waiter.count) {
        pending.splice(pending.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
}

async function listen(address: string): Promise<string> {
  const server = createServer({ keepAliveTimeout: 60_000 }, inbox);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  return `http://${address}:${(server.address() as AddressInfo).port}`;
}

const origins: string[] = [];
let distinctAddresses = true;
for (let h = 0; h < hosts; h++) {
  // 250 hosts an octet, skipping .0 and .255.
  const address = distinctAddresses ? `127.1.${Math.floor(h / 250)}.${(h % 250) + 1}` : "127.0.0.1";
  try {
    origins.push(await listen(address));
  } catch (error) {
    if (!distinctAddresses) throw error;
    distinctAddresses = false;
    h--;
  }
}

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://control");
  const run = url.searchParams.get("run") ?? "";
  if (url.pathname === "/wait") {
    const count = Number(url.searchParams.get("count"));
    const stats = statsOf(run);
    const answer = () => res.writeHead(200).end(JSON.stringify(stats));
    if (stats.received >= count) return answer();
    const pending = waiters.get(run) ?? [];
    pending.push({ count, resolve: answer });
    waiters.set(run, pending);
    return;
  }
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(statsOf(run)));
});
await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
const controlOrigin = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;
process.stdout.write(
  JSON.stringify({ origins, control: controlOrigin, distinctAddresses }) + "\n",
);
// Ends with its parent: the parent closes our stdin.
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
