// `npm run demo` itself: the script, run as a child process of the same
// runtime, prints every step and exits 0.
import { execFile } from "node:child_process";
import process from "node:process";
import { assertEquals, assertMatch, detectRuntime, test } from "@fedify/fixture";

test("the demo script prints every step and exits 0", async () => {
  const script = new URL("./demo.ts", import.meta.url).pathname;
  const args = detectRuntime() === "deno" ? ["run", "-A", script] : [script];
  const { code, stdout, stderr } = await new Promise<
    { code: number | null; stdout: string; stderr: string }
  >((resolve) => {
    const child = execFile(
      process.execPath,
      args,
      { timeout: 60_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
  assertEquals(code, 0, `the demo failed:\n${stdout}\n${stderr}`);
  for (
    const step of [
      /looked up @bob@127\.0\.0\.1:\d+ \(WebFinger\) and sent a Follow/,
      /alice received bob's Accept/,
      /the note reached alice's inbox/,
      /link-preview task stored the title: "Fedwork: typed tasks for the fediverse"/,
      /refresh-counts task .* counted 1 like/,
      /welcome-note task delivered after its delay/,
      /all steps done/,
    ]
  ) {
    assertMatch(stdout, step);
  }
});
