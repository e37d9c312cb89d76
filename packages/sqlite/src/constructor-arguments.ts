// The two ways to call the engine constructors: Fedwork's options object
// with the file's path in it (`{ path }`), and @fedify/sqlite's form, an
// open database (node:sqlite's DatabaseSync or bun:sqlite's Database) first
// and any options after it.  Fedwork's engines open connections of their
// own (a queue is shared between processes through its file), so of the
// database handed in only its file's path is used.

/**
 * An open database of the runtime's SQLite module: `node:sqlite`'s
 * `DatabaseSync` (Node.js, Deno) or `bun:sqlite`'s `Database` (Bun), as
 * `@fedify/sqlite`'s constructors take it.  Fedwork reads only which file
 * it has open (`location()`, or Bun's `filename`), opens connections of
 * its own to that file, and never closes or uses the one passed in.
 * @since 0.4.0
 */
export interface SqliteOpenDatabase {
  /** Compiles a statement (present on both modules' databases). */
  prepare(sql: string): unknown;
  /** Runs SQL without parameters (present on both modules' databases). */
  exec(sql: string): unknown;
}

/** Whether `value` looks like an open database rather than options. */
function isOpenDatabase(value: unknown): value is SqliteOpenDatabase {
  const candidate = value as Partial<Record<"prepare" | "exec", unknown>> | null | undefined;
  return candidate != null && typeof candidate === "object" &&
    typeof candidate.prepare === "function" && typeof candidate.exec === "function";
}

/**
 * The file a database has open: `location()` on `node:sqlite` (Node.js and
 * Deno), `filename` on `bun:sqlite`.
 * @returns The path, or `null` for an in-memory or temporary database.
 */
function databaseFile(database: SqliteOpenDatabase, where: string): string | null {
  const withLocation = database as { location?: () => string | null };
  const withFilename = database as { filename?: unknown };
  let path: unknown;
  if (typeof withLocation.location === "function") {
    try {
      path = withLocation.location();
    } catch (error) {
      throw new TypeError(
        `The database passed to ${where} is closed; pass an open one (or { path }).`,
        { cause: error },
      );
    }
  } else if (typeof withFilename.filename === "string") {
    path = withFilename.filename;
  } else {
    throw new TypeError(
      `${where} cannot tell which file the database passed to it has open: it takes ` +
        "node:sqlite's DatabaseSync or bun:sqlite's Database (or { path }).",
    );
  }
  return typeof path === "string" && path !== "" && path !== ":memory:" ? path : null;
}

function describeArgument(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return typeof value;
}

/**
 * What a Fedify option becomes in Fedwork's options: an option with the
 * same meaning keeps its name; these are dropped (they change nothing
 * here) when they have the given value.
 */
const FEDIFY_NO_OPS: Readonly<Record<string, (value: unknown) => boolean>> = {
  // Fedwork's CREATE TABLE IF NOT EXISTS (and its migration check) runs
  // once per connection and costs next to nothing on SQLite.
  initialized: (value) => typeof value === "boolean",
  // Fedwork always puts the file in WAL mode, Fedify's default.
  journalMode: (value) => value === "WAL",
};

/**
 * Turns a constructor's arguments into its options object.  An open
 * database first is Fedify's form: its file becomes the `path` option, and
 * the options after it are Fedwork's others, plus Fedify's `initialized`
 * and `journalMode: "WAL"`, which change nothing here and are dropped.
 * Anything else first must be Fedwork's options object, alone.
 * @param first The first argument.
 * @param second The second argument, `undefined` when absent.
 * @param where The constructor, e.g. `"new SqliteKvStore()"`.
 * @param fedifyForm How Fedify's form is written there, for the message.
 * @returns The options, with `path`.
 * @throws {TypeError} When the first argument is neither, the database is
 *         in memory or closed, or the path is given twice.
 */
export function resolveConstructorArguments<T extends { readonly path: string }>(
  first: unknown,
  second: unknown,
  where: string,
  fedifyForm: string,
): T {
  if (isOpenDatabase(first)) {
    const path = databaseFile(first, where);
    if (path == null) {
      throw new TypeError(
        `${where} needs a database file, not an in-memory database: Fedwork's SQLite engines ` +
          "open connections of their own to the file (so that other processes can share it). " +
          'Open a file (new DatabaseSync("app.sqlite")) or pass { path }.',
      );
    }
    if (second === undefined) return { path } as T;
    if (second === null || typeof second !== "object" || Array.isArray(second)) {
      throw new TypeError(
        `The second argument of ${where} must be an options object; got ${
          describeArgument(second)
        }.`,
      );
    }
    if ("path" in second && (second as { path?: unknown }).path !== undefined) {
      throw new TypeError(
        `${where} got a database as its first argument; the path option cannot come too.`,
      );
    }
    const options: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(second)) {
      if (!(Object.hasOwn(FEDIFY_NO_OPS, name) && FEDIFY_NO_OPS[name](value))) {
        options[name] = value;
      }
    }
    return { ...options, path } as unknown as T;
  }
  if (first != null && typeof first === "object" && !Array.isArray(first)) {
    if (second !== undefined) {
      throw new TypeError(
        `${where} takes a second argument only after an open database (${fedifyForm}); ` +
          "with an options object, put every option in it.",
      );
    }
    return first as T;
  }
  throw new TypeError(
    `${where} takes an open database of node:sqlite or bun:sqlite (${fedifyForm}, as in ` +
      `Fedify) or an options object with the file's path ({ path }); got ${
        describeArgument(first)
      }.`,
  );
}

/**
 * Advice for the options of `@fedify/sqlite` that Fedwork's SQLite classes
 * do not take, for `assertKnownOptions()`'s `hints`.
 */
export const FEDIFY_SQLITE_HINTS: Readonly<Record<string, string>> = {
  maxRetries: "Fedwork does not retry a statement that found the database locked: it waits " +
    "for the lock, up to the busyTimeout option (5 seconds by default).  Use busyTimeout.",
  retryDelayMs: "Fedwork does not retry a statement that found the database locked: it waits " +
    "for the lock, up to the busyTimeout option (5 seconds by default).  Use busyTimeout.",
  journalMode: 'Fedwork always uses the WAL journal mode (journalMode: "WAL" is accepted and ' +
    "changes nothing); other modes would keep processes from sharing the file safely.",
  initialized: "Fedwork creates its table if it does not exist, which costs next to nothing; " +
    "initialized is accepted only after a database (Fedify's form), where it changes nothing.",
};
