import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertStrictEquals,
  test,
} from "@fedify/fixture";
import { Create, Link, Mention, Note, PropertyValue } from "@fedify/vocab";
import { parse } from "devalue";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { Temporal } from "@js-temporal/polyfill";
import { decodeTaskPayload, encodeTaskPayload } from "./mod.ts";
import { TaskPayloadDecodingError, TaskPayloadEncodingError } from "../errors.ts";

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

// Written by Fedwork 0.1.0's codec (devalue with its reducers) for
// { activity: Create(Note), at: new Date(0), when: Instant, tags: Map(a ->
// Set(1n)), sparse: [1, , 3], big: 10n }: messages still in queues when a
// deployment upgrades.
const messageFrom010 =
  '[{"activity":1,"at":39,"when":40,"tags":44,"sparse":48,"big":51},["fedwork.vocab",2],[3,4],"Create",{"@context":5,"id":33,"type":3,"actor":34,"object":35},[6,7,8,9,10],"https://w3id.org/identity/v1","https://www.w3.org/ns/activitystreams","https://w3id.org/security/data-integrity/v1","https://gotosocial.org/ns",{"toot":11,"misskey":12,"fedibird":13,"sensitive":14,"votersCount":15,"Emoji":18,"Hashtag":19,"ChatMessage":20,"quote":21,"quoteUrl":24,"_misskey_quote":25,"quoteUri":26,"QuoteAuthorization":27,"QuoteRequest":28,"quoteAuthorization":29,"emojiReactions":31},"http://joinmastodon.org/ns#","https://misskey-hub.net/ns#","http://fedibird.com/ns#","as:sensitive",{"@id":16,"@type":17},"toot:votersCount","http://www.w3.org/2001/XMLSchema#nonNegativeInteger","toot:Emoji","as:Hashtag","http://litepub.social/ns#ChatMessage",{"@id":22,"@type":23},"https://w3id.org/fep/044f#quote","@id","as:quoteUrl","misskey:_misskey_quote","fedibird:quoteUri","https://w3id.org/fep/044f#QuoteAuthorization","https://w3id.org/fep/044f#QuoteRequest",{"@id":30,"@type":23},"https://w3id.org/fep/044f#quoteAuthorization",{"@id":32,"@type":23},"fedibird:emojiReactions","https://example.com/activities/1","https://example.com/users/alice",{"id":36,"type":37,"content":38},"https://example.com/notes/1","Note","Hello \\u003Cworld>",["Date","1970-01-01T00:00:00.000Z"],["fedwork.temporal",41],[42,43],"Temporal.Instant","2024-01-02T03:04:05Z",["Map",45,46],"a",["Set",47],["BigInt","1"],[49,-2,50],1,3,["BigInt","10"]]';

test("decodeTaskPayload reads messages Fedwork 0.1.0 wrote", async () => {
  const decoded = await decodeTaskPayload(messageFrom010, { documentLoader }) as {
    activity: Create;
    at: Date;
    when: Temporal.Instant;
    tags: Map<string, Set<bigint>>;
    sparse: number[];
    big: bigint;
  };
  assertInstanceOf(decoded.activity, Create);
  const object = await decoded.activity.getObject({ documentLoader });
  assertInstanceOf(object, Note);
  assertEquals(object.content?.toString(), "Hello <world>");
  assertEquals(decoded.at, new Date(0));
  assertInstanceOf(decoded.when, Temporal.Instant);
  assertEquals(decoded.when.toString(), "2024-01-02T03:04:05Z");
  assertEquals(decoded.tags, new Map([["a", new Set([1n])]]));
  assertEquals(decoded.sparse, [1, , 3]);
  assertEquals(decoded.big, 10n);
});

test("a message written now can be read the way Fedwork 0.1.0 reads it", async () => {
  const note = new Note({ id: new URL("https://example.com/notes/1"), content: "Hi" });
  const text = await encodeTaskPayload({
    note,
    when: Temporal.Instant.from("2024-01-02T03:04:05Z"),
    map: new Map([[1, new Date(0)]]),
    sparse: [1, , 3],
  });
  // 0.1.0 decoded with devalue's parse() and these revivers, then rebuilt
  // vocabulary objects with fromJsonLd(): a rolling deployment's older
  // workers must still understand new messages.
  const pairs: [string, unknown][] = [];
  const decoded = parse(text, {
    "fedwork.vocab": (pair: [string, unknown]) => {
      pairs.push(pair);
      return pair;
    },
    "fedwork.temporal": ([type, value]: [string, string]) =>
      type === "Temporal.Instant" ? Temporal.Instant.from(value) : undefined,
  }) as { when: Temporal.Instant; map: Map<number, Date>; sparse: number[] };
  assertEquals(decoded.when.toString(), "2024-01-02T03:04:05Z");
  assertEquals(decoded.map, new Map([[1, new Date(0)]]));
  assertEquals(decoded.sparse, [1, , 3]);
  assertEquals(pairs.length, 1);
  assertEquals(pairs[0][0], "Note");
  const rebuilt = await Note.fromJsonLd(pairs[0][1], { documentLoader });
  assertEquals(rebuilt.content?.toString(), "Hi");
});

test("encodeTaskPayload round-trips boxed primitives, null-prototype objects and buffers", async () => {
  const buffer = new ArrayBuffer(8);
  new Uint8Array(buffer).set([1, 2, 3, 4, 5, 6, 7, 8]);
  const nullProto = Object.assign(Object.create(null), { a: 1, constructor: 2 });
  const value = {
    boxed: [Object(1), Object("s"), Object(true), Object(2n)],
    nullProto,
    buffer,
    view: new DataView(buffer, 2, 4),
    part: new Uint16Array(buffer, 2, 2),
    root: undefined,
  };
  const decoded = await roundTrip(value);
  assertEquals(decoded.boxed.map((b: object) => b.valueOf()), [1, "s", true, 2n]);
  assertEquals(Object.getPrototypeOf(decoded.nullProto), null);
  assertEquals({ ...decoded.nullProto }, { a: 1, constructor: 2 });
  assertInstanceOf(decoded.view, DataView);
  assertEquals([decoded.view.byteOffset, decoded.view.byteLength], [2, 4]);
  assertStrictEquals(decoded.view.buffer, decoded.buffer);
  assertStrictEquals(decoded.part.buffer, decoded.buffer);
  assertEquals([...decoded.part], [...value.part]);
  assertEquals(await roundTrip(undefined), undefined);
  assert(Object.is(await roundTrip(-0), -0));
});

test("encodeTaskPayload accepts subclasses of built-ins and the runtime's own Temporal", async () => {
  class Registry extends Map<string, number> {}
  const decoded = await roundTrip({ registry: new Registry([["a", 1]]) });
  assertEquals(decoded.registry, new Map([["a", 1]]));
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  if (native != null) {
    const instant = await roundTrip(native.Instant.from("2024-01-02T03:04:05Z"));
    assertInstanceOf(instant, Temporal.Instant);
    assertEquals(instant.toString(), "2024-01-02T03:04:05Z");
  }
});
