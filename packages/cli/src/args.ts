// Reading the command line: the command's words, its positional arguments,
// its options and the options every command takes.
import type { CommandSpec, OptionSpec } from "./command.ts";
import { CliUsageError } from "./errors.ts";

/** The options every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  app: {
    type: "string",
    value: "MODULE",
    description: "the module that exports the federation (or set FEDWORK_APP)",
  },
  json: { type: "boolean", description: "print JSON (one object per line for tail)" },
  help: { type: "boolean", description: "show this help" },
};

/** A command line, read. */
export interface ParsedCommandLine {
  /** The command, or none for `fedwork` alone or `fedwork --help`. */
  readonly command?: CommandSpec;
  /** Its positional arguments, by name. */
  readonly args: Record<string, string>;
  /** Its options and the global ones. */
  readonly options: Record<string, string | number | boolean>;
}

/**
 * Reads a command line against the commands.
 * @param argv The arguments after the program's name.
 * @param commands The commands.
 * @returns The command and what it was given; no command when none was
 *          named and `--help` was given.
 * @throws {CliUsageError} When it names no known command, an option is
 *         unknown or lacks its value, or an argument is missing or extra.
 */
export function parseCommandLine(
  argv: readonly string[],
  commands: readonly CommandSpec[],
): ParsedCommandLine {
  const known = new Map<string, OptionSpec>(Object.entries(GLOBAL_OPTIONS));
  for (const command of commands) {
    for (const [name, spec] of Object.entries(command.options ?? {})) known.set(name, spec);
  }
  const positionals: string[] = [];
  const given: [string, string | true][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-h") {
      given.push(["help", true]);
    } else if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const name = arg.slice(2, equals < 0 ? undefined : equals);
      const spec = known.get(name);
      if (spec == null) throw new CliUsageError(unknownOption(name, [...known.keys()]));
      if (spec.type === "boolean") {
        if (equals >= 0) throw new CliUsageError(`--${name} takes no value.`);
        given.push([name, true]);
      } else if (equals >= 0) {
        given.push([name, arg.slice(equals + 1)]);
      } else if (i + 1 < argv.length) {
        given.push([name, argv[++i]]);
      } else {
        throw new CliUsageError(`--${name} needs a value (--${name} ${spec.value ?? "VALUE"}).`);
      }
    } else if (arg.startsWith("-") && arg.length > 1) {
      throw new CliUsageError(`unknown option ${arg}; see fedwork --help.`);
    } else {
      positionals.push(arg);
    }
  }
  const command = findCommand(positionals, commands);
  const options: Record<string, string | number | boolean> = {};
  const allowed = { ...GLOBAL_OPTIONS, ...command?.options };
  for (const [name, value] of given) {
    const spec = allowed[name];
    if (spec == null) {
      throw new CliUsageError(
        `fedwork ${command!.words.join(" ")} takes no --${name}; see fedwork ${
          command!.words.join(" ")
        } --help.`,
      );
    }
    options[name] = spec.type === "integer" ? integerOption(name, value as string) : value;
  }
  if (command == null) {
    if (options.help === true) return { args: {}, options };
    if (positionals.length === 0) {
      throw new CliUsageError("no command given; see fedwork --help.");
    }
    throw new CliUsageError(unknownCommand(positionals, commands));
  }
  const rest = positionals.slice(command.words.length);
  const required = command.arguments ?? [];
  const names = [...required, ...(command.optionalArguments ?? [])];
  const args: Record<string, string> = {};
  if (options.help !== true) {
    const usage = `fedwork ${command.words.join(" ")}${required.map((n) => ` <${n}>`).join("")}${
      (command.optionalArguments ?? []).map((n) => ` [<${n}>]`).join("")
    }`;
    if (rest.length < required.length) {
      throw new CliUsageError(`missing <${required[rest.length]}>: ${usage}.`);
    }
    const longer = commands.some((other) =>
      other.words.length > command.words.length &&
      command.words.every((word, index) => other.words[index] === word)
    );
    if (rest.length > names.length && longer) {
      throw new CliUsageError(unknownCommand(positionals, commands));
    }
    if (rest.length > names.length) {
      throw new CliUsageError(
        `unexpected argument ${JSON.stringify(rest[names.length])}: ${usage}.`,
      );
    }
    names.forEach((name, index) => {
      if (index < rest.length) args[name] = rest[index];
    });
  }
  return { command, args, options };
}

/** The command whose words start the positionals, the longest first. */
function findCommand(
  positionals: readonly string[],
  commands: readonly CommandSpec[],
): CommandSpec | undefined {
  let found: CommandSpec | undefined;
  for (const command of commands) {
    const matches = command.words.every((word, index) => positionals[index] === word);
    if (matches && command.words.length > (found?.words.length ?? 0)) found = command;
  }
  return found;
}

function integerOption(name: string, value: string): number {
  if (!/^[1-9]\d*$/.test(value)) {
    throw new CliUsageError(`--${name} must be a positive integer, not ${JSON.stringify(value)}.`);
  }
  return Number(value);
}

function unknownCommand(positionals: readonly string[], commands: readonly CommandSpec[]): string {
  const group = commands.filter((command) => command.words[0] === positionals[0]);
  if (group.length > 0) {
    const words = group.map((command) => command.words.slice(1).join(" ")).filter(Boolean);
    return `unknown command fedwork ${positionals.slice(0, 2).join(" ")}; ` +
      `fedwork ${positionals[0]} takes ${words.join(", ")}.`;
  }
  const first = [...new Set(commands.map((command) => command.words[0]))];
  const guess = closest(positionals[0], first);
  return `unknown command ${JSON.stringify(positionals[0])}` +
    (guess == null ? "" : `; did you mean ${guess}?`) + " See fedwork --help.";
}

function unknownOption(name: string, names: readonly string[]): string {
  const guess = closest(name, names);
  return `unknown option --${name}` + (guess == null ? "" : `; did you mean --${guess}?`) +
    " See fedwork --help.";
}

/** The name nearest to `word` by edit distance, when near enough. */
function closest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const name of names) {
    const distance = editDistance(word, name);
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
