// A Fedify application ported to Fedwork keeps its LogTape configuration,
// which names the "fedify" category: Fedwork's records ("fedwork") then
// reach no sink, refused inbox requests included.  Seeing that in the
// configuration, Fedwork says so once on the console: the one place sure
// to be read when the logs are not.
import { getConfig } from "@logtape/logtape";

let decided = false;

/** The first element of each logger's category in LogTape's configuration. */
function configuredRoots(): string[] | undefined {
  const config = getConfig();
  if (config == null) return undefined;
  return config.loggers.map(({ category }) =>
    typeof category === "string" ? category : category.length === 0 ? "" : category[0]
  );
}

/**
 * Prints, once per process, a hint on the console when LogTape is
 * configured with a logger for the `"fedify"` category and none for
 * `"fedwork"` (nor the root category, which takes every record).  Checked
 * when a federation is made, and again at its first request and at
 * `startQueue()` if LogTape was not configured yet; decided for good at
 * the first check that finds a configuration.  Internal.
 * @returns Whether it printed the hint now.
 * @since 0.4.0
 */
export function hintFedifyLogCategory(): boolean {
  if (decided) return false;
  const roots = configuredRoots();
  if (roots === undefined) return false;
  decided = true;
  if (!roots.includes("fedify") || roots.includes("fedwork") || roots.includes("")) return false;
  // deno-lint-ignore no-console
  console.warn(
    'Fedwork logs under the LogTape category ["fedwork"], not ["fedify"]: your LogTape ' +
      'configuration has a logger for "fedify" and none for "fedwork", so Fedwork\'s records ' +
      "(refused inbox requests among them) reach no sink.  Add a logger " +
      '{ category: ["fedwork"], sinks: [...], lowestLevel: "info" } to configure(), next to ' +
      'the "fedify" one.  (This hint is printed once.)',
  );
  return true;
}

/** Forgets the decision, for tests.  Internal. */
export function resetFedifyLogCategoryHint(): void {
  decided = false;
}
