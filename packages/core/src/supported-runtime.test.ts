import { assert, assertEquals, test } from "@fedify/fixture";
import { MINIMUM_NODE_MAJOR, unsupportedRuntimeMessage } from "./supported-runtime.ts";

test("an older Node.js is refused with a message naming both versions", () => {
  // Node.js 20 has no navigator; Node.js 21 and later say "Node.js/<major>".
  const message = unsupportedRuntimeMessage({ node: "20.20.2", deno: false, bun: false });
  assert(
    unsupportedRuntimeMessage({ node: "22.1.0", deno: false, bun: false, userAgent: "Node.js/22" }),
  );
  assert(message != null);
  assert(message.includes(`Node.js ${MINIMUM_NODE_MAJOR} or later`), message);
  assert(message.includes("this is Node.js 20.20.2"), message);
});

test("Node.js 24 and later, Deno and Bun load Fedwork", () => {
  assertEquals(unsupportedRuntimeMessage({ node: "24.0.0", deno: false, bun: false }), undefined);
  assertEquals(unsupportedRuntimeMessage({ node: "26.1.0", deno: false, bun: false }), undefined);
  // Deno and Bun report the Node.js version their compatibility layer
  // follows, which says nothing about what they support.
  assertEquals(unsupportedRuntimeMessage({ node: "20.11.1", deno: true, bun: false }), undefined);
  assertEquals(unsupportedRuntimeMessage({ node: "20.11.1", deno: false, bun: true }), undefined);
  // workerd with nodejs_compat says Node.js 22 and is no Node.js.
  assertEquals(
    unsupportedRuntimeMessage({
      node: "22.23.4",
      deno: false,
      bun: false,
      userAgent: "Cloudflare-Workers",
    }),
    undefined,
  );
  // workerd without nodejs_compat has no process.versions at all.
  assertEquals(unsupportedRuntimeMessage({ deno: false, bun: false }), undefined);
});

test("the runtime running this test loads @fedwork/core", async () => {
  const core = await import("@fedwork/core");
  assertEquals(typeof core.createFederation, "function");
});
