#!/usr/bin/env node
// The `fedwork` program: runs one command line and exits with its code.
// It exits explicitly, because the app's federation holds the connections
// of its queues and stores (and the CLI never disposes what the app made).
import process from "node:process";
import { runCli } from "./cli.ts";

/** Writes to a stream and resolves once the text is handed to the system. */
function writer(stream: NodeJS.WriteStream): (text: string) => Promise<void> {
  return (text) =>
    new Promise((resolve, reject) =>
      stream.write(text, (error) => (error == null ? resolve() : reject(error)))
    );
}

const controller = new AbortController();
const stop = () => controller.abort();
const deno = (globalThis as {
  Deno?: { addSignalListener(signal: "SIGINT" | "SIGTERM", handler: () => void): void };
}).Deno;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // Deno's node:process takes signal listeners too, but with one a SIGINT
  // still killed the program when a shell started it in the background;
  // Deno.addSignalListener() handles it.
  if (deno != null) deno.addSignalListener(signal, stop);
  else process.on(signal, stop);
}
// Signal handlers do not keep a process alive: without this, a `tail` on a
// federation whose pub/sub holds no connection (the in-process default)
// would end as soon as it waits, before any Ctrl-C.
const keepAlive = setInterval(() => {}, 1 << 30);
const code = await runCli(process.argv.slice(2), {
  stdout: writer(process.stdout),
  stderr: writer(process.stderr),
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
clearInterval(keepAlive);
process.exit(code);
