import { assert, assertEquals, test } from "@fedify/fixture";
import { Redis } from "ioredis";
import { REDIS_URL } from "../testdata/conformance-factory.ts";
import { LuaScript } from "./lua-script.ts";
import * as queueScripts from "./message-queue.ts";
import { kvCasLua } from "./kv-cas.lua.ts";

// Every script the queue module exports, found by type so that a new one
// cannot be left out, and the store's.
const allScripts: Record<string, LuaScript> = {
  ...Object.fromEntries(
    Object.entries(queueScripts).filter(([, value]) => value instanceof LuaScript),
  ),
  kvCas: new LuaScript(kvCasLua),
};

test("Every Lua script names the keys it uses in its header", () => {
  for (const [name, script] of Object.entries(allScripts)) {
    const code = script.source.split("\n").filter((line) => !line.startsWith("--")).join("\n");
    const used = [...code.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
    assert(used.length > 0, `${name} uses no keys`);
    assertEquals(Math.max(...used), script.keyCount, `${name} uses undeclared keys`);
    for (const [, n] of code.matchAll(/ARGV\[(\d+)\]/g)) {
      assert(
        new RegExp(`^-- ARGV\\[${n}( \\.\\.|\\]| )`, "m").test(script.source),
        `${name} uses ARGV[${n}] without naming it in its header`,
      );
    }
  }
});

test("Every Lua script compiles on the Redis server", async () => {
  const redis = new Redis(REDIS_URL);
  try {
    for (const script of Object.values(allScripts)) {
      assertEquals(await redis.script("LOAD", script.source), script.sha1);
    }
  } finally {
    redis.disconnect();
  }
});
