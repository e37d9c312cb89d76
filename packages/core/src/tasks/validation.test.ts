import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import { formatIssuePath, TaskValidationError } from "./errors.ts";
import { validateTaskPayload } from "./validation.ts";

test("validateTaskPayload returns the schema's output", async () => {
  const schema = z.object({ when: z.coerce.date(), n: z.number().transform((n) => n * 2) });
  const output = await validateTaskPayload(
    { name: "t", schema },
    { when: "2024-01-02T03:04:05.000Z", n: 21 },
  );
  assertEquals(output, { when: new Date("2024-01-02T03:04:05.000Z"), n: 42 });
});

test("validateTaskPayload lists each issue's path and message", async () => {
  const schema = z.object({ items: z.array(z.object({ name: z.string() })), count: z.number() });
  const error = await assertRejects(
    () => validateTaskPayload({ name: "import", schema }, { items: [{ name: 1 }], count: "x" }),
    TaskValidationError,
    '"import"',
  );
  assertEquals(error.taskName, "import");
  assertEquals(error.issues.length, 2);
  const lines = error.message.split("\n").slice(1).map((line) => line.split(":")[0].trim());
  assertEquals(lines.sort(), ["- count", "- items[0].name"]);
  for (const issue of error.issues) {
    assertEquals(error.message.includes(issue.message), true);
  }
});

test("validateTaskPayload works with Valibot and ArkType issues", async () => {
  const valibot = v.object({ tags: v.array(v.string()) });
  const valibotError = await assertRejects(
    () => validateTaskPayload({ name: "v", schema: valibot }, { tags: ["a", 2] }),
    TaskValidationError,
    "tags[1]",
  );
  assertEquals(valibotError.issues.length, 1);
  const arktype = type({ user: { id: "string" } });
  await assertRejects(
    () => validateTaskPayload({ name: "a", schema: arktype }, { user: { id: 3 } }),
    TaskValidationError,
    "user.id",
  );
});

test("validateTaskPayload awaits an async schema", async () => {
  const schema = z.string().refine(async (s) => {
    await Promise.resolve();
    return s.startsWith("ok");
  }, "must start with ok");
  assertEquals(await validateTaskPayload({ name: "async", schema }, "ok then"), "ok then");
  await assertRejects(
    () => validateTaskPayload({ name: "async", schema }, "nope"),
    TaskValidationError,
    "must start with ok",
  );
});

test("formatIssuePath writes paths the way JavaScript would", () => {
  assertEquals(formatIssuePath(undefined), "(root)");
  assertEquals(formatIssuePath([]), "(root)");
  assertEquals(formatIssuePath(["items", 0, "name"]), "items[0].name");
  assertEquals(formatIssuePath([{ key: "a" }, { key: 2 }]), "a[2]");
  assertEquals(formatIssuePath(["with space", "ok"]), '["with space"].ok');
});
