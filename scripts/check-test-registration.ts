// Checks that no test file awaits at its top level after it has registered
// a test.  Node.js's runner, run with --test-force-exit (scripts/test.ts
// needs it, see there), ends a file as soon as the tests it knows of have
// finished: tests registered after a slow top-level await (making an RSA
// key, say) are then silently never run, and Node counts fewer tests than
// Deno and Bun.  What a file's tests share and must wait for is made before
// its first test is registered.
//
// A registration is a call of `test()`, or of a suite function (named
// test…) imported from @fedwork/testing or from a …suite.ts module.  The
// TypeScript parser reads the files; functions' bodies do not count, as
// they run inside tests.
//
// Usage: node scripts/check-test-registration.ts
//   exits 1 and names each file and line that awaits too late.
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import process from "node:process";
import ts from "typescript";

const root = resolve(import.meta.dirname!, "..");

/** The names a file imports that register tests when called. */
function suiteFunctions(source: ts.SourceFile): Set<string> {
  const names = new Set(["test"]);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const from = (statement.moduleSpecifier as ts.StringLiteral).text;
    if (from !== "@fedwork/testing" && !/suite\.ts$/.test(from)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings == null || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if (/^test[A-Z]/.test(element.name.text)) names.add(element.name.text);
    }
  }
  return names;
}

/** Whether evaluating a top-level statement reaches `check` (functions left out). */
function reaches(statement: ts.Node, check: (node: ts.Node) => boolean): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || ts.isFunctionLike(node)) return;
    if (check(node)) {
      found = true;
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(statement);
  return found;
}

const isAwait = (node: ts.Node) =>
  ts.isAwaitExpression(node) ||
  (ts.isForOfStatement(node) && node.awaitModifier != null) ||
  (ts.isVariableDeclarationList(node) &&
    (node.flags & ts.NodeFlags.AwaitUsing) === ts.NodeFlags.AwaitUsing);

const files = execFileSync("git", ["ls-files", "*.test.ts"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((file) => file !== "");
const late: string[] = [];
for (const file of files) {
  const text = await readFile(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const registering = suiteFunctions(source);
  const isRegistration = (node: ts.Node) =>
    ts.isCallExpression(node) && ts.isIdentifier(node.expression) &&
    registering.has(node.expression.text);
  let registered = false;
  for (const statement of source.statements) {
    if (registered && reaches(statement, isAwait)) {
      const { line } = source.getLineAndCharacterOfPosition(statement.getStart(source));
      late.push(`${file}:${line + 1}`);
      break;
    }
    if (reaches(statement, isRegistration)) registered = true;
  }
}
if (late.length > 0) {
  console.error(
    "These test files await at their top level after registering a test; Node.js's runner " +
      "(--test-force-exit) can end the file before the later tests are registered.  Make what " +
      "they wait for before the first test():",
  );
  for (const place of late) console.error(`  ${place}`);
  process.exit(1);
}
console.log(`check-test-registration: ${files.length} test files register every test in time.`);
