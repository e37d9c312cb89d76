import { assert, assertEquals, assertStrictEquals, assertThrows, test } from "@fedify/fixture";
import { copyValue } from "./copy-value.ts";

test("copyValue() copies plain objects, arrays and dates without sharing an object", () => {
  const value = {
    id: "a",
    n: 1,
    big: 2n,
    none: null,
    gone: undefined,
    list: [1, "two", { three: 3 }],
    at: new Date(1_700_000_000_000),
  };
  const copy = copyValue(value);
  assertEquals(copy, value);
  assert(copy !== value && copy.list !== value.list && copy.list[2] !== value.list[2]);
  assert(copy.at !== value.at && copy.at instanceof Date);
  assert(Object.hasOwn(copy, "gone"), "an undefined member is kept, as structuredClone() keeps it");
  value.list.push(4);
  (value.list[2] as { three: number }).three = 0;
  assertEquals(copy.list, [1, "two", { three: 3 }]);
});

test("copyValue() gives what structuredClone() gives for values outside the quick path", () => {
  const shared = { s: 1 };
  const both = copyValue({ a: shared, b: shared });
  assertStrictEquals(both.a, both.b, "an object reached twice stays one object");
  const cyclic: { self?: unknown } = {};
  cyclic.self = cyclic;
  const cycleCopy = copyValue(cyclic);
  assertStrictEquals(cycleCopy.self, cycleCopy);

  const map = copyValue({ m: new Map([["k", 1]]) });
  assert(map.m instanceof Map);
  assertEquals(map.m.get("k"), 1);
  const holes = copyValue([1, , 3]);
  assertEquals(1 in holes, false);
  const extra = Object.assign([1, 2], { label: "x" });
  assertEquals((copyValue(extra) as typeof extra).label, "x");
  const proto = JSON.parse('{"__proto__": {"polluted": true}}');
  const protoCopy = copyValue(proto);
  assert(Object.hasOwn(protoCopy, "__proto__"));
  assertEquals(({} as { polluted?: boolean }).polluted, undefined);
  class Point {
    x: number;
    constructor(x: number) {
      this.x = x;
    }
  }
  const point = copyValue({ p: new Point(1) });
  assertEquals(Object.getPrototypeOf(point.p), Object.prototype);
  assertEquals(point.p.x, 1);
  const deep = copyValue(Array.from({ length: 40 }, (_, i) => ({ i })));
  assertEquals(deep[39], { i: 39 });
});

test("copyValue() throws as structuredClone() does for what cannot be cloned", () => {
  assertThrows(() => copyValue({ f: () => 1 }));
  assertThrows(() => copyValue(() => 1));
  assertThrows(() => copyValue(Symbol("s")));
});
