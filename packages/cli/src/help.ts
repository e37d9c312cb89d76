// The help texts: `fedwork --help` lists the commands, `fedwork <command>
// --help` shows one with its arguments and options.
import { GLOBAL_OPTIONS } from "./args.ts";
import type { CommandSpec, OptionSpec } from "./command.ts";

/**
 * The overall help.
 * @param commands The commands.
 * @returns Its text.
 */
export function overallHelp(commands: readonly CommandSpec[]): string {
  const rows = commands.filter((command) => !command.alias).map((
    command,
  ) => [usageOf(command, false), command.summary]);
  return [
    "fedwork: operate a Fedwork federation from the command line.",
    "",
    "Usage: fedwork --app <module> <command> [options]",
    "",
    "Commands:",
    ...columns(rows),
    "",
    "Options every command takes:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "The module exports the Federation as `federation` or as its default export, or a",
    "function (maybe async) returning it; importing it must not start workers or a server.",
    "Exit codes: 0 done, 1 not found or failed, 2 wrong command line.",
    "See fedwork <command> --help.",
  ].join("\n");
}

/**
 * One command's help.
 * @param command The command.
 * @returns Its text.
 */
export function commandHelp(command: CommandSpec): string {
  const lines = [`Usage: fedwork --app <module> ${usageOf(command)}`, "", command.summary];
  if (command.details != null) lines.push("", command.details);
  if (command.options != null) lines.push("", "Options:", ...optionLines(command.options));
  lines.push("", "Options every command takes:", ...optionLines(GLOBAL_OPTIONS));
  return lines.join("\n");
}

function usageOf(command: CommandSpec, withOptions = true): string {
  const args = (command.arguments ?? []).map((name) => ` <${name}>`).join("") +
    (command.optionalArguments ?? []).map((name) => ` [<${name}>]`).join("");
  const options = Object.entries(withOptions ? command.options ?? {} : {}).map(([name, spec]) =>
    ` [--${name}${spec.type === "boolean" ? "" : ` ${spec.value ?? "VALUE"}`}]`
  ).join("");
  return `${command.words.join(" ")}${args}${options}`;
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  return columns(
    Object.entries(options).map(([name, spec]) => [
      `--${name}${spec.type === "boolean" ? "" : ` ${spec.value ?? "VALUE"}`}`,
      spec.description,
    ]),
  );
}

function columns(rows: readonly (readonly [string, string])[] | string[][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}
