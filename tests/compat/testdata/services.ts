// Where the engines the compatibility tests use listen (the same defaults
// and environment variables as the backends' own tests), and the
// namespaces that keep each test's keys and tables apart.
import process from "node:process";

/** The Redis server. */
export const REDIS_URL: string = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** The PostgreSQL server. */
export const POSTGRES_URL: string = process.env.POSTGRES_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

/** A fresh name such as `fedwork_compat_3f9a0c1b2d4e`, usable as a table name and key prefix. */
export function createNamespace(): string {
  return `fedwork_compat_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}
