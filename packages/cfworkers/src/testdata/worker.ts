// The Worker the cfworkers tests run in Miniflare (workerd with local KV and
// Queues).  Routes:
//   POST /kv       runs one KvStore call: { store, prefix, op, key, value, expected, ttlMs }
//                  on a WorkersKvStore (store "kv", keys under prefix) or a
//                  D1KvStore (store "d1", prefix is the table)
//   POST /cleanup  deletes every KV key under { prefix }, or drops the D1 table
//   POST /enqueue  enqueues a typed task carrying a Note:
//                  { task, run, content, failTimes, delaySeconds, deduplicationKey }
//   GET  /runs?run=…  what the task's attempts recorded
//   GET  /retried  how many messages processQueueBatch() handed back with retry()
//   GET  /failed?task=…  the failed-task records of a task: { reason, attempts }[]
// The queue() handler passes each batch to processQueueBatch().  The
// federation is built in the first event, not at the top level, because
// Workers forbid timers and random values in the global scope.
import { Note } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  type KvKey,
  type RetryPolicy,
  toTemporalDuration,
} from "@fedwork/core";
import { z } from "zod";
import {
  D1KvStore,
  processQueueBatch,
  type WorkersD1Database,
  type WorkersKvNamespace,
  WorkersKvStore,
  type WorkersMessageBatch,
  WorkersMessageQueue,
  type WorkersQueue,
} from "../mod.ts";

interface Env {
  readonly KV: WorkersKvNamespace & { get(key: string): Promise<string | null> };
  readonly QUEUE: WorkersQueue;
  readonly DB: WorkersD1Database;
  /** `"d1"` to give the federation a D1KvStore instead of a WorkersKvStore. */
  readonly FEDERATION_STORE?: string;
}

/** A test's request for one KvStore call. */
interface KvCall {
  readonly store: "kv" | "d1";
  readonly prefix: string;
  readonly op: "get" | "getMany" | "set" | "setMany" | "delete" | "list" | "cas";
  readonly key?: KvKey;
  readonly keys?: readonly KvKey[];
  readonly entries?: readonly { key: KvKey; value: unknown; ttlMs?: number }[];
  readonly value?: unknown;
  readonly expected?: unknown;
  readonly ttlMs?: number;
}

/** What one attempt of a task recorded. */
interface RunRecord {
  readonly attempt: number;
  readonly at: number;
  readonly content: string;
  readonly noteId: string | null;
}

const payload = z.object({
  run: z.string(),
  note: z.instanceof(Note),
  failTimes: z.number(),
});

// The failing attempt's retry comes back after a second.
const retryAfterASecond: RetryPolicy = ({ attempts }) =>
  attempts <= 3 ? toTemporalDuration({ seconds: 1 }) : null;

// A delay no Cloudflare queue takes, so that the retry cannot be sent and
// processQueueBatch() hands the message back with message.retry().
const retryAfterADay: RetryPolicy = () => toTemporalDuration({ hours: 24 });

let built: ReturnType<typeof buildFederation> | undefined;

function build(env: Env): ReturnType<typeof buildFederation> {
  built ??= buildFederation(env);
  return built;
}

function buildFederation(env: Env) {
  const federation = createFederation<Env>({
    kv: env.FEDERATION_STORE === "d1"
      ? new D1KvStore(env.DB)
      : new WorkersKvStore(env.KV, { prefix: "fedwork/" }),
    queue: new WorkersMessageQueue(env.QUEUE),
    manuallyStartQueue: true,
  });
  const handler = async (ctx: { data: Env }, data: z.infer<typeof payload>) => {
    const kv = ctx.data.KV;
    const attempt = Number(await kv.get(`count/${data.run}`) ?? "0") + 1;
    await kv.put(`count/${data.run}`, String(attempt));
    const record: RunRecord = {
      attempt,
      at: Date.now(),
      content: String(data.note.content),
      noteId: data.note.id?.href ?? null,
    };
    await kv.put(`run/${data.run}/${attempt}`, JSON.stringify(record));
    if (attempt <= data.failTimes) throw new Error(`Planned failure of attempt ${attempt}.`);
  };
  const tasks = {
    flaky: federation.defineTask("flaky-note", {
      schema: payload,
      retryPolicy: retryAfterASecond,
      handler,
    }),
    unsendable: federation.defineTask("unsendable-retry-note", {
      schema: payload,
      retryPolicy: retryAfterADay,
      handler,
    }),
    // Handed back with message.retry() after every failure (its retry
    // cannot be sent), so Cloudflare's attempts climb: quarantined once
    // they pass 2.
    poison: federation.defineTask("poison-note", {
      schema: payload,
      retryPolicy: retryAfterADay,
      maxDeliveries: 2,
      handler,
    }),
  };
  return { federation: federation as Federation<Env>, tasks };
}

async function callKv(env: Env, call: KvCall): Promise<unknown> {
  const store = call.store === "d1"
    ? new D1KvStore(env.DB, { table: call.prefix })
    : new WorkersKvStore(env.KV, { prefix: call.prefix });
  const ttl = call.ttlMs == null ? {} : { ttl: { milliseconds: call.ttlMs } };
  switch (call.op) {
    case "get":
      return { value: await store.get(call.key!) };
    case "getMany":
      // JSON has no undefined: each value travels in a one-element array,
      // an absent one as an empty array.
      return {
        found: (await store.getMany(call.keys!)).map((value) => value === undefined ? [] : [value]),
      };
    case "set":
      await store.set(call.key!, call.value, ttl);
      return {};
    case "setMany":
      await store.setMany(call.entries!.map(({ key, value, ttlMs }) => ({
        key,
        value,
        ...(ttlMs == null ? {} : { options: { ttl: { milliseconds: ttlMs } } }),
      })));
      return {};
    case "cas":
      if (!("cas" in store)) throw new TypeError("This store has no cas().");
      return { swapped: await store.cas(call.key!, call.expected, call.value, ttl) };
    case "delete":
      await store.delete(call.key!);
      return {};
    case "list": {
      const entries = [];
      for await (const entry of call.key == null ? store.list() : store.list(call.key)) {
        entries.push(entry);
      }
      return { entries };
    }
  }
}

async function listNames(env: Env, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.KV.list({ prefix, ...(cursor ? { cursor } : {}) });
    names.push(...page.keys.map((key) => key.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return names;
}

async function route(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === "POST" && url.pathname === "/kv") {
    return Response.json(await callKv(env, await request.json() as KvCall));
  }
  if (request.method === "POST" && url.pathname === "/cleanup") {
    const { store, prefix } = await request.json() as { store: "kv" | "d1"; prefix: string };
    if (store === "d1") await env.DB.prepare(`DROP TABLE IF EXISTS ${prefix}`).run();
    else for (const name of await listNames(env, prefix)) await env.KV.delete(name);
    return Response.json({});
  }
  if (request.method === "POST" && url.pathname === "/enqueue") {
    const body = await request.json() as {
      task: "flaky" | "unsendable" | "poison";
      run: string;
      content: string;
      failTimes: number;
      delaySeconds?: number;
      deduplicationKey?: string;
    };
    const { federation, tasks } = build(env);
    const ctx = federation.createContext(new URL(request.url), env);
    const note = new Note({
      id: new URL(`https://example.com/notes/${body.run}`),
      content: body.content,
    });
    const enqueuedAt = Date.now();
    const result = await ctx.enqueueTask(
      tasks[body.task],
      { run: body.run, note, failTimes: body.failTimes },
      {
        ...(body.delaySeconds == null ? {} : { delay: { seconds: body.delaySeconds } }),
        ...(body.deduplicationKey == null ? {} : { deduplicationKey: body.deduplicationKey }),
      },
    );
    return Response.json({ enqueuedAt, status: result.status });
  }
  if (request.method === "GET" && url.pathname === "/runs") {
    const run = url.searchParams.get("run")!;
    const records: RunRecord[] = [];
    for (const name of await listNames(env, `run/${run}/`)) {
      records.push(JSON.parse((await env.KV.get(name))!));
    }
    return Response.json(records.sort((a, b) => a.attempt - b.attempt));
  }
  if (request.method === "GET" && url.pathname === "/failed") {
    const { federation } = build(env);
    const page = await federation.listFailedTasks({ taskName: url.searchParams.get("task")! });
    return Response.json(
      page.records.map((record) => ({ reason: record.reason, attempts: record.attempts })),
    );
  }
  if (request.method === "GET" && url.pathname === "/retried") {
    return Response.json((await listNames(env, "retried/")).length);
  }
  return new Response("Not found", { status: 404 });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    try {
      return await route(request, env);
    } catch (error) {
      return Response.json({ error: String(error), name: (error as Error).name }, {
        status: 500,
      });
    }
  },

  async queue(batch: WorkersMessageBatch, env: Env): Promise<void> {
    const results = await processQueueBatch(batch, {
      federation: build(env).federation,
      contextData: env,
      retryDelay: { seconds: 1 },
    });
    for (const result of results) {
      if (result.result === "retried") await env.KV.put(`retried/${result.id}`, "1");
    }
  },
};
