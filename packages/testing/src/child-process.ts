// Running a script of this package in a child process on the runtime that
// runs the tests, for the tests that need two processes.
import process from "node:process";
import { fileURLToPath } from "node:url";

/**
 * The command that runs `script` (a URL of this package's files) with
 * `args` on the runtime running this code.
 * @param script The script's URL.
 * @param args Its arguments.
 * @returns The command and its arguments.
 */
export function childCommand(script: URL, args: string[]): { command: string; args: string[] } {
  // Scripts are named by their source (.ts) path; in the published build
  // the file beside this module is the compiled .js.
  if (!import.meta.url.endsWith(".ts") && script.pathname.endsWith(".ts")) {
    script = new URL(script.href.replace(/\.ts$/, ".js"));
  }
  if ("Deno" in globalThis) {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    // Deno can also run the script straight from a remote (e.g. JSR) URL.
    const path = script.protocol === "file:" ? fileURLToPath(script) : script.href;
    return { command: deno.execPath(), args: ["run", "-A", path, ...args] };
  }
  // Node.js and Bun both run a TypeScript file given as the first argument.
  return { command: process.execPath, args: [fileURLToPath(script), ...args] };
}

/**
 * The environment of a child process: this one's, without what would make
 * the child report to the parent's test runner.
 * @returns The environment.
 */
export function childEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) env[key] = value;
  }
  // node:test sets this for the test files it spawns; a child that inherits
  // it reports to the parent's test runner instead of running normally.
  delete env.NODE_TEST_CONTEXT;
  return env;
}
