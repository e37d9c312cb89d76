// Checks that the packages say which version they are, the same way
// everywhere: every published package's package.json and deno.json carry
// one version, every workspace manifest that depends on a published package
// asks for exactly that version, core's FEDWORK_VERSION (the User-Agent and
// the tracer's scope) is that version, and no `@since` tag in the sources
// names a later one.
//
// Usage: node scripts/check-versions.ts   (exits 1 naming every mismatch)
import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import process from "node:process";
import { PUBLISHED_PACKAGES } from "./build.ts";

const root = resolve(import.meta.dirname!, "..");
const problems: string[] = [];

interface Manifest {
  name: string;
  version?: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8")) as Manifest;

const core = await readJson(join(root, "packages", "core", "package.json"));
const version = core.version!;
const published = new Set<string>();
for (const name of PUBLISHED_PACKAGES) {
  for (const file of ["package.json", "deno.json"]) {
    const manifest = await readJson(join(root, "packages", name, file));
    published.add(manifest.name);
    if (manifest.version !== version) {
      problems.push(`packages/${name}/${file} says ${manifest.version}, core says ${version}`);
    }
  }
}

const workspace = await readJson(join(root, "package.json"));
for (const folder of workspace.workspaces ?? []) {
  const manifest = await readJson(join(root, folder, "package.json"));
  for (const field of ["dependencies", "devDependencies", "peerDependencies"] as const) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      if (published.has(dependency) && range !== version) {
        problems.push(`${folder}/package.json asks for ${dependency} ${range}, not ${version}`);
      }
    }
  }
}

const versionFile = join(root, "packages", "core", "src", "http", "user-agent.ts");
const declared = /FEDWORK_VERSION = "([^"]+)"/.exec(await readFile(versionFile, "utf8"))?.[1];
if (declared !== version) {
  problems.push(`${relative(root, versionFile)} says FEDWORK_VERSION ${declared}, not ${version}`);
}

/** -1, 0 or 1 as semantic version a is before, equal to or after b. */
function compare(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split(".").map((part) => Number.parseInt(part, 10)));
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  }
  return 0;
}

async function* sources(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}
for (const name of PUBLISHED_PACKAGES) {
  for await (const file of sources(join(root, "packages", name, "src"))) {
    const text = await readFile(file, "utf8");
    for (const match of text.matchAll(/@since (\d+\.\d+\.\d+)/g)) {
      if (compare(match[1], version) > 0) {
        const line = text.slice(0, match.index).split("\n").length;
        problems.push(`${relative(root, file)}:${line}: @since ${match[1]} is after ${version}`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`versions: ${problems.length} mismatch(es):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`versions: every published package is ${version}, and so is what depends on it.`);
