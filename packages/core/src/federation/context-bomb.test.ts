// The context bomb in a child process with a capped heap: every path a
// remote document takes refuses it, and a regression fails this test (the
// child runs out of memory, or is killed past the memory watch) instead of
// taking the test runner down.
import { assert, assertEquals, test } from "@fedify/fixture";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import process from "node:process";
import { fileURLToPath } from "node:url";

// Node.js and Deno get a 256 MiB V8 heap; Bun has no heap cap, so the
// parent watches every child's resident size and kills it past 512 MiB.
const HEAP_MIB = 256;
const RSS_LIMIT_MIB = 512;

function childCommand(args: string[]): { command: string; args: string[] } {
  const script = fileURLToPath(new URL("./testdata/context-bomb-child.ts", import.meta.url));
  if ("Deno" in globalThis) {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno;
    return {
      command: deno.execPath(),
      args: ["run", "-A", `--v8-flags=--max-old-space-size=${HEAP_MIB}`, script, ...args],
    };
  }
  if ("Bun" in globalThis) return { command: process.execPath, args: [script, ...args] };
  return { command: process.execPath, args: [`--max-old-space-size=${HEAP_MIB}`, script, ...args] };
}

/** Runs the child; resolves to its output, exit and the peak RSS it was seen at. */
function runChild(
  args: string[],
): Promise<{ stdout: string; stderr: string; exit: string; peakMiB: number }> {
  const { command, args: argv } = childCommand(args);
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(command, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let peakMiB = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk);
  // /proc is Linux's; elsewhere only the heap cap holds.
  const watch = setInterval(async () => {
    try {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peakMiB = Math.max(peakMiB, kib / 1024);
      if (kib / 1024 > RSS_LIMIT_MIB) child.kill("SIGKILL");
    } catch {
      // Gone already, or no /proc.
    }
  }, 20);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearInterval(watch);
      resolve({ stdout, stderr, exit: signal ?? String(code), peakMiB });
    });
  });
}

test("the context bomb that killed a 1 GiB heap is refused on every path in a 256 MiB one", async () => {
  const { stdout, stderr, exit, peakMiB } = await runChild(["12000"]);
  assertEquals(exit, "0", `the child died (peak RSS ${peakMiB.toFixed(0)} MiB): ${stderr}`);
  assertEquals(stdout.trim().split("\n"), [
    "signed-inbox 400",
    "unverified-hook 400 hook=0",
    "inbox-worker dropped",
    "lookup null",
    "ld-signature tooComplex",
    "done",
  ]);
  assert(peakMiB < RSS_LIMIT_MIB);
});
