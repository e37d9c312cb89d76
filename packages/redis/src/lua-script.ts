import { createHash } from "node:crypto";
import type { RedisClient } from "./connection.ts";

/**
 * A Lua script run with `EVALSHA`, falling back to `EVAL` (which also
 * caches it on the server) when the server does not know the script yet,
 * e.g. after a restart or `SCRIPT FLUSH`.
 */
export class LuaScript {
  readonly source: string;
  readonly sha1: string;
  readonly keyCount: number;

  constructor(source: string, keyCount: number) {
    this.source = source;
    this.keyCount = keyCount;
    this.sha1 = createHash("sha1").update(source).digest("hex");
  }

  /** Runs the script with `keys` (exactly `keyCount` of them) and `args`. */
  async run(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, this.keyCount, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return await redis.eval(this.source, this.keyCount, ...keys, ...args);
    }
  }
}
