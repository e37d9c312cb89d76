// The app scripts/check-packaging.ts runs in a scratch project, on Node.js,
// Deno and Bun, against the packed tarballs: what a user would write after
// `npm install @fedwork/core @fedwork/sqlite`.  It runs one typed task end to
// end on a SQLite queue, with a vocabulary object, a Date and an ISO 8601
// delay, asks @fedwork/dashboard's API for the queues, and prints one line
// the check looks for.
import { Note } from "@fedify/vocab";
import { createFederation } from "@fedwork/core";
import { createDashboard } from "@fedwork/dashboard";
import { SqliteKvStore, SqliteMessageQueue } from "@fedwork/sqlite";
import { z } from "zod";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const dir = await mkdtemp(join(tmpdir(), "fedwork-app-"));
const path = join(dir, "app.sqlite");
const queue = new SqliteMessageQueue({ path });
const federation = createFederation<void>({ kv: new SqliteKvStore({ path }), queue });

let resolve!: (result: string) => void;
const ran = new Promise<string>((r) => resolve = r);
const greet = federation.defineTask("greet", {
  schema: z.object({ note: z.instanceof(Note), at: z.date() }),
  handler(ctx, { note, at }) {
    resolve(`${note.content} at ${at.toISOString()} (attempt ${ctx.task.attempt})`);
  },
});

const ctx = federation.createContext(new URL("https://example.com/"), undefined);
const note = new Note({ id: new URL("https://example.com/notes/1"), content: "Hello" });
await ctx.enqueueTask(greet, { note, at: new Date(0) }, { delay: "PT0.1S" });

const timeout = setTimeout(() => {
  process.stderr.write("The task did not run within 30 seconds.\n");
  process.exit(1);
}, 30_000);
const result = await ran;
clearTimeout(timeout);
// The dashboard's API answers from the packed @fedwork/dashboard.
const dashboard = createDashboard(federation, { authorize: () => true, basePath: "/ops" });
const overview = await dashboard(new Request("https://example.com/ops/api/overview"));
if (overview.status !== 200) throw new Error(`The dashboard answered ${overview.status}.`);
const { queues } = await overview.json() as { queues: unknown[] };
const runtime = "Deno" in globalThis ? "Deno" : "Bun" in globalThis ? "Bun" : "Node.js";
console.log(
  `packaged task ran on ${runtime}: ${result}; the dashboard lists ${queues.length} queues`,
);
await queue[Symbol.asyncDispose]();
await rm(dir, { recursive: true, force: true });
process.exit(0);
