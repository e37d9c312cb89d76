import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { RouteConflictError, UriBuildError, UriTemplateError } from "./errors.ts";
import { Router } from "./router.ts";

function fedifyRoutes(): Router {
  const router = new Router();
  router.add("/users/{identifier}", "actor");
  router.add("/users/{identifier}/inbox", "inbox");
  router.add("/users/{identifier}/followers", "followers");
  router.add("/users/{identifier}/posts/{id}", "object");
  router.add("/inbox", "sharedInbox");
  router.add("/nodeinfo/2.1", "nodeInfo");
  return router;
}

test("the router matches paths to named routes with decoded values", () => {
  const router = fedifyRoutes();
  assertEquals(router.route("/users/alice/inbox"), {
    name: "inbox",
    template: "/users/{identifier}/inbox",
    values: { identifier: "alice" },
  });
  assertEquals(router.route("https://example.com/users/al%20ice/posts/42?page=1")?.values, {
    identifier: "al ice",
    id: "42",
  });
  assertEquals(router.route("/inbox")?.name, "sharedInbox");
  assertEquals(router.route("/users/alice/outbox"), null);
  assertEquals(router.route("/users/"), null);
  assertEquals(router.route("/users/%E0%A4%A/inbox"), null);
});

test("the router builds paths that route back to the same values", () => {
  const router = fedifyRoutes();
  for (const identifier of ["alice", "a b/c?d#e", "ünï", "it's(*)!", "~._-"]) {
    const path = router.build("object", { identifier, id: "1" });
    assertEquals(router.route(path)?.values, { identifier, id: "1" }, path);
  }
  assertEquals(router.build("actor", { identifier: "a b" }), "/users/a%20b");
  assertThrows(() => router.build("actor", {}), UriBuildError, "{identifier}");
  assertThrows(() => router.build("actor", { identifier: "" }), UriBuildError);
  assertThrows(() => router.build("missing", {}), UriBuildError, "missing");
});

test("the router refuses templates that could match the same path, naming one", () => {
  const router = fedifyRoutes();
  const error = assertThrows(
    () => router.add("/users/{handle}", "profile"),
    RouteConflictError,
    "both match /users/",
  );
  assertEquals(error.conflictsWith, "/users/{identifier}");
  assertThrows(() => router.add("/users/me", "me"), RouteConflictError, "both match /users/me");
  assertThrows(() => router.add("/users/{a}/posts/x{b}", "x"), RouteConflictError);
  assertThrows(() => router.add("/inbox/", "inbox"), RouteConflictError, "already exists");
  // A variable spans a whole segment part, so it also matches "alice.json".
  assertThrows(
    () => router.add("/users/{identifier}.json", "json"),
    RouteConflictError,
    "both match /users/x.json",
  );
  // Literal parts that differ keep templates apart, also within a segment.
  router.add("/notes/{id}.json", "json");
  router.add("/notes/{id}.html", "html");
  router.add("/@{handle}", "handle");
  assertEquals(router.route("/notes/1.json")?.values, { id: "1" });
  assertEquals(router.route("/notes/1.html")?.name, "html");
});

test("the router rejects malformed and beyond-level-1 templates", () => {
  const router = new Router();
  for (
    const [template, text] of [
      ["users/{id}", "start with /"],
      ["/users/{id", "no matching }"],
      ["/users/id}", "no matching {"],
      ["/users/{+id}", "only simple"],
      ["/search{?q}", "only simple"],
      ["/users/{a-b}", "not a variable name"],
      ["/users/{id}/{id}", "appears twice"],
      ["/users/{a}{b}", "directly follows"],
      ["/users?x", "cannot contain"],
    ]
  ) {
    assertThrows(() => router.add(template, template), UriTemplateError, text);
  }
});
