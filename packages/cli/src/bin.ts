#!/usr/bin/env node
// The `fedwork` program: runs one command line and exits with its code.
// It exits explicitly, because the app's federation holds the connections
// of its queues and stores (and the CLI never disposes what the app made).
import process from "node:process";
import { runCli } from "./cli.ts";

const controller = new AbortController();
const stop = () => controller.abort();

/**
 * Writes to a stream and resolves once the text is handed to the system.
 * When the reader has gone (`fedwork tail | head -n 5`), the command stops
 * as on Ctrl-C instead of failing.
 */
function writer(stream: NodeJS.WriteStream): (text: string) => Promise<void> {
  // Failed writes are answered in their callbacks; without a listener, the
  // stream's error event would end the process with a stack trace.
  stream.on("error", () => {});
  return (text) =>
    new Promise((resolve, reject) => {
      if (stream.destroyed) return resolve();
      stream.write(text, (error) => {
        if (error == null) return resolve();
        if ((error as NodeJS.ErrnoException).code !== "EPIPE") return reject(error);
        stop();
        resolve();
      });
    });
}

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
