// Unknown option names: someone porting a configuration from Fedify or
// BullMQ, or mistyping a name, must get an error naming the option and the
// nearest known one, never a silently ignored setting.

/**
 * Thrown when an options object holds a name the function does not know:
 * a typo, or an option of another library.  The message names the option,
 * suggests the nearest known name ("did you mean …?") and lists them all.
 * @since 0.3.0
 */
export class UnknownOptionError extends TypeError {
  /** The unknown option's name, with its path, e.g. `"priority"`. */
  readonly option: string;

  /**
   * @param option The unknown option's name.
   * @param message What is wrong and how to fix it.
   */
  constructor(option: string, message: string) {
    super(message);
    this.name = "UnknownOptionError";
    this.option = option;
  }
}

/**
 * How {@link assertKnownOptions} words its error.
 * @since 0.3.0
 */
export interface KnownOptionsContext {
  /**
   * The path of a nested options object, e.g. `"remoteRequests."`, put
   * before the names in the message.  None by default.
   */
  readonly prefix?: string;
  /**
   * What took the options, e.g. `"enqueueTask()"` or `"new
   * SqliteMessageQueue()"`, named in the message.  None by default.
   */
  readonly where?: string;
  /**
   * Advice for names another library takes that these options do not
   * (Fedify's `createFederation()` options, say), by name: such a name
   * gets the advice (`Unknown option name: advice`) instead of a "did you
   * mean" guess.  Only names at the
   * top of the options object (without a prefix) are looked up.  None by
   * default.
   * @since 0.4.0
   */
  readonly hints?: Readonly<Record<string, string>>;
}

/**
 * The first own name of `options` that is not in `known` and whose value
 * is not `undefined`, or `undefined` when every name is known.
 * @param options The options object as the user passed it.
 * @param known The known option names.
 * @returns The unknown name, without prefix.
 * @since 0.3.0
 */
export function findUnknownOption(options: object, known: readonly string[]): string | undefined {
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !known.includes(key)) return key;
  }
  return undefined;
}

/**
 * The message for an unknown option: `Unknown option priority of
 * enqueueTask(); did you mean …? The options are delay, ….`, or the
 * context's hint for a name of another library's.
 * @param name The unknown name, without prefix.
 * @param known The known option names.
 * @param context The prefix and the function's name.
 * @returns The message.
 * @since 0.3.0
 */
export function unknownOptionMessage(
  name: string,
  known: readonly string[],
  context: KnownOptionsContext = {},
): string {
  const prefix = context.prefix ?? "";
  if (prefix === "" && context.hints != null && Object.hasOwn(context.hints, name)) {
    return `Unknown option ${name}` +
      (context.where == null ? "" : ` of ${context.where}`) +
      `: ${context.hints[name]}`;
  }
  const suggestion = closestName(name, known);
  const list = known.length === 0
    ? " It takes no options."
    : ` The options are ${[...known].sort().map((known) => prefix + known).join(", ")}.`;
  return `Unknown option ${prefix}${name}` +
    (context.where == null ? "" : ` of ${context.where}`) +
    (suggestion == null ? "." : `; did you mean ${prefix}${suggestion}?`) +
    list;
}

/**
 * Throws an {@link UnknownOptionError} for the first option that is not in
 * `known`, naming it and suggesting the nearest known name for a typo (or
 * giving the context's hint for a name another library takes).  Every
 * options check in Fedwork, the federation's included, goes through it.
 * Options whose value is `undefined` count as absent, so that spreading an
 * optional setting never fails.  A value that is not an object (`null`, a
 * primitive) has no names to check and passes; checking the values is the
 * caller's business.
 * @param options The options object as the user passed it.
 * @param known The known option names.
 * @param context The prefix and the function's name, for the message.
 * @throws {UnknownOptionError} On the first unknown option.
 * @since 0.3.0
 * @example
 * ```ts
 * import { assertKnownOptions } from "@fedwork/core/queue-kit";
 *
 * const options = { pollInterval: { seconds: 1 } };
 * assertKnownOptions(options, ["pollInterval", "leaseTime"], {
 *   where: "new MyMessageQueue()",
 * });
 * ```
 */
export function assertKnownOptions(
  options: unknown,
  known: readonly string[],
  context: KnownOptionsContext = {},
): void {
  if (typeof options !== "object" || options == null) return;
  const name = findUnknownOption(options, known);
  if (name === undefined) return;
  throw new UnknownOptionError(
    (context.prefix ?? "") + name,
    unknownOptionMessage(name, known, context),
  );
}

/**
 * The known name nearest to `name` by edit distance (ignoring case; two
 * swapped neighbours count as one edit), when it is near enough to be a
 * typo: at most a third of the name's length.
 * @param name The unknown name.
 * @param known The known names.
 * @returns The nearest known name, or `undefined`.
 * @since 0.3.0
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * Optimal string alignment distance: Levenshtein's, plus the swap of two
 * neighbouring letters as one edit ("dealy" is one edit from "delay"), the
 * commonest typo.  Two rows of the table before the current one are kept.
 */
function editDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j], beforePrevious[j - 2] + 1);
      }
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length];
}
