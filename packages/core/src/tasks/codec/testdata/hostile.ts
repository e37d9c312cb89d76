// Generators of hostile input for the task codec, shared by the fuzz test
// and bench/codec.ts; not part of the public API.  Everything is derived
// from a seed, so a failure reproduces from the seed in its message.

/** A deterministic pseudo-random generator (mulberry32). */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One of the items. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

/** Messages built by hand to hit one weakness each. */
export const handmadeHostileMessages: readonly string[] = [
  // An empty sparse array of the largest length: must cost nothing.
  "[[-7,4294967295]]",
  "[[-7,4294967295,4294967294,1],1]",
  "[[-7,4294967296]]",
  "[[-7,-1]]",
  "[[-7,1.5]]",
  "[[-7,10,10,1],1]",
  // Nesting far beyond any stack, in a few kilobytes.
  `[${Array.from({ length: 20_000 }, (_, i) => `[${i + 1}]`).join(",")},0]`,
  `[${Array.from({ length: 20_000 }, (_, i) => `{"a":${i + 1}}`).join(",")},0]`,
  `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
  // Prototype pollution.
  '[{"__proto__":1},{"polluted":2},true]',
  '[{"a":1},{"__proto__":2},{"polluted":3},true]',
  '[["null","__proto__",1],{"polluted":2},true]',
  '[{"constructor":1},{"prototype":2},{"polluted":3},true]',
  // References that go nowhere, or round in circles.
  "[1]",
  "[-8]",
  "[0.5]",
  '["x",-2]',
  "[[0]]",
  '[["Object",0]]',
  '[["Object",-1]]',
  '[["Object",1],[2],3]',
  '[["fedwork.vocab",0]]',
  '[["fedwork.vocab",1],[2,0],"Note"]',
  '[["fedwork.vocab",1],[2,3],"Nope",{}]',
  '[["fedwork.vocab",1],[2,3],"Note",{"@context":4},"https://evil.example/context"]',
  '[["fedwork.vocab",1],[2,3],"Note",["Date",""]]',
  '[["fedwork.vocab",1],[2,3],"Note",[4],["fedwork.vocab",1]]',
  // A sparse array or holes inside JSON-LD, which jsonld.expand() would
  // walk index by index.
  '[["fedwork.vocab",1],[2,3],"Note",[-7,4294967295,0,2]]',
  '[["fedwork.vocab",1],[2,3],"Note",{"https://www.w3.org/ns/activitystreams#content":4},[-7,1000000,0,2]]',
  '[["fedwork.vocab",1],[2,3],"Note",[-2,-2,2]]',
  '[["fedwork.vocab",1],[2,3],"Note",[-1]]',
  '[["fedwork.temporal",0]]',
  '[["fedwork.temporal",1],[2,3],"Temporal.Instant","not a date"]',
  '[["fedwork.temporal",1],[2,3],"Temporal.Nope","x"]',
  // Sizes that allocate: typed arrays, buffers, bigints.
  '[["Uint8Array",1,0,1000000000],["ArrayBuffer","AAAA"]]',
  '[["Uint8Array",1],["Set"]]',
  '[["Uint8Array",1],1000000000]',
  '[["Float64Array",1,3,1],["ArrayBuffer","AAAAAAAAAAA="]]',
  '[["ArrayBuffer","%%%"]]',
  `[["BigInt","${"9".repeat(100_000)}"]]`,
  `[${Array.from({ length: 40 }, (_, i) => `["BigInt","${"7".repeat(1000)}${i}"]`).join(",")}]`,
  '[["BigInt","0x10"]]',
  // Malformed typed values.
  '[["Map",1],1]',
  '[["Map",1,2,3],1,2,3]',
  '[["RegExp","("]]',
  '[["RegExp",1]]',
  '[["URL","not a url"]]',
  '[["Date",5]]',
  '[["Nope",1]]',
  '[["Temporal.ZonedDateTime","2024-01-01T00:00:00[Nowhere/Nope]"]]',
  `[["Temporal.Instant","${"9".repeat(100_000)}"]]`,
  "",
  "{}",
  "[]",
  "null",
  "-9",
  "[",
];

const TAGS = [
  "Date",
  "RegExp",
  "URL",
  "URLSearchParams",
  "BigInt",
  "Object",
  "Set",
  "Map",
  "null",
  "ArrayBuffer",
  "Uint8Array",
  "Float64Array",
  "DataView",
  "fedwork.vocab",
  "fedwork.temporal",
  "Temporal.Instant",
  "Temporal.Duration",
  "Nope",
];

function randomToken(random: SeededRandom, entries: number): string {
  switch (random.int(12)) {
    case 0:
      return String(random.int(entries + 2));
    case 1:
      return String(-random.int(9));
    case 2:
      return String(random.pick([4294967295, 4294967296, 2 ** 53, 1e308, -0, 0.5, 1e9]));
    case 3:
      return JSON.stringify(random.pick(TAGS));
    case 4:
      return '"__proto__"';
    case 5:
      return `[${JSON.stringify(random.pick(TAGS))},${random.int(entries + 1)}]`;
    case 6:
      return `[-7,${random.pick([0, 3, 4294967295, 1e6])},${random.int(5)},${random.int(entries)}]`;
    case 7:
      return `{"${random.pick(["a", "__proto__", "constructor", "then"])}":${
        random.int(entries + 1)
      }}`;
    case 8:
      return `[${random.int(entries)},${random.int(entries)}]`;
    case 9:
      return '"x"';
    case 10:
      return random.pick(["null", "true", "[]", "{}"]);
    default:
      return `[-2,${random.int(entries)},-2]`;
  }
}

/**
 * Mutates an encoded payload: mostly by replacing a value somewhere in its
 * parsed entries with a random reference, tag or structure (so that the
 * result is still JSON but no longer a well-formed payload), sometimes by
 * editing the text (so that it is not even JSON).
 */
function mutate(text: string, random: SeededRandom): string {
  if (random.int(5) === 0) {
    const at = random.int(text.length);
    return random.int(2) === 0
      ? text.slice(0, at)
      : text.slice(0, at) + randomToken(random, 8) + text.slice(at);
  }
  const entries = JSON.parse(text) as unknown;
  if (!Array.isArray(entries)) return randomStructure(random);
  const edits = 1 + random.int(3);
  for (let e = 0; e < edits; e++) {
    // Walk down to a random container, then replace one of its values.
    let container: unknown[] | Record<string, unknown> = entries;
    for (let step = random.int(3); step > 0; step--) {
      const values = Object.values(container).filter((v) => v != null && typeof v === "object");
      if (values.length === 0) break;
      container = random.pick(values) as unknown[] | Record<string, unknown>;
    }
    const keys = Object.keys(container);
    const replacement = JSON.parse(randomToken(random, entries.length));
    if (keys.length === 0 || random.int(6) === 0) {
      if (Array.isArray(container)) container.push(replacement);
      else container[random.pick(["a", "__proto__", "then", "0"])] = replacement;
    } else {
      (container as Record<string, unknown>)[random.pick(keys)] = replacement;
    }
  }
  return JSON.stringify(entries);
}

/** A random wire string that is JSON but was never written by the codec. */
function randomStructure(random: SeededRandom): string {
  const count = 1 + random.int(12);
  const entries: string[] = [];
  for (let i = 0; i < count; i++) entries.push(randomToken(random, count));
  return `[${entries.join(",")}]`;
}

/**
 * Generates malformed wire strings: the hand-made ones, then mutations of
 * `validMessages` and random structures.
 * @param seed The seed.
 * @param count How many to generate beyond the hand-made ones.
 * @param validMessages Encoded payloads to mutate.
 */
export function generateHostileMessages(
  seed: number,
  count: number,
  validMessages: readonly string[],
): string[] {
  const random = new SeededRandom(seed);
  const messages = [...handmadeHostileMessages];
  for (let i = 0; i < count; i++) {
    messages.push(
      random.int(4) === 0 || validMessages.length === 0
        ? randomStructure(random)
        : mutate(random.pick(validMessages), random),
    );
  }
  return messages;
}

class MapSubclass extends Map<string, number> {}

class Point {
  x = 1;
}

let thenCalls = 0;

/** How often the codec called then() on a generated thenable: must be 0. */
export function thenableCalls(): number {
  return thenCalls;
}

class Thenable {
  then(resolve: (value: unknown) => void): void {
    thenCalls++;
    resolve(42);
  }
}

function nest(depth: number, leaf: unknown, random: SeededRandom): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) {
    value = random.int(3) === 0 ? [value] : random.int(2) === 0 ? { a: value } : new Map([[
      "k",
      value,
    ]]);
  }
  return value;
}

function hostileLeaf(random: SeededRandom): unknown {
  switch (random.int(22)) {
    case 0:
      return () => {};
    case 1:
      return Symbol("s");
    case 2:
      return new Promise(() => {});
    case 3:
      return Promise.resolve(42);
    case 4:
      return new Thenable();
    case 5:
      return new Point();
    case 6:
      return Object.defineProperty({}, "boom", {
        enumerable: true,
        get() {
          throw new Error("getter");
        },
      });
    case 7:
      return new Proxy({}, {
        ownKeys() {
          throw new Error("trap");
        },
      });
    case 8: {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case 9:
      return new Proxy([1, 2, 3], {
        get(target, key) {
          if (key === "length") return 1e9;
          return Reflect.get(target, key);
        },
        has() {
          return true;
        },
      });
    case 10: {
      const sparse: unknown[] = [];
      sparse[random.pick([5e7, 2 ** 32 - 2, 1e6])] = 1;
      return sparse;
    }
    case 11: {
      const sparse: unknown[] = [];
      sparse.length = 2 ** 32 - 1;
      return sparse;
    }
    case 12:
      return JSON.parse('{"__proto__": {"polluted": true}}');
    case 13:
      return { [Symbol("k")]: 1 };
    case 14:
      return {
        then: () => {
          thenCalls++;
        },
      };
    case 15:
      return 10n ** BigInt(random.pick([10, 20_000]));
    case 16:
      return "x".repeat(random.pick([10, 2_000_000]));
    case 17:
      return new Uint8Array(new ArrayBuffer(16), 4, 8);
    case 18:
      return new Array(random.pick([10, 3_000_000])).fill(undefined);
    case 19: {
      const cycle: Record<string, unknown> = { name: "cycle" };
      cycle.self = cycle;
      return cycle;
    }
    case 20:
      return Object.create(Object.create(null));
    default:
      return new MapSubclass([["k", 1]]);
  }
}

/**
 * Generates hostile payloads for the encoder: values it must refuse (or
 * carry) without hanging, calling then(), or throwing anything but its own
 * error.
 * @param seed The seed.
 * @param count How many.
 */
export function generateHostilePayloads(seed: number, count: number): unknown[] {
  const random = new SeededRandom(seed);
  const payloads: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const leaf = hostileLeaf(random);
    const depth = random.pick([0, 1, 3, 300, 5_000]);
    payloads.push(nest(depth, { ok: "yes", leaf }, random));
  }
  return payloads;
}
