import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
  test,
} from "@fedify/fixture";
import { Create, Link, Mention, Note, PropertyValue } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import { decodeTaskPayload, encodeTaskPayload } from "./codec.ts";
import { TaskPayloadDecodingError, TaskPayloadEncodingError } from "./errors.ts";

/** Serves the preloaded JSON-LD contexts; anything else fails (no network). */
const documentLoader: DocumentLoader = (url) => {
  const document = preloadedContexts[url];
  if (document == null) return Promise.reject(new Error(`No network in tests: ${url}`));
  return Promise.resolve({ documentUrl: url, document, contextUrl: null });
};

async function roundTrip<T>(value: T): Promise<T> {
  const text = await encodeTaskPayload(value);
  assertEquals(typeof text, "string");
  return await decodeTaskPayload(text, { documentLoader }) as T;
}

test("encodeTaskPayload round-trips JSON values", async () => {
  const value = { s: "text", n: 42, b: true, nil: null, list: [1, "two", [3]], nested: { a: {} } };
  assertEquals(await roundTrip(value), value);
});

test("encodeTaskPayload round-trips values JSON cannot carry", async () => {
  const value = {
    undef: undefined,
    nan: Number.NaN,
    negativeZero: -0,
    infinity: Number.POSITIVE_INFINITY,
    negativeInfinity: Number.NEGATIVE_INFINITY,
    big: 12345678901234567890n,
    date: new Date("2024-05-06T07:08:09.010Z"),
    url: new URL("https://example.com/path?q=1#frag"),
    regexp: /ab+c/gi,
    map: new Map<unknown, unknown>([["a", 1], [2, new Date(0)]]),
    set: new Set([1, "two", 3n]),
    bytes: new Uint8Array([0, 1, 255]),
    floats: new Float64Array([1.5, -2.25]),
    bigints: new BigInt64Array([-1n, 2n]),
  };
  const decoded = await roundTrip(value);
  assertEquals(decoded, value);
  assert(Object.hasOwn(decoded, "undef"), "the undefined property was dropped");
  assert(Object.is(decoded.negativeZero, -0), "-0 came back as +0");
  assertInstanceOf(decoded.url, URL);
  assertInstanceOf(decoded.bytes, Uint8Array);
});

test("encodeTaskPayload round-trips Temporal objects on every runtime", async () => {
  const value = {
    instant: Temporal.Instant.from("2024-05-06T07:08:09.123456789Z"),
    duration: Temporal.Duration.from({ hours: 1, minutes: 30 }),
    date: Temporal.PlainDate.from("2024-02-29"),
    zoned: Temporal.ZonedDateTime.from("2024-03-10T12:00:00+09:00[Asia/Seoul]"),
  };
  const decoded = await roundTrip(value);
  assertInstanceOf(decoded.instant, Temporal.Instant);
  assert(decoded.instant.equals(value.instant));
  assertInstanceOf(decoded.duration, Temporal.Duration);
  assertEquals(decoded.duration.toString(), "PT1H30M");
  assertInstanceOf(decoded.date, Temporal.PlainDate);
  assert(decoded.date.equals(value.date));
  assertInstanceOf(decoded.zoned, Temporal.ZonedDateTime);
  assert(decoded.zoned.equals(value.zoned));
});

test("encodeTaskPayload round-trips special values nested in maps, sets and arrays", async () => {
  const inner = { when: new Date(1_000), id: 7n };
  const value = [
    new Map<unknown, unknown>([[new Date(5), new Set([new URL("https://a.example/")])]]),
    new Set([inner]),
    [[undefined, Number.NaN]],
  ];
  assertEquals(await roundTrip(value), value);
});

test("encodeTaskPayload preserves shared references", async () => {
  const shared = { name: "shared" };
  const value = { a: shared, b: [shared], c: new Map([["k", shared]]) };
  const decoded = await roundTrip(value);
  assertStrictEquals(decoded.a, decoded.b[0]);
  assertStrictEquals(decoded.a, decoded.c.get("k"));
});

test("encodeTaskPayload preserves cyclic references", async () => {
  const node: { name: string; self?: unknown; children: unknown[] } = {
    name: "root",
    children: [],
  };
  node.self = node;
  node.children.push({ parent: node });
  const decoded = await roundTrip(node);
  assertStrictEquals(decoded.self, decoded);
  assertStrictEquals((decoded.children[0] as { parent: unknown }).parent, decoded);
});

test("encodeTaskPayload keeps constructor as an ordinary key", async () => {
  const value = { constructor: 1, toString: "text" };
  assertEquals(await roundTrip(value), value);
});

test("encodeTaskPayload rejects an own __proto__ key instead of touching prototypes", async () => {
  const value = JSON.parse('{"nested": {"__proto__": {"polluted": true}}}');
  await assertRejects(() => encodeTaskPayload(value), TaskPayloadEncodingError, "data.nested");
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});

test("encodeTaskPayload carries a Create wrapping a Note as real instances", async () => {
  const note = new Note({
    id: new URL("https://example.com/notes/1"),
    content: "Hello, world",
    tags: [new Mention({ href: new URL("https://example.com/users/bob") })],
  });
  const create = new Create({
    id: new URL("https://example.com/activities/1"),
    actor: new URL("https://example.com/users/alice"),
    object: note,
  });
  const value = { activity: create, at: new Date(0), seen: new Map([["bob", true]]) };
  const decoded = await roundTrip(value);
  assertInstanceOf(decoded.activity, Create);
  assertEquals(await decoded.activity.toJsonLd(), await create.toJsonLd());
  const object = await decoded.activity.getObject({ documentLoader });
  assertInstanceOf(object, Note);
  assertEquals(await object.toJsonLd(), await note.toJsonLd());
  assertEquals(decoded.at, new Date(0));
  assertEquals(decoded.seen, new Map([["bob", true]]));
});

test("encodeTaskPayload carries vocabulary objects nested in maps, sets and arrays", async () => {
  const note = new Note({ content: "in a map" });
  const value = {
    list: [new Note({ content: "in a list" })],
    byKey: new Map<unknown, unknown>([[note, new PropertyValue({ name: "k", value: "v" })]]),
    members: new Set([new Link({ href: new URL("https://example.com/") })]),
  };
  const decoded = await roundTrip(value);
  assertInstanceOf(decoded.list[0], Note);
  assertEquals(decoded.list[0].content?.toString(), "in a list");
  const [[key, item]] = [...decoded.byKey];
  assertInstanceOf(key, Note);
  assertEquals((key as Note).content?.toString(), "in a map");
  assertInstanceOf(item, PropertyValue);
  const [member] = [...decoded.members];
  assertInstanceOf(member, Link);
  assertEquals(member.href?.href, "https://example.com/");
});

test("encodeTaskPayload keeps a vocabulary object shared between two places", async () => {
  const note = new Note({ content: "twice" });
  const decoded = await roundTrip({ a: note, b: [note] });
  assertInstanceOf(decoded.a, Note);
  assertStrictEquals(decoded.a, decoded.b[0]);
});

test("encodeTaskPayload rejects a function naming its path", async () => {
  const value = { items: [1, 2, { callback: () => {} }] };
  const error = await assertRejects(
    () => encodeTaskPayload(value),
    TaskPayloadEncodingError,
    "data.items[2].callback",
  );
  assertEquals(error.path, "data.items[2].callback");
});

test("encodeTaskPayload rejects a symbol and a class instance naming their paths", async () => {
  class Point {
    x = 1;
  }
  await assertRejects(
    () => encodeTaskPayload({ tag: Symbol("x") }),
    TaskPayloadEncodingError,
    "data.tag",
  );
  const error = await assertRejects(
    () => encodeTaskPayload({ map: new Map([["p", new Point()]]) }),
    TaskPayloadEncodingError,
  );
  assert(error.path.startsWith("data.map"), error.path);
  assert(error.path.includes('"p"'), error.path);
  await assertRejects(() => encodeTaskPayload(() => {}), TaskPayloadEncodingError, "data");
});

test("decodeTaskPayload rejects a string the codec did not write", async () => {
  for (
    const text of [
      "not json",
      "{}",
      "[",
      '[["fedwork.vocab",1],5]',
      '[["fedwork.temporal",1],["Temporal.Instant","x"]]',
      '[["NoSuchType",1],5]',
    ]
  ) {
    await assertRejects(
      () => decodeTaskPayload(text, { documentLoader }),
      TaskPayloadDecodingError,
    );
  }
});

test("decodeTaskPayload rejects an unknown vocabulary class", async () => {
  const text = (await encodeTaskPayload(new Note({ content: "x" }))).replace('"Note"', '"Nope"');
  await assertRejects(
    () => decodeTaskPayload(text, { documentLoader }),
    TaskPayloadDecodingError,
    "Nope",
  );
});
