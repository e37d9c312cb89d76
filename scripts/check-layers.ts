// Keeps the architecture honest (see docs/architecture.md):
// - no cycle of runtime imports among the source files of any package
//   (`import type` is erased before anything runs, and mutually recursive
//   interfaces such as Context and Federation legitimately refer to each
//   other; their layering is still checked below);
// - inside @fedwork/core, no folder imports a folder of its own layer or a
//   higher one: time <- kv, queue, retry, http <- processing <- tasks,
//   activitypub <- operator <- federation <- mod.ts, type-only imports
//   included (an interface is as much a dependency as a function);
// - inside @fedwork/core, every file in a cycle of imports (type-only ones
//   included) holds interfaces only, no runtime code, and the largest such
//   cycle does not grow past MAX_CORE_CYCLE_FILES.
// Tests (*.test.ts) and test data are left out: integration tests may cross
// layers, and nothing imports them, so they cannot close a cycle.
//
// Imports are read with a regular expression over every source file rather
// than with `deno info`, which only walks what an entry point reaches (a
// file nobody imports yet would escape the check) and costs a process per
// root.  Only relative specifiers matter here; package imports cannot form
// a cycle inside a package.
//
// Usage: node scripts/check-layers.ts [--cycles]
//   exits 1 and names every violation; reports the size of the largest
//   cycle of imports in core counting type-only ones (--cycles lists them).
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";

const root = resolve(import.meta.dirname!, "..");

/** Core's folders by layer: a folder may import only lower layers. */
const CORE_LAYERS: Record<string, number> = {
  time: 0,
  options: 0.5, // option checks (names, durations, counts): on time/, under all that takes options
  kv: 1,
  queue: 1,
  retry: 1,
  pubsub: 1,
  http: 1, // reading peers' bodies within limits: shared by activitypub/ and operator/webhooks/
  processing: 2,
  tasks: 3,
  activitypub: 3,
  operator: 4, // features operators use: records, schedules, webhooks, host health, monitoring
  federation: 5,
};
const CORE_ROOT_LAYER = 6; // packages/core/src/*.ts (mod.ts)

/**
 * The most files one cycle of imports in core may tie together, type-only
 * imports included: the interfaces of the federation (Federation, Context,
 * the callbacks, the registry, Federatable) refer to each other, but the
 * cycle must not grow.  Lower it when a cycle shrinks.
 */
const MAX_CORE_CYCLE_FILES = 5;

async function sourceFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "testdata") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...await sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

const IMPORT =
  /(?:^|[\s;])(import|export)(\s+type)?\s([^;]*?)from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

interface Import {
  readonly target: string;
  /** Whether only types are imported (erased at run time). */
  readonly typeOnly: boolean;
}

async function relativeImports(file: string): Promise<Import[]> {
  // Comments may show example imports; drop them before scanning.
  const text = (await readFile(file, "utf8"))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  const imports: Import[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[4] ?? match[5];
    if (!specifier.startsWith(".")) continue;
    // `import { type A, type B }` is type-only too.
    const names = match[3] ?? "";
    const inlineTypesOnly = /^\s*\{[^}]*\}\s*$/.test(names) &&
      names.replace(/[{}\s]/g, "").split(",").filter(Boolean)
        .every((name) => name.startsWith("type"));
    imports.push({
      target: resolve(dirname(file), specifier),
      typeOnly: match[2] != null || (names !== "" && inlineTypesOnly),
    });
  }
  return imports;
}

const RUNTIME_DECLARATION =
  /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function|class|const|let|var|enum)\b/m;

/**
 * Whether a file holds code that runs: a declaration with a value, or an
 * import or re-export that is not type-only.  A file without any is made
 * of interfaces and types only, and may sit in a cycle of type-only
 * imports without tying any implementation into it.
 */
async function hasRuntimeCode(file: string, imports: readonly Import[]): Promise<boolean> {
  if (imports.some((i) => !i.typeOnly)) return true;
  const text = (await readFile(file, "utf8"))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  return RUNTIME_DECLARATION.test(text);
}

function coreLayerOf(file: string, coreSrc: string): { folder: string; layer: number } | null {
  const path = relative(coreSrc, file);
  if (path.startsWith("..")) return null;
  const [first, ...rest] = path.split(/[\\/]/);
  if (rest.length === 0) return { folder: "(root)", layer: CORE_ROOT_LAYER };
  const layer = CORE_LAYERS[first];
  if (layer === undefined) return { folder: first, layer: -1 };
  return { folder: first, layer };
}

function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "visiting");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      const seen = state.get(next);
      if (seen === "visiting") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/**
 * The strongly connected components of `graph` with more than one file
 * (Tarjan's algorithm, iterative so that a deep graph cannot overflow the
 * stack): each is a set of files that all reach each other.
 */
function stronglyConnected(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = (graph.get(frame.node) ?? []).filter((target) => graph.has(target));
      if (frame.next < edges.length) {
        const target = edges[frame.next++];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) components.push(component);
      }
    }
  }
  return components;
}

const problems: string[] = [];
const report: string[] = [];
const packagesDir = join(root, "packages");
for (const entry of await readdir(packagesDir, { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  const src = join(packagesDir, entry.name, "src");
  let files: string[];
  try {
    files = await sourceFiles(src);
  } catch {
    continue;
  }
  const imports = new Map<string, Import[]>();
  for (const file of files) imports.set(file, await relativeImports(file));
  const runtimeGraph = new Map<string, string[]>();
  for (const [file, list] of imports) {
    runtimeGraph.set(file, list.filter((i) => !i.typeOnly).map((i) => i.target));
  }
  for (const cycle of findCycles(runtimeGraph)) {
    problems.push(`import cycle: ${cycle.map((file) => relative(root, file)).join(" -> ")}`);
  }
  if (entry.name !== "core") continue;
  // Type-only imports do not run, but a cycle through them still ties the
  // files together for a reader: report the largest such cycle.
  const typeGraph = new Map<string, string[]>();
  for (const [file, list] of imports) typeGraph.set(file, list.map((i) => i.target));
  const components = stronglyConnected(typeGraph).sort((a, b) => b.length - a.length);
  report.push(
    `largest cycle of imports (type-only included) in @fedwork/core: ` +
      `${components[0]?.length ?? 0} files`,
  );
  if ((components[0]?.length ?? 0) > MAX_CORE_CYCLE_FILES) {
    problems.push(
      `a cycle of imports (type-only included) ties ${components[0].length} files of ` +
        `@fedwork/core together, more than ${MAX_CORE_CYCLE_FILES}: ` +
        components[0].map((file) => relative(src, file)).sort().join(", ") +
        "; move the interfaces the files share into a file of interfaces only",
    );
  }
  for (const component of components) {
    for (const file of component) {
      if (!await hasRuntimeCode(file, imports.get(file) ?? [])) continue;
      problems.push(
        `${relative(root, file)} has runtime code but is in a cycle of imports (type-only ` +
          `included) with ${
            component.filter((other) => other !== file)
              .map((other) => relative(src, other)).sort().join(", ")
          }; ` +
          "move the interfaces it shares with them into a file of interfaces only",
      );
    }
  }
  if (process.argv.includes("--cycles")) {
    for (const component of components) {
      report.push(`  ${component.map((file) => relative(src, file)).sort().join(", ")}`);
    }
  }
  for (const [file, list] of imports) {
    const from = coreLayerOf(file, src)!;
    if (from.layer < 0) {
      problems.push(`${relative(root, file)}: core folder ${from.folder}/ has no layer`);
      continue;
    }
    for (const { target } of list) {
      const to = coreLayerOf(target, src);
      if (to == null || to.folder === from.folder) continue;
      if (to.layer >= from.layer) {
        problems.push(
          `${relative(root, file)} imports ${relative(root, target)}: ${from.folder}/ may not ` +
            `import ${to.folder}/ (same or higher layer)`,
        );
      }
    }
  }
}

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  console.error(`check-layers: ${problems.length} problem(s); see docs/architecture.md.`);
  process.exit(1);
}
for (const line of report) console.log(line);
console.log("check-layers: no import cycles, no upward imports in @fedwork/core.");
