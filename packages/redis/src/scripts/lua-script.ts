import { createHash } from "node:crypto";
import type { RedisClient } from "../connection.ts";

/**
 * A Lua script run with `EVALSHA`, falling back to `EVAL` (which also
 * caches it on the server) when the server does not know the script yet,
 * e.g. after a restart or `SCRIPT FLUSH`.
 *
 * The script's header names its keys, one line each (`-- KEYS[1] = ...`);
 * the number of keys passed to Redis is taken from there, so the header
 * cannot drift from how the script is called.
 */
export class LuaScript {
  readonly source: string;
  readonly sha1: string;
  readonly keyCount: number;

  /**
   * @param source The Lua text, with a `-- KEYS[i] = ...` line per key.
   * @throws {TypeError} When the header's key numbers are not 1..n.
   */
  constructor(source: string) {
    this.source = source;
    this.sha1 = createHash("sha1").update(source).digest("hex");
    const declared = [...source.matchAll(/^-- KEYS\[(\d+)\] = /gm)].map((m) => Number(m[1]));
    if (declared.some((n, i) => n !== i + 1)) {
      throw new TypeError(
        `The header of a Lua script must list KEYS[1] to KEYS[n] in order; got ` +
          `${declared.join(", ")}.`,
      );
    }
    this.keyCount = declared.length;
  }

  /** Runs the script with `keys` (exactly `keyCount` of them) and `args`. */
  async run(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    if (keys.length !== this.keyCount) {
      throw new TypeError(`The script takes ${this.keyCount} keys; got ${keys.length}.`);
    }
    try {
      return await redis.evalsha(this.sha1, this.keyCount, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return await redis.eval(this.source, this.keyCount, ...keys, ...args);
    }
  }
}
