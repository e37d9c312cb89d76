// Reading docs/manual/self-hosting.md the way a reader copies from it: its
// nginx configuration and its systemd units, verbatim, with only the values
// the page calls placeholders replaced.
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** The repository's root. */
export const ROOT: string = join(import.meta.dirname!, "..", "..", "..");

/** The page's Markdown. */
export function readSelfHostingPage(): Promise<string> {
  return readFile(join(ROOT, "docs", "manual", "self-hosting.md"), "utf8");
}

/** The bodies of the page's fenced blocks in `language`, in order. */
export function fencedBlocks(page: string, language: string): string[] {
  const blocks: string[] = [];
  const pattern = /^```(\S*)[^\n]*\n([\s\S]*?)^```$/gm;
  for (const match of page.matchAll(pattern)) {
    if (match[1] === language) blocks.push(match[2]);
  }
  return blocks;
}

/**
 * Replaces each placeholder with its value, failing when one is absent (the
 * page changed, and the test would silently run something else).
 * @param text The block.
 * @param values Placeholder → value, applied in order.
 * @returns The block with the values.
 */
export function substitute(text: string, values: readonly [string, string][]): string {
  for (const [placeholder, value] of values) {
    if (!text.includes(placeholder)) {
      throw new Error(`The page's block has no placeholder ${JSON.stringify(placeholder)}.`);
    }
    text = text.replaceAll(placeholder, value);
  }
  return text;
}

/** What the test takes from a unit file. */
export interface Unit {
  /** The arguments of `ExecStart` after the example's main.ts. */
  readonly mainArgs: string[];
  /** `TimeoutStopSec`, in milliseconds. */
  readonly timeoutStopMs: number;
  /** `KillSignal`. */
  readonly killSignal: string;
}

/**
 * The systemd unit of the page whose first line names `path`
 * (`# /etc/systemd/system/microblog-web.service`).
 */
export function unitFile(page: string, path: string): Unit {
  const block = fencedBlocks(page, "ini").find((b) => b.startsWith(`# ${path}\n`));
  if (block == null) throw new Error(`The page has no unit file ${path}.`);
  const setting = (name: string) => {
    const value = block.match(new RegExp(`^${name}=(.*)$`, "m"))?.[1];
    if (value == null) throw new Error(`${path} has no ${name}.`);
    return value.trim();
  };
  const exec = setting("ExecStart").split(/\s+/);
  const main = exec.indexOf("examples/microblog/src/main.ts");
  if (main < 0) throw new Error(`${path}'s ExecStart does not run the example's main.ts.`);
  const seconds = Number(setting("TimeoutStopSec"));
  if (!Number.isFinite(seconds)) throw new Error(`${path}'s TimeoutStopSec is not in seconds.`);
  return {
    mainArgs: exec.slice(main + 1),
    timeoutStopMs: seconds * 1000,
    killSignal: setting("KillSignal"),
  };
}

/**
 * The variables of the page's environment file whose first line names
 * `path` (`# /etc/microblog/env …`): its `NAME=value` lines, comments left
 * out.
 */
export function environmentFile(page: string, path: string): Record<string, string> {
  const block = fencedBlocks(page, "sh").find((b) => b.startsWith(`# ${path}`));
  if (block == null) throw new Error(`The page has no environment file ${path}.`);
  const variables: Record<string, string> = {};
  for (const line of block.split("\n")) {
    const match = line.match(/^([A-Z_][A-Z0-9_]*)=(.*)$/);
    if (match != null) variables[match[1]] = match[2];
  }
  return variables;
}
