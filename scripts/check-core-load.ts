// Checks that loading @fedwork/core reaches no Node.js built-in module, so
// that the package can start on runtimes without them (Cloudflare's
// workerd): walks the static imports of the published entry points
// (src/mod.ts and src/queue-kit.ts) through every relative import and fails
// on each `node:` specifier (or bare Node.js built-in name) it meets.
// Node-only code must import such modules lazily, with `await import()`
// where it is first needed; `import type` is erased and does not count.
// Third-party packages are not followed: their own entry points are their
// business, and the workerd smoke test would catch them.
//
// It also fails on what Cloudflare Workers refuse at a module's top level
// (outside any request), which some workerd releases enforce: creating an
// AbortController, starting a timer, drawing random values.  Such objects
// are made on first use instead.
//
// The TypeScript parser reads the files, so that strings and comments that
// look like imports are not mistaken for them.
//
// Usage: node scripts/check-core-load.ts
//   exits 1 and prints the chain of imports that reaches each offender.
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import ts from "typescript";

const root = resolve(import.meta.dirname!, "..");
const ENTRY_POINTS = ["packages/core/src/mod.ts", "packages/core/src/queue-kit.ts"];
const builtins = new Set(builtinModules);

/** The specifiers a module imports when it is loaded (type-only ones left out). */
function loadTimeImports(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      if (statement.importClause?.isTypeOnly) continue;
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier != null) {
      if (statement.isTypeOnly) continue;
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers;
}

/** What Workers refuse outside a request, as `new X` or a call to `X`. */
const REFUSED_AT_LOAD = new Set([
  "new AbortController",
  "setTimeout",
  "setInterval",
  "crypto.randomUUID",
  "crypto.getRandomValues",
]);

/**
 * The expressions in REFUSED_AT_LOAD a module evaluates when it loads:
 * those outside functions (a class's static initializers run at load, its
 * methods do not).
 */
function loadTimeEffects(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) return;
    if (
      ts.isPropertyDeclaration(node) &&
      (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Static) === 0
    ) {
      // An instance field initializer runs in the constructor.
      return;
    }
    let name: string | undefined;
    if (ts.isNewExpression(node)) name = `new ${node.expression.getText(source)}`;
    else if (ts.isCallExpression(node)) name = node.expression.getText(source);
    if (name != null && REFUSED_AT_LOAD.has(name.replace(/^globalThis\./, ""))) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      found.push(`${name} at ${relative(root, path)}:${line + 1}`);
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

const offenders: string[] = [];
const effects: string[] = [];
const parents = new Map<string, string | null>();
const queue: string[] = [];
for (const entry of ENTRY_POINTS) {
  const path = join(root, entry);
  parents.set(path, null);
  queue.push(path);
}
while (queue.length > 0) {
  const path = queue.shift()!;
  const text = await readFile(path, "utf8");
  effects.push(...loadTimeEffects(path, text));
  for (const specifier of loadTimeImports(path, text)) {
    if (specifier.startsWith(".")) {
      const target = resolve(dirname(path), specifier);
      if (!parents.has(target)) {
        parents.set(target, path);
        queue.push(target);
      }
    } else if (specifier.startsWith("node:") || builtins.has(specifier.split("/")[0])) {
      const chain: string[] = [];
      for (let at: string | null | undefined = path; at != null; at = parents.get(at)) {
        chain.unshift(relative(root, at));
      }
      offenders.push(`${specifier}, imported by ${chain.join(" -> ")}`);
    }
  }
}

if (offenders.length > 0) {
  console.error(
    "Loading @fedwork/core reaches Node.js built-in modules; import them lazily " +
      "(await import()) where they are first needed:",
  );
  for (const offender of offenders) console.error(`  ${offender}`);
  process.exit(1);
}
if (effects.length > 0) {
  console.error(
    "Loading @fedwork/core does what Cloudflare Workers refuse outside a request; make " +
      "these on first use:",
  );
  for (const effect of effects) console.error(`  ${effect}`);
  process.exit(1);
}
console.log(
  `check-core-load: ${parents.size} modules load without a Node.js built-in module, ` +
    "a timer, an AbortController or random values.",
);
