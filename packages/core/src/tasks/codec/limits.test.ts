import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import type { DocumentLoader } from "@fedify/vocab";
import { TaskPayloadDecodingError, TaskPayloadEncodingError } from "../errors.ts";
import {
  decodeTaskPayload,
  DEFAULT_TASK_PAYLOAD_MAX_DEPTH,
  DEFAULT_TASK_PAYLOAD_MAX_SIZE,
  encodeTaskPayload,
} from "./mod.ts";

const documentLoader: DocumentLoader = (url) =>
  Promise.reject(new Error(`No network in tests: ${url}`));

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

test("decodeTaskPayload rebuilds [[-7,4294967295]] without visiting its holes", async () => {
  const decoded = await decodeTaskPayload("[[-7,4294967295]]", { documentLoader }) as unknown[];
  assert(Array.isArray(decoded));
  assertEquals(decoded.length, 4294967295);
  assertEquals(Object.keys(decoded), []);
});

test("encodeTaskPayload encodes a huge sparse array by its present elements", async () => {
  const sparse: unknown[] = [];
  sparse[3] = "a";
  sparse[49_999_999] = new Date(0);
  const text = await encodeTaskPayload({ sparse });
  assert(text.length < 100, text);
  const decoded = await decodeTaskPayload(text, { documentLoader }) as { sparse: unknown[] };
  assertEquals(decoded.sparse.length, 50_000_000);
  assertEquals(Object.keys(decoded.sparse), ["3", "49999999"]);
  assertEquals(decoded.sparse[49_999_999], new Date(0));
});

test("encodeTaskPayload keeps a mildly sparse array's holes", async () => {
  const value = [1, , 3, , 5];
  const decoded = await decodeTaskPayload(await encodeTaskPayload(value), { documentLoader });
  assertEquals(decoded, value);
  assert(!Object.hasOwn(decoded as unknown[], 1));
});

test("encodeTaskPayload refuses promises and thenables without awaiting them", async () => {
  const error = await assertRejects(
    () => encodeTaskPayload({ v: Promise.resolve(42) }),
    TaskPayloadEncodingError,
    "promise",
  );
  assertEquals(error.path, "data.v");
  // A promise that never settles must not hang the encoder.
  await assertRejects(
    () => encodeTaskPayload({ list: [new Promise(() => {})] }),
    TaskPayloadEncodingError,
    "data.list[0]",
  );
  let calls = 0;
  class Lazy {
    then(resolve: (value: unknown) => void) {
      calls++;
      resolve(1);
    }
  }
  await assertRejects(() => encodeTaskPayload({ lazy: new Lazy() }), TaskPayloadEncodingError);
  await assertRejects(
    () => encodeTaskPayload({ plain: { then: () => calls++ } }),
    TaskPayloadEncodingError,
    "data.plain",
  );
  assertEquals(calls, 0);
});

test("encodeTaskPayload turns a throwing getter or proxy trap into its error", async () => {
  const getterError = new Error("getter failed");
  const withGetter = Object.defineProperty({}, "secret", {
    enumerable: true,
    get() {
      throw getterError;
    },
  });
  const error = await assertRejects(
    () => encodeTaskPayload({ a: { b: withGetter } }),
    TaskPayloadEncodingError,
    "getter failed",
  );
  assertEquals(error.path, "data.a.b.secret");
  assertEquals(error.cause, getterError);

  const trap = new Proxy({}, {
    ownKeys() {
      throw new Error("trap failed");
    },
  });
  const trapError = await assertRejects(
    () => encodeTaskPayload({ list: [trap] }),
    TaskPayloadEncodingError,
    "trap failed",
  );
  assertEquals(trapError.path, "data.list[0]");

  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  await assertRejects(() => encodeTaskPayload({ proxy }), TaskPayloadEncodingError, "data.proxy");
});

test("encodeTaskPayload refuses nesting deeper than maxDepth, however deep", async () => {
  assertEquals(DEFAULT_TASK_PAYLOAD_MAX_DEPTH, 256);
  await encodeTaskPayload(nested(DEFAULT_TASK_PAYLOAD_MAX_DEPTH));
  const error = await assertRejects(
    () => encodeTaskPayload(nested(DEFAULT_TASK_PAYLOAD_MAX_DEPTH + 1)),
    TaskPayloadEncodingError,
    "maxDepth",
  );
  assert(error.path.startsWith("data[0].a[0]"), error.path);
  // Far deeper than the stack: still the codec's error, not a RangeError.
  await assertRejects(() => encodeTaskPayload(nested(100_000)), TaskPayloadEncodingError);
  await encodeTaskPayload(nested(4), { maxDepth: 4 });
  await assertRejects(
    () => encodeTaskPayload(nested(5), { maxDepth: 4 }),
    TaskPayloadEncodingError,
    "4 levels",
  );
});

test("decodeTaskPayload refuses nesting deeper than maxDepth, however deep", async () => {
  const text = await encodeTaskPayload(nested(10));
  assertEquals(await decodeTaskPayload(text, { documentLoader }), nested(10));
  await assertRejects(
    () => decodeTaskPayload(text, { documentLoader, maxDepth: 9 }),
    TaskPayloadDecodingError,
    "maxDepth",
  );
  const chain = `[${Array.from({ length: 50_000 }, (_, i) => `[${i + 1}]`).join(",")},0]`;
  await assertRejects(
    () => decodeTaskPayload(chain, { documentLoader }),
    TaskPayloadDecodingError,
    "256 levels",
  );
});

test("encodeTaskPayload and decodeTaskPayload refuse payloads longer than maxSize", async () => {
  assertEquals(DEFAULT_TASK_PAYLOAD_MAX_SIZE, 1_048_576);
  const big = { text: "x".repeat(DEFAULT_TASK_PAYLOAD_MAX_SIZE) };
  await assertRejects(() => encodeTaskPayload(big), TaskPayloadEncodingError, "maxSize");
  const text = await encodeTaskPayload(big, { maxSize: 2 * DEFAULT_TASK_PAYLOAD_MAX_SIZE });
  await assertRejects(
    () => decodeTaskPayload(text, { documentLoader }),
    TaskPayloadDecodingError,
    "maxSize",
  );
  const decoded = await decodeTaskPayload(text, { documentLoader, maxSize: text.length });
  assertEquals(decoded, big);
  // Refused as the output grows, not after building all of it.
  await assertRejects(
    () => encodeTaskPayload(new Array(5_000_000).fill(undefined)),
    TaskPayloadEncodingError,
    "maxSize",
  );
});

test("the limits must be positive integers", async () => {
  await assertRejects(() => encodeTaskPayload(1, { maxDepth: 0 }), RangeError, "maxDepth");
  await assertRejects(
    () => decodeTaskPayload("[1]", { documentLoader, maxSize: 1.5 }),
    RangeError,
    "maxSize",
  );
});

test("bigint values are bounded in digits on both sides", async () => {
  const big = 10n ** 9_000n;
  assertEquals(await decodeTaskPayload(await encodeTaskPayload(big), { documentLoader }), big);
  await assertRejects(
    () => encodeTaskPayload([big, big]),
    TaskPayloadEncodingError,
    "digits",
  );
  await assertRejects(
    () => decodeTaskPayload(`[["BigInt","${"9".repeat(20_000)}"]]`, { documentLoader }),
    TaskPayloadDecodingError,
    "digits",
  );
});

test("decodeTaskPayload refuses __proto__ keys and leaves prototypes alone", async () => {
  for (
    const text of [
      '[{"__proto__":1},{"polluted":2},true]',
      '[["null","__proto__",1],{"polluted":2},true]',
    ]
  ) {
    await assertRejects(
      () => decodeTaskPayload(text, { documentLoader }),
      TaskPayloadDecodingError,
      "__proto__",
    );
  }
  const decoded = await decodeTaskPayload('[{"constructor":1,"prototype":1},{"a":2},true]', {
    documentLoader,
  });
  assertEquals(decoded, { constructor: { a: true }, prototype: { a: true } });
  assertEquals(({} as Record<string, unknown>).polluted, undefined);
});

test("decodeTaskPayload refuses references that go nowhere or round in circles", async () => {
  for (
    const text of [
      "[[1]]",
      "[[-8]]",
      "[[0.5]]",
      '[["Object",0]]',
      '[["fedwork.vocab",0]]',
      '[["Uint8Array",1,0,1000000000],["ArrayBuffer","AAAA"]]',
      '[["Uint8Array",1],1000000000]',
      '[["fedwork.vocab",1],[2,3],"Note",["Date",""]]',
    ]
  ) {
    const error = await assertRejects(
      () => decodeTaskPayload(text, { documentLoader }),
      TaskPayloadDecodingError,
    );
    assertInstanceOf(error, TaskPayloadDecodingError);
  }
});

test("decodeTaskPayload refuses sparse arrays and holes inside JSON-LD, which jsonld would walk", async () => {
  for (
    const jsonLd of [
      "[-7,4294967295,0,2]",
      '{"https://www.w3.org/ns/activitystreams#content":4},[-7,1000000,0,2]',
      "[-2,-2,2]",
      "[-1]",
    ]
  ) {
    await assertRejects(
      () => decodeTaskPayload(`[["fedwork.vocab",1],[2,3],"Note",${jsonLd}]`, { documentLoader }),
      TaskPayloadDecodingError,
      "JSON-LD",
    );
  }
});
