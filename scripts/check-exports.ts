// Compares the names every published entry point exports with the committed
// snapshot, packages/core/exports.snapshot.txt, so that each new export (and
// each removed one) is a reviewed decision rather than a side effect of an
// `export *`.  The names are read with the TypeScript compiler, following
// every re-export chain, values and types alike.
//
// Usage: node scripts/check-exports.ts [--update]
//   --update  rewrites the snapshot from the sources; review its diff before
//             committing it
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import process from "node:process";
import ts from "typescript";

const root = resolve(import.meta.dirname!, "..");
const SNAPSHOT = join(root, "packages", "core", "exports.snapshot.txt");
// The workspace's test helper, published under its own name, is no part of
// Fedwork's API.
const UNLISTED_PACKAGES = new Set(["fixture"]);

interface EntryPoint {
  /** The specifier users import, such as `@fedwork/core/queue-kit`. */
  specifier: string;
  path: string;
}

async function entryPoints(): Promise<EntryPoint[]> {
  const found: EntryPoint[] = [];
  const packages = await readdir(join(root, "packages"), { withFileTypes: true });
  for (const entry of packages.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || UNLISTED_PACKAGES.has(entry.name)) continue;
    const dir = join(root, "packages", entry.name);
    const manifest = JSON.parse(await readFile(join(dir, "deno.json"), "utf8")) as {
      name: string;
      exports: string | Record<string, string>;
    };
    const exports = typeof manifest.exports === "string"
      ? { ".": manifest.exports }
      : manifest.exports;
    for (const [subpath, file] of Object.entries(exports)) {
      found.push({
        specifier: subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        path: join(dir, file),
      });
    }
  }
  return found;
}

/** One line per exported name: `<specifier> <name>`, sorted. */
export async function listExports(): Promise<string[]> {
  const entries = await entryPoints();
  const configPath = join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram(entries.map((e) => e.path), { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const lines: string[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry.path);
    const module = source == null ? undefined : checker.getSymbolAtLocation(source);
    if (module == null) throw new Error(`${relative(root, entry.path)}: no module found`);
    for (const symbol of checker.getExportsOfModule(module)) {
      lines.push(`${entry.specifier} ${symbol.getName()}`);
    }
  }
  return lines.sort();
}

if (import.meta.main) {
  const update = process.argv.includes("--update");
  const actual = await listExports();
  const text = `${actual.join("\n")}\n`;
  if (update) {
    await writeFile(SNAPSHOT, text);
    console.log(`${relative(root, SNAPSHOT)}: ${actual.length} exported names written.`);
    process.exit(0);
  }
  let expected: string[] = [];
  try {
    expected = (await readFile(SNAPSHOT, "utf8")).split("\n").filter((line) => line !== "");
  } catch {
    // A missing snapshot is reported below as every name being new.
  }
  const expectedSet = new Set(expected);
  const actualSet = new Set(actual);
  const added = actual.filter((line) => !expectedSet.has(line));
  const removed = expected.filter((line) => !actualSet.has(line));
  if (added.length === 0 && removed.length === 0) {
    const counts = new Map<string, number>();
    for (const line of actual) {
      const specifier = line.slice(0, line.indexOf(" "));
      counts.set(specifier, (counts.get(specifier) ?? 0) + 1);
    }
    console.log(
      [...counts].map(([specifier, count]) => `${specifier}: ${count}`).join(", "),
    );
    process.exit(0);
  }
  for (const line of added) console.error(`+ ${line}`);
  for (const line of removed) console.error(`- ${line}`);
  console.error(
    `\nThe public API differs from ${relative(root, SNAPSHOT)} ` +
      `(${added.length} added, ${removed.length} removed; listed above).  ` +
      "Each export is a promise to every user: if the change is meant, run " +
      "`node scripts/check-exports.ts --update`, review the snapshot's diff " +
      "and commit it with the change; if not, fix the export list in mod.ts.",
  );
  process.exit(1);
}
