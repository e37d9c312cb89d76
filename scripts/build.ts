// Builds the published packages: for each, `tsc -p tsconfig.build.json`
// compiles what its entry points import into dist/ (JavaScript, .d.ts and
// source maps; see tsconfig.build.json).  A package's @fedwork dependencies
// are built first, because its declarations are checked against theirs.
//
// The workspace itself never needs a build: its tests run the .ts sources
// through the "fedwork-source" export condition (see scripts/test.ts).
//
// Usage: node scripts/build.ts [package…]
//   With no names, builds every published package, or, when run from inside
//   a package directory (npm runs it there as the package's `prepack`
//   script), that package.  Names are directory names: core, sqlite…
import { spawn } from "node:child_process";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import process from "node:process";

const root = resolve(import.meta.dirname!, "..");

/** The published packages, each after the ones it depends on. */
export const PUBLISHED_PACKAGES = [
  "core",
  "testing",
  "sqlite",
  "denokv",
  "cfworkers",
  "redis",
  "postgres",
  "amqp",
  "dashboard",
  "hono",
  "express",
  "cli",
];

async function workspaceDependencies(name: string): Promise<string[]> {
  const manifest = JSON.parse(
    await readFile(join(root, "packages", name, "package.json"), "utf8"),
  ) as { dependencies?: Record<string, string> };
  return Object.keys(manifest.dependencies ?? {})
    .filter((dependency) => dependency.startsWith("@fedwork/"))
    .map((dependency) => dependency.slice("@fedwork/".length));
}

/** `names` and what they depend on, in build order. */
async function withDependencies(names: readonly string[]): Promise<string[]> {
  const wanted = new Set<string>();
  const visit = async (name: string): Promise<void> => {
    if (wanted.has(name)) return;
    if (!PUBLISHED_PACKAGES.includes(name)) {
      throw new Error(
        `Unknown package ${name}; the packages are ${PUBLISHED_PACKAGES.join(", ")}.`,
      );
    }
    wanted.add(name);
    for (const dependency of await workspaceDependencies(name)) await visit(dependency);
  };
  for (const name of names) await visit(name);
  return PUBLISHED_PACKAGES.filter((name) => wanted.has(name));
}

/**
 * Rewrites the relative `.ts` specifiers tsc leaves in declarations to
 * `.js` (`rewriteRelativeImportExtensions` rewrites only the JavaScript), so
 * that every resolver, not only TypeScript's extension substitution, finds
 * the `.d.ts` beside each `.js`.
 */
async function rewriteDeclarationSpecifiers(dir: string): Promise<void> {
  const specifier = /((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]*)\.ts\2/g;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue;
    const path = join(entry.parentPath, entry.name);
    const text = await readFile(path, "utf8");
    const rewritten = text.replace(specifier, "$1$2$3.js$2");
    if (rewritten !== text) await writeFile(path, rewritten);
  }
}

async function compile(name: string): Promise<void> {
  await runTsc(name);
  await rewriteDeclarationSpecifiers(join(root, "packages", name, "dist"));
}

function runTsc(name: string): Promise<void> {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const project = join(root, "packages", name, "tsconfig.build.json");
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [tsc, "-p", project], {
      cwd: root,
      stdio: "inherit",
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`Building packages/${name} failed (tsc exited with ${code}).`));
    });
  });
}

/**
 * Builds the named packages and their @fedwork dependencies: core first,
 * then the rest two at a time, each after its dependencies.
 * @param names Package directory names; every published package when empty.
 */
export async function buildPackages(names: readonly string[] = []): Promise<void> {
  const order = await withDependencies(names.length > 0 ? names : PUBLISHED_PACKAGES);
  await Promise.all(order.map((name) =>
    rm(join(root, "packages", name, "dist"), {
      recursive: true,
      force: true,
    })
  ));
  const [first, ...rest] = order;
  if (first === "core") await compile(first);
  else rest.unshift(first);
  // Two at a time: the machines this runs on have few cores.  A package
  // that depends on another besides core (the CLI on the dashboard) waits
  // for its build: the order lists dependencies first, so it has started.
  const queue = [...rest];
  const compiled = new Map<string, Promise<void>>();
  const worker = async () => {
    for (let name = queue.shift(); name != null; name = queue.shift()) {
      const dependencies = (await workspaceDependencies(name)).map((dependency) =>
        compiled.get(dependency)
      );
      const done = Promise.all(dependencies).then(() => compile(name));
      compiled.set(name, done);
      await done;
    }
  };
  await Promise.all([worker(), worker()]);
}

if (import.meta.main) {
  let names = process.argv.slice(2);
  const cwd = relative(join(root, "packages"), process.cwd());
  if (names.length === 0 && !cwd.startsWith("..") && cwd !== "") names = [cwd.split(sep)[0]];
  const started = performance.now();
  await buildPackages(names);
  console.log(
    `Built ${names.length > 0 ? names.join(", ") : "every package"} in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );
}
