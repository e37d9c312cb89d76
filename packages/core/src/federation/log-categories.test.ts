// The log categories the manual lists (federation.md, "Logging and
// tracing") are the ones the packages' sources log under, no more, no less.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, test } from "@fedify/fixture";

const root = fileURLToPath(new URL("../../../../", import.meta.url));

/** Every source file of the published packages (no tests, no test data). */
async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "testdata" && entry.name !== "node_modules") {
        files.push(...await sourceFiles(path));
      }
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      files.push(path);
    }
  }
  return files;
}

/** The categories the sources pass to `getLogger([...])` as literals. */
async function codeCategories(): Promise<Set<string>> {
  const categories = new Set<string>();
  const packages = join(root, "packages");
  for (const name of await readdir(packages)) {
    // The test fixture logs nothing of Fedwork's.
    if (name === "fixture") continue;
    for (const file of await sourceFiles(join(packages, name, "src")).catch(() => [])) {
      const text = await readFile(file, "utf8");
      for (const match of text.matchAll(/getLogger\(\[([^\]]*)\]\)/g)) {
        categories.add(JSON.parse(`[${match[1]}]`).join("."));
      }
    }
  }
  return categories;
}

/**
 * The categories of the manual's table: one per row, with the rows
 * `["fedwork", "activitypub", …]` and `["fedwork", <engine>]` expanded by
 * the names their description quotes.
 */
async function documentedCategories(): Promise<Set<string>> {
  const page = await readFile(join(root, "docs", "manual", "federation.md"), "utf8");
  const section = page.slice(page.indexOf("## Logging and tracing"));
  const categories = new Set<string>();
  for (const line of section.split("\n")) {
    const row = /^\| `(\[[^`]*\])`\s*\| (.*)\|$/.exec(line);
    if (row == null) continue;
    const [, category, what] = row;
    const quoted = [...what.matchAll(/`([a-z-]+)`/g)].map((match) => match[1]);
    if (category === '["fedwork", "activitypub", …]') {
      for (const name of quoted) categories.add(`fedwork.activitypub.${name}`);
    } else if (category === '["fedwork", <engine>]') {
      for (const name of quoted) categories.add(`fedwork.${name}`);
    } else {
      categories.add(JSON.parse(category).join("."));
    }
  }
  return categories;
}

test("the manual's table of log categories matches the categories the sources log under", async () => {
  const code = await codeCategories();
  const documented = await documentedCategories();
  assertEquals([...code].filter((category) => !documented.has(category)).sort(), []);
  assertEquals([...documented].filter((category) => !code.has(category)).sort(), []);
  // Not vacuous: every row was read.
  assertEquals(documented.size >= 25, true, `${documented.size} categories read`);
});
