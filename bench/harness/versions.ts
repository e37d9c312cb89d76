// Versions for the report: Node.js, each engine a scenario used (asked of
// the server itself), and each peer package as installed.
import { connect } from "amqplib";
import { Redis } from "ioredis";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import postgres from "postgres";
import type { Scenario, SystemSpec } from "./systems.ts";

async function packageVersion(root: string, name: string): Promise<string | undefined> {
  for (const dir of [join(root, "bench", "node_modules"), join(root, "node_modules")]) {
    try {
      const json = JSON.parse(await readFile(join(dir, name, "package.json"), "utf8"));
      return json.version;
    } catch {
      // Not installed in this folder.
    }
  }
  return undefined;
}

async function attempt(what: () => Promise<string>): Promise<string> {
  try {
    return await what();
  } catch (error) {
    return `unknown (${(error as Error).message})`;
  }
}

/** Collects the versions; a server that cannot be asked reads "unknown". */
export async function collectVersions(
  root: string,
  scenarios: readonly Scenario[],
  specs: readonly SystemSpec[],
): Promise<Record<string, string>> {
  const versions: Record<string, string> = { "Node.js": process.version };
  if (scenarios.includes("redis")) {
    versions.Redis = await attempt(async () => {
      const client = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
      try {
        const info = await client.info("server");
        return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
      } finally {
        client.disconnect();
      }
    });
  }
  if (scenarios.includes("postgres")) {
    versions.PostgreSQL = await attempt(async () => {
      const sql = postgres(process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test", {
        max: 1,
      });
      try {
        const [row] = await sql<{ server_version: string }[]>`SHOW server_version`;
        return row.server_version;
      } finally {
        await sql.end({ timeout: 5 });
      }
    });
  }
  if (scenarios.includes("amqp")) {
    versions.RabbitMQ = await attempt(async () => {
      const connection = await connect(
        process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672",
      );
      try {
        const props = (connection.connection as unknown as {
          serverProperties?: { version?: unknown };
        }).serverProperties;
        return String(props?.version ?? "unknown");
      } finally {
        await connection.close();
      }
    });
  }
  if (scenarios.includes("sqlite")) {
    versions.SQLite = await attempt(async () => {
      const { DatabaseSync } = await import("node:sqlite");
      const db = new DatabaseSync(":memory:");
      try {
        const row = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
        return `${row.v} (node:sqlite)`;
      } finally {
        db.close();
      }
    });
  }
  for (const spec of specs) {
    if (spec.packageName == null || versions[spec.packageName] != null) continue;
    const version = await packageVersion(root, spec.packageName);
    if (version != null) versions[spec.packageName] = version;
  }
  return versions;
}
