// One run of the CLI: read the command line, load the app's federation,
// run the command, turn what went wrong into one line and an exit code.
import process from "node:process";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import { loadFederation, messageOf, type OperatorFederation } from "./app-module.ts";
import { parseCommandLine } from "./args.ts";
import { COMMANDS } from "./commands/mod.ts";
import { CliFailure, CliUsageError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from "./errors.ts";
import { commandHelp, overallHelp } from "./help.ts";

/**
 * Where {@link runCli} writes and what it reads of its environment.
 * @since 0.4.0
 */
export interface RunCliOptions {
  /** Writes text (with its line break) to the standard output. */
  readonly stdout: (text: string) => void | Promise<void>;
  /** Writes text (with its line break) to the standard error. */
  readonly stderr: (text: string) => void | Promise<void>;
  /** The environment, for `FEDWORK_APP`.  None by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The directory `--app` is relative to.  The process's by default. */
  readonly cwd?: string;
  /** Stops a long-running command (`tail`) when it aborts. */
  readonly signal?: AbortSignal;
  /**
   * The federation to operate, instead of loading `--app` (for a program
   * that embeds the CLI).  Loaded from `--app` by default.
   */
  readonly federation?: OperatorFederation;
}

/**
 * Runs one `fedwork` command line: `fedwork --app ./src/federation.ts
 * failed list`.  What goes wrong in the command is written as one line to
 * `stderr`, never thrown.
 * The loaded federation is not disposed: the `fedwork` program exits when
 * this returns.
 * @param argv The arguments after the program's name.
 * @param options Where to write, the environment and the stop signal.
 * @returns The exit code: 0 done, 1 not found or failed, 2 malformed
 *          command line (unknown command or option, missing argument, no
 *          `--app`, a module without a federation).
 * @throws {TypeError} When `argv` is not an array of strings or `stdout` or
 *         `stderr` is not a function.
 * @throws {UnknownOptionError} When `options` holds an unknown name.
 * @since 0.4.0
 * @example
 * ```ts ignore
 * import process from "node:process";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
 * import { runCli } from "@fedwork/cli";
 *
 * process.exitCode = await runCli(["failed", "list", "--json"], {
 *   stdout: (text) => void process.stdout.write(text),
 *   stderr: (text) => void process.stderr.write(text),
 *   federation,
 * });
 * ```
 */
export function runCli(argv: readonly string[], options: RunCliOptions): Promise<number> {
  // Malformed options throw here, before anything runs; the command's
  // failures become exit codes.
  checkRunCliOptions(argv, options);
  return run(argv, options);
}

async function run(argv: readonly string[], options: RunCliOptions): Promise<number> {
  const print = async (text: string) => await options.stdout(`${text}\n`);
  const note = async (text: string) => await options.stderr(`${text}\n`);
  try {
    const { command, args, options: given } = parseCommandLine(argv, COMMANDS);
    if (given.help === true) {
      await print(command == null ? overallHelp(COMMANDS) : commandHelp(command));
      return EXIT_OK;
    }
    let federation = options.federation;
    if (federation == null) {
      const app = (given.app as string | undefined) ?? options.env?.FEDWORK_APP;
      if (app == null || app === "") {
        throw new CliUsageError(
          "missing --app: name the module that exports the federation " +
            "(--app ./src/federation.ts, or set FEDWORK_APP).",
        );
      }
      federation = await loadFederation(app, options.cwd ?? process.cwd());
    }
    return await command!.run({
      federation,
      args,
      options: given,
      json: given.json === true,
      print,
      note,
      signal: options.signal ?? new AbortController().signal,
    });
  } catch (error) {
    if (error instanceof CliUsageError) {
      await note(`fedwork: ${error.message}`);
      return EXIT_USAGE;
    }
    await note(`fedwork: ${error instanceof CliFailure ? error.message : messageOf(error)}`);
    return EXIT_FAILURE;
  }
}

function checkRunCliOptions(argv: readonly string[], options: RunCliOptions): void {
  if (!Array.isArray(argv) || argv.some((arg) => typeof arg !== "string")) {
    throw new TypeError("runCli(): argv must be an array of strings.");
  }
  assertKnownOptions(options, ["stdout", "stderr", "env", "cwd", "signal", "federation"], {
    where: "runCli()",
  });
  for (const name of ["stdout", "stderr"] as const) {
    if (typeof options?.[name] !== "function") {
      throw new TypeError(`runCli(): the ${name} option must be a function writing text.`);
    }
  }
}
