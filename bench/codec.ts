// A local measurement of the task codec and the typed-task enqueue path
// (not a test).  Every number comes with a baseline measured in the same
// run, in interleaved rounds (the median is reported), so that the ratios
// hold on a busy machine:
//
// - plain: a payload without vocabulary objects (strings, numbers, a Date,
//   a Map): encode + decode next to JSON.stringify + JSON.parse;
// - vocabulary objects: a Create wrapping a Note, built in code and parsed
//   from a document (as an inbox activity is), and a Follow; next to the
//   least @fedify/vocab itself needs (toJsonLd() + fromJsonLd());
// - a batch of 100 payloads sharing one Create, as enqueueTaskMany() does;
// - enqueue overhead: ctx.enqueueTask() into an in-memory no-op queue,
//   minus the raw queue.enqueue() of a message and minus the codec (checks,
//   messages, URL, span, trace context, log).  It is measured through the
//   public API only, so it is not split between core's internal layers;
// - hostile input: decoding `[[-7,4294967295]]` and each message of the
//   fuzz test's corpus, per message.
//
// With --baseline <dir>, where <dir> holds another revision of the
// repository (e.g. `git archive <rev> | tar -x -C <dir>` with node_modules
// symlinked), its codec and enqueue path are measured side by side.
//
// Usage: node_modules/.bin/node bench/codec.ts [--baseline <dir>]
//        (or deno run -A / bun; npm run bench:codec)
import { Create, Follow, Mention, Note } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import * as currentCore from "@fedwork/core";
import {
  generateHostileMessages,
  handmadeHostileMessages,
} from "../packages/core/src/tasks/codec/testdata/hostile.ts";

type Core = Pick<
  typeof currentCore,
  "createFederation" | "MemoryKvStore" | "encodeTaskPayload" | "decodeTaskPayload"
>;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 150);

const baselineAt = process.argv.indexOf("--baseline");
const baselineFile = (path: string) =>
  pathToFileURL(resolve(process.argv[baselineAt + 1], "packages/core/src", path)).href;
// The baseline is another checkout, so it can only be reached by its path.
const baseline: Core | undefined = baselineAt < 0
  ? undefined
  : await import(baselineFile("mod.ts"));

const documentLoader: DocumentLoader = (url) => {
  const document = preloadedContexts[url];
  if (document == null) return Promise.reject(new Error(`No network in the bench: ${url}`));
  return Promise.resolve({ documentUrl: url, document, contextUrl: null });
};

/** Runs `fn` for about ROUND_MS and returns microseconds per call. */
async function round(fn: () => unknown): Promise<number> {
  let calls = 0;
  let batch = 1;
  const start = performance.now();
  let now = start;
  while (now - start < ROUND_MS) {
    for (let i = 0; i < batch; i++) await fn();
    calls += batch;
    now = performance.now();
    if (now - start < ROUND_MS / 10) batch *= 2;
  }
  return ((now - start) * 1000) / calls;
}

/**
 * Measures several functions in interleaved rounds, after a warm-up, and
 * returns the median microseconds per call of each.
 */
async function compare(cases: Record<string, () => unknown>): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = {};
  for (const [name, fn] of Object.entries(cases)) {
    samples[name] = [];
    await round(fn);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of Object.entries(cases)) samples[name].push(await round(fn));
  }
  return Object.fromEntries(
    Object.entries(samples).map((
      [name, values],
    ) => [name, values.sort((a, b) => a - b)[values.length >> 1]]),
  );
}

const rows: [string, string, string][] = [];
function row(name: string, value: string, note = ""): void {
  rows.push([name, value, note]);
  console.error(`${name}: ${value} ${note}`);
}
const opsPerSecond = (us: number) => `${Math.round(1e6 / us).toLocaleString("en-US")} ops/s`;
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

function plainPayload() {
  return {
    userId: "alice",
    email: "alice@example.com",
    postIds: ["1", "2", "3", "42", "1337"],
    since: new Date("2024-05-06T07:08:09.010Z"),
    counts: new Map([["likes", 12], ["shares", 3]]),
    options: { digest: true, locale: "en-US", limit: 20 },
  };
}

function createNote(): Create {
  return new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({
      id: new URL("https://example.com/notes/1"),
      attribution: new URL("https://example.com/users/alice"),
      content: "Hello, <b>world</b>! This is a note with a mention.",
      tags: [new Mention({ href: new URL("https://example.com/users/bob"), name: "@bob" })],
    }),
  });
}

function roundTrip(core: Core, value: unknown): () => Promise<unknown> {
  return async () =>
    core.decodeTaskPayload(await core.encodeTaskPayload(value), { documentLoader });
}

const cores: [string, Core][] = [["now", currentCore]];
if (baseline != null) cores.push(["baseline", baseline]);

// --- Plain payloads -------------------------------------------------------
{
  const value = plainPayload();
  const cases: Record<string, () => unknown> = {
    json: () => JSON.parse(JSON.stringify(value)),
  };
  for (const [name, core] of cores) cases[name] = roundTrip(core, value);
  const us = await compare(cases);
  row("plain: JSON.stringify + JSON.parse", opsPerSecond(us.json));
  for (const [name] of cores) {
    row(
      `plain: encode + decode (${name})`,
      opsPerSecond(us[name]),
      `${ratio(us[name], us.json)} JSON`,
    );
  }
}

// --- Vocabulary objects ---------------------------------------------------
// One object per case, reused: the codec keeps nothing between calls, and
// building a Create is not what is measured.
const inbox = await Create.fromJsonLd(await createNote().toJsonLd(), { documentLoader });
const vocabularyCases: [string, object][] = [
  ["Create(Note)", createNote()],
  ["Create(Note) parsed from a document", inbox],
  [
    "Follow",
    new Follow({
      id: new URL("https://example.com/follows/1"),
      actor: new URL("https://example.com/users/alice"),
      object: new URL("https://remote.example/users/bob"),
    }),
  ],
];
for (const [label, object] of vocabularyCases) {
  const value = { activity: object };
  const cls = object.constructor as typeof Create;
  const cases: Record<string, () => unknown> = {
    floor: async () =>
      cls.fromJsonLd(await (object as Create).toJsonLd({ format: "expand" }), { documentLoader }),
  };
  for (const [name, core] of cores) cases[name] = roundTrip(core, value);
  const us = await compare(cases);
  row(
    `${label}: toJsonLd(expand) + fromJsonLd()`,
    opsPerSecond(us.floor),
    "the vocabulary's own cost",
  );
  for (const [name] of cores) {
    row(
      `${label}: encode + decode (${name})`,
      opsPerSecond(us[name]),
      name === "now" ? "" : `now is ${ratio(us[name], us.now)} faster`,
    );
  }
}

// --- A batch sharing one vocabulary object, and the enqueue overhead ------
const passthrough: StandardSchemaV1<unknown, unknown> = {
  "~standard": { version: 1, vendor: "bench", validate: (value) => ({ value }) },
};

/** A queue that accepts messages and drops them: the queue costs nothing. */
class NoOpQueue {
  enqueue(_message: unknown): Promise<void> {
    return Promise.resolve();
  }
  enqueueMany(_messages: unknown[]): Promise<void> {
    return Promise.resolve();
  }
  listen(): Promise<void> {
    return Promise.resolve();
  }
}

{
  const BATCH = 100;
  const batchCases: Record<string, () => unknown> = {};
  const enqueueCases: Record<string, () => unknown> = {};
  const payload = { n: 1 };
  const queue = new NoOpQueue();
  const message = {
    type: "task",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com/",
    taskName: "bench",
    data: '[{"n":1},1]',
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
  };
  enqueueCases.raw = () => queue.enqueue(message);
  for (const [name, core] of cores) {
    const federation = core.createFederation<void>({
      kv: new core.MemoryKvStore(),
      queue: { task: queue },
      manuallyStartQueue: true,
    });
    const task = federation.defineTask("bench", { schema: passthrough, handler() {} });
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    const create = createNote();
    const payloads = Array.from({ length: BATCH }, (_, i) => ({ activity: create, to: i }));
    batchCases[name] = () => ctx.enqueueTaskMany(task, payloads);
    enqueueCases[`${name} enqueueTask`] = () => ctx.enqueueTask(task, payload);
    enqueueCases[`${name} codec`] = () => core.encodeTaskPayload(payload);
  }
  const us = await compare(enqueueCases);
  row("enqueue: raw queue.enqueue()", `${us.raw.toFixed(2)} µs`);
  for (const [name] of cores) {
    const overhead = us[`${name} enqueueTask`] - us.raw - us[`${name} codec`];
    row(
      `enqueue: typed-task overhead (${name})`,
      `${overhead.toFixed(2)} µs`,
      `enqueueTask() ${us[`${name} enqueueTask`].toFixed(2)} µs = codec ${
        us[`${name} codec`].toFixed(2)
      } + raw enqueue ${us.raw.toFixed(2)} + overhead`,
    );
  }
  const batch = await compare(batchCases);
  for (const [name] of cores) {
    row(
      `batch of ${BATCH} payloads sharing one Create (${name})`,
      `${Math.round((BATCH * 1e6) / batch[name]).toLocaleString("en-US")} payloads/s`,
      name === "now" ? "" : `now is ${ratio(batch[name], batch.now)} faster`,
    );
  }
}

// --- Hostile input ----------------------------------------------------------
// Timed per message, not in rounds: the point is that no single message is
// slow.  The baseline is left out: [[-7,4294967295]] takes it minutes.
async function timeDecode(text: string): Promise<number> {
  const start = performance.now();
  try {
    await currentCore.decodeTaskPayload(text, { documentLoader });
  } catch {
    // Refusing is the expected outcome.
  }
  return performance.now() - start;
}

/** Decodes a message several times: the fastest, the median, and the slowest. */
async function timeDecodes(
  text: string,
  times: number,
): Promise<{ min: number; median: number; max: number }> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push(await timeDecode(text));
  samples.sort((a, b) => a - b);
  return {
    min: samples[0],
    median: samples[samples.length >> 1],
    max: samples[samples.length - 1],
  };
}

{
  const sparse = await timeDecodes("[[-7,4294967295]]", 21);
  row(
    "hostile: decode [[-7,4294967295]]",
    `${sparse.median.toFixed(3)} ms`,
    `median of 21; slowest ${sparse.max.toFixed(3)} ms`,
  );
  const valid = await Promise.all(
    [plainPayload(), { activity: createNote() }].map((value) =>
      currentCore.encodeTaskPayload(value)
    ),
  );
  const corpus = generateHostileMessages(0x5eed_f00d, 3_000, valid);
  // Each message's fastest of three decodes: what the message costs, rather
  // than the first-call compilation or a garbage collection (or another
  // process on a shared machine) that happened to land on it.
  const times: number[] = [];
  for (const text of corpus) times.push((await timeDecodes(text, 3)).min);
  const sorted = [...times].sort((a, b) => a - b);
  const slowest = times.indexOf(sorted[sorted.length - 1]);
  row(
    `hostile: fuzz corpus, ${corpus.length} messages`,
    `p50 ${sorted[sorted.length >> 1].toFixed(3)} ms, p99 ${
      sorted[Math.floor(sorted.length * 0.99)].toFixed(3)
    } ms, max ${sorted[sorted.length - 1].toFixed(2)} ms`,
    `slowest: ${
      slowest < handmadeHostileMessages.length ? `hand-made #${slowest}` : "generated"
    }, ${corpus[slowest].length} characters`,
  );
}

const runtimes = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
const runtime = runtimes.Bun != null
  ? `Bun ${runtimes.Bun.version}`
  : runtimes.Deno != null
  ? `Deno ${runtimes.Deno.version.deno}`
  : `Node.js ${process.version}`;
console.log(`\n${runtime}\n`);
const width = Math.max(...rows.map(([name]) => name.length));
const valueWidth = Math.max(...rows.map(([, value]) => value.length));
for (const [name, value, note] of rows) {
  console.log(`${name.padEnd(width)}  ${value.padStart(valueWidth)}  ${note}`.trimEnd());
}
