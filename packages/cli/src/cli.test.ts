// The `fedwork` program's command line, in child processes: help, the
// errors of a malformed command line (one line, exit code 2), and how the
// app's module is found.
import { assert, assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { createFederation, MemoryKvStore, UnknownOptionError } from "@fedwork/core";
import { runCli } from "./mod.ts";
import { runFedwork } from "./testdata/run-cli.ts";

test("fedwork --help lists every command and exits 0", async () => {
  const run = await runFedwork(["--help"]);
  assertEquals(run.code, 0, run.stderr);
  for (
    const command of [
      "queues",
      "workers",
      "failed list",
      "failed show <id>",
      "failed replay <id>",
      "failed discard <id>",
      "completed",
      "cancel <taskId>",
      "pause [<task>]",
      "resume [<task>]",
      "paused",
      "hosts release <host>",
      "tail",
      "schedules",
      "webhooks",
    ]
  ) {
    assert(run.stdout.includes(`  ${command} `), `--help lists ${command}:\n${run.stdout}`);
  }
  const replay = await runFedwork(["failed", "replay", "--help"]);
  assertEquals(replay.code, 0, replay.stderr);
  assertMatch(replay.stdout, /^Usage: fedwork --app <module> failed replay <id>$/m);
});

test("a malformed command line exits 2 with one line naming what was wrong", async () => {
  const cases: [string[], RegExp][] = [
    [["queus"], /^fedwork: unknown command "queus"; did you mean queues\?/],
    [["failed", "bogus"], /^fedwork: unknown command fedwork failed bogus; .*replay/],
    [["queues"], /^fedwork: missing --app: /],
    [
      ["failed", "list", "--limitt", "3"],
      /^fedwork: unknown option --limitt; did you mean --limit\?/,
    ],
    [["failed", "show"], /^fedwork: missing <id>: fedwork failed show <id>\.$/],
    [["tail", "--count", "0"], /^fedwork: --count must be a positive integer, not "0"\.$/],
    [["queues", "--reason", "x"], /^fedwork: fedwork queues takes no --reason; /],
    [
      ["--app", "./testdata/missing.ts", "queues"],
      /^fedwork: --app \.\/testdata\/missing\.ts: no such file\.$/,
    ],
    [
      ["--app", "./testdata/no-federation.ts", "queues"],
      /^fedwork: --app \.\/testdata\/no-federation\.ts: the module exports no federation; export it as `federation` or as the default export/,
    ],
  ];
  for (const [args, message] of cases) {
    const run = await runFedwork(args);
    assertEquals(run.code, 2, `fedwork ${args.join(" ")}: ${run.stderr}`);
    assertEquals(run.stdout, "", `fedwork ${args.join(" ")}`);
    assertMatch(run.stderr.trimEnd(), message);
    assertEquals(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
  }
});

test("fedwork finds a federation exported as `federation`, and takes FEDWORK_APP for --app", async () => {
  const run = await runFedwork(["queues", "--json"], { FEDWORK_APP: "./testdata/named-export.ts" });
  assertEquals(run.code, 0, run.stderr);
  assertEquals(JSON.parse(run.stdout), []);
  const hosts = await runFedwork(["--app", "./testdata/named-export.ts", "hosts"]);
  assertEquals([hosts.code, hosts.stdout], [0, "No unhealthy hosts.\n"]);
});

test("runCli() runs a command line on a federation it is given and checks its options", async () => {
  const federation = createFederation<void>({ kv: new MemoryKvStore() });
  let out = "";
  let err = "";
  const io = {
    stdout: (text: string) => void (out += text),
    stderr: (text: string) => void (err += text),
  };
  assertEquals(await runCli(["hosts", "--json"], { ...io, federation }), 0);
  assertEquals([out, err], ["[]\n", ""]);
  assertEquals(await runCli(["failed", "show", "nope"], { ...io, federation }), 1);
  assertEquals(err, 'fedwork: no failed task "nope".\n');
  assertThrows(
    () => runCli(["queues"], { ...io, federaton: federation } as never),
    UnknownOptionError,
    "federation",
  );
  assertThrows(() => runCli(["queues"], { stdout: io.stdout } as never), TypeError, "stderr");
});
