// Ports the Fedify app in federation.ts to Fedwork the way the manual says a
// user does: by changing its imports and nothing else.  The result is
// committed as federation.fedwork.ts, so that tsc type-checks both builds;
// ported-app.test.ts fails when it is stale.
//
// Usage: node tests/compat/testdata/ported-app/port.ts   (rewrites it)
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The import specifiers a port changes, Fedify's to Fedwork's. */
export const PORTED_IMPORTS: readonly (readonly [string, string])[] = [
  ["@fedify/fedify", "@fedwork/core"],
];

/** The Fedify source of the app and its Fedwork build. */
export const SOURCE = join(import.meta.dirname!, "federation.ts");
export const PORTED = join(import.meta.dirname!, "federation.fedwork.ts");

/**
 * The Fedwork build of a Fedify source: each `from "<Fedify package>"`
 * becomes `from "<Fedwork package>"`.
 * @param source The Fedify source.
 * @returns The Fedwork source.
 */
export function port(source: string): string {
  let ported = source;
  for (const [fedify, fedwork] of PORTED_IMPORTS) {
    ported = ported.replaceAll(`from "${fedify}";`, `from "${fedwork}";`);
  }
  return ported;
}

if (import.meta.main) {
  await writeFile(PORTED, port(await readFile(SOURCE, "utf8")));
}
