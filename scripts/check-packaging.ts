// Checks the packages as users get them: builds and packs every published
// package, installs the tarballs into a scratch project in a temporary
// directory (outside the workspace, so nothing resolves to the sources),
// type-checks a small app against the published declarations, then runs it
// (one typed task end to end on SQLite), @fedwork/testing's KV suite and its
// worker-crash test, and the packed `fedwork` program (@fedwork/cli's bin)
// on Node.js, Deno and Bun.
//
// Dependencies other than ours come from the registry, through npm's cache
// (`--prefer-offline`): after the workspace's own `npm install` they are
// mostly there already.
//
// Usage: node scripts/check-packaging.ts [--keep]   (--keep leaves the
// scratch project in place and prints its path)
import { spawn } from "node:child_process";
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { buildPackages, PUBLISHED_PACKAGES } from "./build.ts";

const root = resolve(import.meta.dirname!, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const keep = process.argv.includes("--keep");

// The scratch project must see the packages as published: without the
// workspace's source condition (see scripts/test.ts) and without colors.
const env: Record<string, string> = { NO_COLOR: "1" };
for (const [key, value] of Object.entries(process.env)) {
  if (value === undefined || key === "NODE_OPTIONS" || key === "BUN_OPTIONS") continue;
  if (key.startsWith("npm_") || key === "NODE_TEST_CONTEXT") continue;
  env[key] = value;
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => output += chunk);
    child.stderr.on("data", (chunk: Buffer) => output += chunk);
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolvePromise(output);
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output}`));
    });
  });
}

/** The first Node.js older than 24 on the usual system paths, if any. */
async function findOlderNode(): Promise<{ path: string; version: string } | undefined> {
  for (const path of ["/usr/bin/node", "/usr/local/bin/node"]) {
    const version = await run(path, ["--version"], root).then((out) => out.trim(), () => null);
    if (version == null) continue;
    if (Number.parseInt(version.replace(/^v/, ""), 10) < 24) return { path, version };
  }
  return undefined;
}

async function step<T>(label: string, body: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await body();
  console.log(`${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

async function manifest(name: string): Promise<Record<string, Record<string, string>>> {
  return JSON.parse(await readFile(join(root, "packages", name, "package.json"), "utf8"));
}

const scratch = await mkdtemp(join(tmpdir(), "fedwork-packaging-"));
let failed = false;
try {
  await step("built the packages", () => buildPackages());
  const tarballs = await step("packed the packages", async () => {
    await run("npm", [
      "pack",
      "--ignore-scripts", // built above, once for all
      "--pack-destination",
      scratch,
      ...PUBLISHED_PACKAGES.flatMap((name) => ["--workspace", `packages/${name}`]),
    ], root);
    return (await readdir(scratch)).filter((file) => file.endsWith(".tgz"));
  });
  if (tarballs.length !== PUBLISHED_PACKAGES.length) {
    throw new Error(`Expected ${PUBLISHED_PACKAGES.length} tarballs, got ${tarballs.join(", ")}.`);
  }
  for (const tarball of tarballs) {
    const listing = await run("tar", ["-tzf", join(scratch, tarball)], scratch);
    const leaked = listing.split("\n").filter((file) =>
      /\.test\.|\/testdata\/|\/src\/|tsconfig/.test(file)
    );
    if (leaked.length > 0) throw new Error(`${tarball} ships ${leaked.join(", ")}.`);
  }

  // The packages' own @fedwork dependencies name registry versions; the
  // overrides point them at the tarballs too.
  const ours = Object.fromEntries(
    await Promise.all(PUBLISHED_PACKAGES.map(async (name) => {
      const packageName = (await manifest(name)).name as unknown as string;
      const tarball = tarballs.find((file) => file.startsWith(`fedwork-${name}-`))!;
      return [packageName, `file:./${tarball}`];
    })),
  );
  const core = await manifest("core");
  const workspace = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
  await writeFile(
    join(scratch, "package.json"),
    JSON.stringify(
      {
        name: "fedwork-packaging-check",
        private: true,
        type: "module",
        dependencies: {
          ...ours,
          "@fedify/vocab": core.dependencies["@fedify/vocab"],
          zod: workspace.devDependencies.zod,
          hono: (await manifest("hono")).devDependencies.hono,
          express: (await manifest("express")).devDependencies.express,
        },
        devDependencies: {
          "@types/node": workspace.devDependencies["@types/node"],
          "@types/express": (await manifest("express")).devDependencies["@types/express"],
        },
        overrides: Object.fromEntries(Object.keys(ours).map((name) => [name, `$${name}`])),
      },
      null,
      2,
    ),
  );
  await writeFile(
    join(scratch, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2023",
        lib: ["ES2023", "ESNext.Disposable", "DOM"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
      },
      files: ["app.ts", "adapters.ts", "conformance.test.ts", "sqlite-factory.ts", "cli-app.ts"],
    }),
  );
  await copyFile(join(root, "scripts", "packaging", "app.ts"), join(scratch, "app.ts"));
  await copyFile(join(root, "scripts", "packaging", "adapters.ts"), join(scratch, "adapters.ts"));
  await copyFile(
    join(root, "scripts", "packaging", "conformance.ts"),
    join(scratch, "conformance.test.ts"),
  );
  await copyFile(
    join(root, "scripts", "packaging", "sqlite-factory.ts"),
    join(scratch, "sqlite-factory.ts"),
  );
  await copyFile(join(root, "scripts", "packaging", "cli-app.ts"), join(scratch, "cli-app.ts"));
  await step("installed the tarballs into a scratch project", () =>
    run("npm", [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
    ], scratch));

  await step(
    "type-checked the app against the published declarations (tsc, deno check)",
    () =>
      Promise.all([
        run(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc")], scratch),
        run(bin("deno"), ["check", "app.ts", "adapters.ts", "conformance.test.ts"], scratch),
      ]),
  );

  // The declarations under the strictest settings an app may use: every
  // entry point imported with exactOptionalPropertyTypes and without
  // skipLibCheck, so tsc checks each published .d.ts (an internal class in
  // them once failed there).  Errors in other packages' declarations are
  // theirs (@fedify/vocab 2.3's need a TypeScript with the esnext.temporal
  // lib), so only ours count.
  await step(
    "type-checked the declarations with exactOptionalPropertyTypes and skipLibCheck off",
    async () => {
      const imports: string[] = [];
      for (const name of PUBLISHED_PACKAGES) {
        const { name: packageName, exports } = await manifest(name) as unknown as {
          name: string;
          exports: Record<string, unknown>;
        };
        for (const subpath of Object.keys(exports)) {
          if (subpath.endsWith(".json") || subpath.includes("*")) continue;
          const specifier = subpath === "." ? packageName : `${packageName}/${subpath.slice(2)}`;
          imports.push(`export * as m${imports.length} from "${specifier}";`);
        }
      }
      await writeFile(join(scratch, "strict.ts"), `${imports.join("\n")}\n`);
      await writeFile(
        join(scratch, "tsconfig.strict.json"),
        JSON.stringify({
          extends: "./tsconfig.json",
          compilerOptions: { exactOptionalPropertyTypes: true, skipLibCheck: false },
          files: ["strict.ts"],
        }),
      );
      const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
      const output = await run(process.execPath, [tsc, "-p", "tsconfig.strict.json"], scratch)
        .catch((error: Error) => error.message);
      const ours = output.split("\n").filter((line) =>
        /node_modules\/@fedwork\/|^strict\.ts/.test(line)
      );
      if (ours.length > 0) {
        throw new Error(`Fedwork's declarations fail under strict settings:\n${ours.join("\n")}`);
      }
    },
  );

  // All of the KV suite; of the queue suite, the crash test, which runs the
  // published crash-worker.js in a process of its own.
  const suite = "MemoryKvStore|worker process was killed";
  const runtimes: [string, string[], string[], string[]][] = [
    ["Node.js", [process.execPath, "app.ts"], [process.execPath, "adapters.ts"], [
      process.execPath,
      "--test",
      `--test-name-pattern=${suite}`,
      "conformance.test.ts",
    ]],
    ["Deno", [bin("deno"), "run", "-A", "app.ts"], [bin("deno"), "run", "-A", "adapters.ts"], [
      bin("deno"),
      "test",
      "-A",
      "--filter",
      `/${suite}/`,
      "conformance.test.ts",
    ]],
    ["Bun", [bin("bun"), "app.ts"], [bin("bun"), "adapters.ts"], [
      bin("bun"),
      "test",
      "--test-name-pattern",
      suite,
      "./conformance.test.ts",
    ]],
  ];
  // The program as each runtime's users start it: npm's bin link (whose
  // first line asks for Node.js), and the packed module with deno and bun.
  const cliBin = join(scratch, "node_modules", "@fedwork", "cli", "dist", "bin.js");
  const cliArgs = ["--app", "./cli-app.ts", "queues", "--json"];
  const clis: Record<string, string[]> = {
    "Node.js": [join(scratch, "node_modules", ".bin", "fedwork"), ...cliArgs],
    Deno: [bin("deno"), "run", "-A", cliBin, ...cliArgs],
    Bun: [bin("bun"), cliBin, ...cliArgs],
  };
  for (const [runtime, app, adapters, suite] of runtimes) {
    await step(
      `ran the app, the adapters, the KV suite, the crash test and fedwork on ${runtime}`,
      async () => {
        const cli = clis[runtime];
        const [appOutput, adaptersOutput, , cliOutput] = await Promise.all([
          run(app[0], app.slice(1), scratch),
          run(adapters[0], adapters.slice(1), scratch),
          run(suite[0], suite.slice(1), scratch),
          run(cli[0], cli.slice(1), scratch),
        ]);
        const roles = (JSON.parse(cliOutput) as { role: string }[]).map((entry) => entry.role);
        if (roles.join(",") !== "inbox,outbox,fanout,task") {
          throw new Error(`fedwork queues --json on ${runtime} printed:\n${cliOutput}`);
        }
        console.log(`  fedwork queues --json ran on ${runtime}: ${roles.join(", ")}`);
        for (
          const [output, prefix] of [
            [appOutput, "packaged task ran on"],
            [adaptersOutput, "packaged adapters ran on"],
          ]
        ) {
          const line = output.split("\n").find((l) => l.startsWith(prefix));
          if (line == null) throw new Error(`${prefix}: no result on ${runtime}:\n${output}`);
          console.log(`  ${line}`);
        }
      },
    );
  }
  // An older Node.js must be refused with a message that names the version
  // it needs.  Only a Node.js outside the workspace can be older (the
  // workspace pins its own); Debian's, at /usr/bin/node, is on this kind of
  // machine.
  await step("tried the published core on an older Node.js", async () => {
    const older = await findOlderNode();
    if (older == null) {
      console.log("  no Node.js older than 24 outside the workspace: not tried");
      return;
    }
    const output = await run(older.path, [
      "--input-type=module",
      "--eval",
      'await import("@fedwork/core"); console.log("loaded");',
    ], scratch).then(
      (out) => `exited 0: ${out}`,
      (error: Error) => error.message,
    );
    if (!output.includes("Fedwork needs Node.js 24 or later")) {
      throw new Error(`Node.js ${older.version} was not refused clearly:\n${output}`);
    }
    console.log(`  Node.js ${older.version} (${older.path}) was refused, naming Node.js 24`);
  });
  console.log("packaging: every package installs and runs from its tarball.");
} catch (error) {
  failed = true;
  console.error(`packaging: ${error instanceof Error ? error.message : error}`);
} finally {
  if (keep) console.log(`The scratch project is in ${scratch}.`);
  else await rm(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
