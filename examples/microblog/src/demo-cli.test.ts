// `npm run demo` itself: the script, run as a child process of the same
// runtime, prints every step and exits 0.
import { execFile, spawn } from "node:child_process";
import process from "node:process";
import { assertEquals, assertMatch, detectRuntime, test, within } from "@fedify/fixture";

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

test("the demo in --serve mode prints the API token, which the API then takes", async () => {
  const script = new URL("./demo.ts", import.meta.url).pathname;
  const runtimeArgs = detectRuntime() === "deno" ? ["run", "-A", script] : [script];
  const token = `demo-${crypto.randomUUID()}`;
  const child = spawn(process.execPath, [...runtimeArgs, "--serve"], {
    // Port 0: any free ports, so that this test never collides.
    env: { ...process.env, API_TOKEN: token, ALICE_PORT: "0", BOB_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  const serving = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
      if (stdout.includes("curl")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the demo exited (${code}):\n${stdout}`)));
  });
  try {
    await within(serving, "the demo to serve", 60_000);
    assertMatch(stdout, new RegExp(`The API takes the token ${token} \\(from API_TOKEN\\)`));
    const api = /curl -H 'Authorization: Bearer [^']+' (\S+)/.exec(stdout)![1];
    const response = await fetch(api, { headers: { Authorization: `Bearer ${token}` } });
    assertEquals(response.status, 200);
    await response.body?.cancel();
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
});
