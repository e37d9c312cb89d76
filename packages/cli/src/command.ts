// What a command is: its words, its arguments and options, its help, and
// what it runs against the loaded federation.
import type { OperatorFederation } from "./app-module.ts";

/** An option a command takes. */
export interface OptionSpec {
  /** `"boolean"` for a flag; otherwise the option takes a value. */
  readonly type: "boolean" | "string" | "integer";
  /** What the value is, in the usage line (`NAME`, `N`). */
  readonly value?: string;
  /** One line saying what it does. */
  readonly description: string;
}

/** What a command gets when it runs. */
export interface CommandContext {
  /** The app's federation. */
  readonly federation: OperatorFederation;
  /** The positional arguments, by name. */
  readonly args: Readonly<Record<string, string>>;
  /** The options given: strings, integers and `true` for flags. */
  readonly options: Readonly<Record<string, string | number | boolean>>;
  /** Whether `--json` was given. */
  readonly json: boolean;
  /** Writes one line (or several) to the standard output. */
  readonly print: (text: string) => Promise<void>;
  /** Writes one line to the standard error. */
  readonly note: (text: string) => Promise<void>;
  /** Aborts when the operator stops the command (Ctrl-C, SIGTERM). */
  readonly signal: AbortSignal;
}

/** A command of the CLI. */
export interface CommandSpec {
  /** Its words, such as `["failed", "replay"]`. */
  readonly words: readonly string[];
  /** One line saying what it does. */
  readonly summary: string;
  /** Another name of a listed command (`hosts list` for `hosts`): not listed. */
  readonly alias?: boolean;
  /** More lines for its `--help`. */
  readonly details?: string;
  /** Its positional arguments' names, all required. */
  readonly arguments?: readonly string[];
  /** Positional arguments after those, which may be left out (`[<task>]`). */
  readonly optionalArguments?: readonly string[];
  /** Its own options (`--app`, `--json` and `--help` are everyone's). */
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** Runs it; resolves to the exit code, or throws a CLI error. */
  readonly run: (context: CommandContext) => Promise<number>;
}
