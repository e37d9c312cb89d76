// Fan-out at fediverse scale (issue 43): one post sent to N followers on H
// hosts, delivered to each host's shared inbox, by Fedwork and by Fedify 2.3
// in the same run, each configuration in a fresh process, against one
// receiver process (receiver.ts: H loopback servers, one address each).
// Reports the time to the last delivery, peak memory, deliveries per second,
// the sender's CPU per delivery and, measured in the same run before and
// after, this machine's raw RSA-2048 signing rate through WebCrypto, and the
// ratios.  Node.js only (it spawns `node` children).
//
// Fedwork runs as users install it by default (`--from built`): the
// packages' built JavaScript in dist/, built from this tree first by
// scripts/build.ts, as Fedify 2.3 runs from its published JavaScript.
// `--from source` loads Fedwork from its TypeScript sources instead (the
// "fedwork-source" export condition, Node.js's type stripping), which costs
// the sender tens of MiB more.  Each sender reports where `@fedwork/core`
// resolved, and the run fails if it is not where `--from` says.
//
//   node -C fedwork-source bench/fanout-scale/main.ts [--size smoke|full]
//        [--from built|source] [--followers N] [--hosts H] [--trials T]
//        [--only id,id] [--json out.json]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildPackages } from "../../scripts/build.ts";
import { CONFIGS, type SenderResult, type Setup } from "./setup.ts";
import { measureSigningLimit, type SigningLimit } from "./signing-limit.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "smoke" },
    from: { type: "string", default: "built" },
    followers: { type: "string" },
    hosts: { type: "string" },
    trials: { type: "string", default: "1" },
    only: { type: "string" },
    json: { type: "string" },
  },
});
const full = values.size === "full";
if (values.size !== "full" && values.size !== "smoke") {
  throw new RangeError(`--size must be smoke or full; got ${values.size}.`);
}
if (values.from !== "built" && values.from !== "source") {
  throw new RangeError(`--from must be built or source; got ${values.from}.`);
}
const fromSource = values.from === "source";
const followers = Number(values.followers ?? (full ? 100_000 : 2_000));
const hosts = Number(values.hosts ?? (full ? 1_000 : 20));
const trials = Number(values.trials);
for (const [name, value] of [["followers", followers], ["hosts", hosts], ["trials", trials]]) {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 1_000_000) {
    throw new RangeError(`--${name} must be an integer from 1 to 1,000,000.`);
  }
}
if (hosts > 60_000) throw new RangeError("--hosts must be at most 60,000.");
const only = values.only?.split(",");
const configs = only == null ? CONFIGS : CONFIGS.filter((c) => only.includes(c.id));
if (configs.length === 0) {
  throw new RangeError(`--only names none of ${CONFIGS.map((c) => c.id).join(", ")}.`);
}

const here = dirname(fileURLToPath(import.meta.url));
// Without the condition, the workspace's @fedwork packages resolve to their
// "default" export, dist/ (built below), as an installed package does.
const nodeArgs = fromSource ? ["--conditions=fedwork-source"] : [];
const fedworkDir = fromSource ? "/packages/core/src/" : "/packages/core/dist/";
if (!fromSource && configs.some((c) => c.framework === "fedwork")) {
  const started = performance.now();
  await buildPackages(configs.some((c) => (c.workers ?? 0) > 0) ? ["core", "redis"] : ["core"]);
  console.log(
    `Built @fedwork/core${
      configs.some((c) => (c.workers ?? 0) > 0) ? " and @fedwork/redis" : ""
    } ` +
      `into dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}
// E.g. FANOUT_SENDER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to
// profile the senders.
const senderArgs = process.env.FANOUT_SENDER_NODE_OPTIONS?.split(" ").filter((a) => a !== "") ??
  [];

/** Spawns a child and resolves with its first line of output. */
function child(script: string, args: string[], extra: readonly string[] = []) {
  const proc = spawn(process.execPath, [...nodeArgs, ...extra, join(here, script), ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const firstLine = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.once("line", resolve);
    proc.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { proc, firstLine };
}

const loadBefore = loadavg();
const started = performance.now();
const algorithm = {
  name: "RSASSA-PKCS1-v1_5",
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: "SHA-256",
};
const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
const receiver = child("receiver.ts", [String(hosts)]);
const { origins, control, distinctAddresses } = JSON.parse(await receiver.firstLine);
const dir = mkdtempSync(join(tmpdir(), "fedwork-fanout-"));
const setupFile = join(dir, "setup.json");
const setup: Setup = {
  origins,
  control,
  followers,
  privateKey: await crypto.subtle.exportKey("jwk", keys.privateKey),
  publicKey: await crypto.subtle.exportKey("jwk", keys.publicKey),
};
writeFileSync(setupFile, JSON.stringify(setup));

console.log(
  `Fan-out of one post to ${followers.toLocaleString("en")} followers on ` +
    `${hosts.toLocaleString("en")} hosts (shared inboxes; ${
      distinctAddresses ? "one 127.1.x.y address per host" : "one 127.0.0.1 port per host"
    }), Fedwork from its ${fromSource ? "TypeScript sources" : "built JavaScript (dist/)"}, ` +
    `Node.js ${process.versions.node}, ${cpus().length} cores, load average ` +
    `${loadBefore.map((l) => l.toFixed(2)).join(" / ")}`,
);
const limits: SigningLimit[] = [await measureSigningLimit(keys.privateKey)];
const results: SenderResult[] = [];
for (let trial = 0; trial < trials; trial++) {
  // Rotated from one trial to the next, so that a slow spell is shared out.
  const order = configs.map((_, i) => configs[(i + trial) % configs.length]);
  for (const config of order) {
    const sender = child("sender.ts", [config.id, setupFile], senderArgs);
    const result = JSON.parse(await sender.firstLine) as SenderResult;
    await new Promise((resolve) => sender.proc.once("exit", resolve));
    if (config.framework === "fedwork" && !result.fedworkUrl?.includes(fedworkDir)) {
      throw new Error(
        `${config.id} loaded @fedwork/core from ${result.fedworkUrl}, not from ${fedworkDir} ` +
          `as --from ${values.from} says.`,
      );
    }
    results.push(result);
    const from = result.fedworkUrl == null
      ? ""
      : ` (@fedwork/core: ${result.fedworkUrl.slice(result.fedworkUrl.indexOf("/packages/") + 1)})`;
    console.log(`  trial ${trial + 1}: ${config.id} ${result.ms.toFixed(0)} ms${from}`);
  }
}
limits.push(await measureSigningLimit(keys.privateKey));
receiver.proc.stdin!.end();
rmSync(dir, { recursive: true, force: true });
const loadAfter = loadavg();

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sequential = median(limits.map((l) => l.sequentialPerSecond));
const parallel = median(limits.map((l) => l.parallelPerSecond));
const signatureCpuMs = median(limits.map((l) => l.cpuMsPerSignature));
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
const int = (n: number) => Math.round(n).toLocaleString("en");
console.log(
  `RSA-2048 subtle.sign(), this machine in this run: ${int(sequential)}/s one at a time, ` +
    `${int(parallel)}/s with 8 in flight (before: ${int(limits[0].sequentialPerSecond)} / ` +
    `${int(limits[0].parallelPerSecond)}, after: ${int(limits[1].sequentialPerSecond)} / ` +
    `${int(limits[1].parallelPerSecond)}); ${signatureCpuMs.toFixed(2)} ms of CPU a signature`,
);
const rows = configs.map((config) => {
  const mine = results.filter((r) => r.config === config.id);
  const ms = median(mine.map((r) => r.ms));
  const rate = hosts / (ms / 1000);
  return {
    config,
    ms,
    rate,
    cpuPerDelivery: median(mine.map((r) => r.cpuMs)) / hosts,
    peak: Math.max(...mine.map((r) => Math.max(r.maxRssBytes, r.peakRssSampledBytes))),
    before: median(mine.map((r) => r.rssBeforeSendBytes)),
    ok: mine.every((r) => r.received.signed >= hosts && r.received.rejected === 0),
  };
});
console.log(
  "| configuration | time to last delivery | deliveries/s | of signing limit (1 / 8 in flight) " +
    "| sender CPU per delivery (signing's share) | peak RSS (before sending) | all signed |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) {
  console.log(
    `| ${row.config.label} | ${int(row.ms)} ms | ${int(row.rate)} | ` +
      `${(100 * row.rate / sequential).toFixed(0)}% / ${
        (100 * row.rate / parallel).toFixed(0)
      }% | ` +
      `${row.cpuPerDelivery.toFixed(2)} ms (${
        (100 * signatureCpuMs / row.cpuPerDelivery).toFixed(0)
      }%) | ${mib(row.peak)} (${mib(row.before)}) | ` +
      `${row.ok ? "yes" : "NO"} |`,
  );
}
for (const row of rows.filter((r) => (r.config.workers ?? 0) > 0)) {
  const mine = results.filter((r) => r.config === row.config.id);
  const peaks = (mine[0].workers ?? []).map((_, i) =>
    Math.max(...mine.map((r) => r.workers?.[i]?.peakRssBytes ?? 0))
  );
  console.log(
    `${row.config.label}: peak RSS of the worker processes ${peaks.map(mib).join(", ")} ` +
      `(the sender's, in the table, holds the followers; all processes together ` +
      `${mib(row.peak + peaks.reduce((a, b) => a + b, 0))}); CPU per delivery counts all of them`,
  );
}
for (const ours of rows.filter((r) => r.config.framework === "fedwork")) {
  const theirs = rows.find((r) =>
    r.config.framework === "fedify" && r.config.parallel === ours.config.parallel
  );
  if (theirs == null) continue;
  console.log(
    `${ours.config.label} vs ${theirs.config.label}: ${(theirs.ms / ours.ms).toFixed(2)}× ` +
      `as fast to the last delivery, ${(ours.peak / theirs.peak).toFixed(2)}× the peak RSS`,
  );
}
const bare = rows.find((r) => r.config.framework === "bare");
if (bare != null) {
  for (const row of rows.filter((r) => r.config.framework !== "bare")) {
    console.log(
      `${row.config.label}: ${(bare.ms / row.ms).toFixed(2)}× the bare loop's rate, ` +
        `${(row.cpuPerDelivery / bare.cpuPerDelivery).toFixed(2)}× its CPU per delivery`,
    );
  }
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `${seconds.toFixed(0)} s in all; load average after ` +
    `${loadAfter.map((l) => l.toFixed(2)).join(" / ")}; ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
);
if (values.json != null) {
  writeFileSync(
    values.json,
    JSON.stringify(
      {
        followers,
        hosts,
        trials,
        from: values.from,
        loadBefore,
        loadAfter,
        limits,
        results,
        seconds,
      },
      null,
      2,
    ) + "\n",
  );
}
if (!rows.every((r) => r.ok && Number.isFinite(r.rate))) {
  console.error("Some configuration did not deliver every signed request.");
  process.exit(1);
}
process.exit(0);
