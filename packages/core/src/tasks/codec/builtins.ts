import { Temporal } from "@js-temporal/polyfill";
import { TYPED_ARRAY_TAGS } from "./wire.ts";

/**
 * What the encoder does with an object, decided once per prototype.  The
 * built-ins are recognised by prototype identity (a class that extends one
 * by walking its prototype chain), never by `Symbol.toStringTag`, which
 * any object can fake.
 */
export type BuiltinKind =
  | "Date"
  | "RegExp"
  | "Map"
  | "Set"
  | "URL"
  | "URLSearchParams"
  | "ArrayBuffer"
  | "DataView"
  | "Number"
  | "String"
  | "Boolean"
  | "BigInt"
  | "Promise"
  | `TypedArray:${string}`
  | `Temporal.${string}`;

const builtinPrototypes = new Map<object, BuiltinKind>([
  [Date.prototype, "Date"],
  [RegExp.prototype, "RegExp"],
  [Map.prototype, "Map"],
  [Set.prototype, "Set"],
  [URL.prototype, "URL"],
  [URLSearchParams.prototype, "URLSearchParams"],
  [ArrayBuffer.prototype, "ArrayBuffer"],
  [DataView.prototype, "DataView"],
  [Number.prototype, "Number"],
  [String.prototype, "String"],
  [Boolean.prototype, "Boolean"],
  [BigInt.prototype, "BigInt"],
  [Promise.prototype, "Promise"],
]);
for (const tag of TYPED_ARRAY_TAGS) {
  const constructor = (globalThis as Record<string, unknown>)[tag];
  if (typeof constructor === "function") {
    builtinPrototypes.set(constructor.prototype, `TypedArray:${tag}`);
  }
}

// devalue knows Temporal objects but revives them with the global
// Temporal, which Node.js lacks; Fedwork revives them with the polyfill it
// uses everywhere, and accepts the runtime's own Temporal (Deno, Bun) too.
const temporalClasses = {
  Duration: Temporal.Duration,
  Instant: Temporal.Instant,
  PlainDate: Temporal.PlainDate,
  PlainTime: Temporal.PlainTime,
  PlainDateTime: Temporal.PlainDateTime,
  PlainMonthDay: Temporal.PlainMonthDay,
  PlainYearMonth: Temporal.PlainYearMonth,
  ZonedDateTime: Temporal.ZonedDateTime,
} as const;
const nativeTemporal =
  (globalThis as unknown as { Temporal?: Record<string, { prototype: object }> })
    .Temporal;
for (const name of Object.keys(temporalClasses) as (keyof typeof temporalClasses)[]) {
  builtinPrototypes.set(temporalClasses[name].prototype, `Temporal.${name}`);
  const native = nativeTemporal?.[name]?.prototype;
  if (native != null) builtinPrototypes.set(native, `Temporal.${name}`);
}

/**
 * Finds the built-in a prototype belongs to, itself or through the chain.
 * @returns The built-in, or `undefined` for any other prototype.
 */
export function builtinKindOf(proto: object): BuiltinKind | undefined {
  for (let p: object | null = proto; p != null; p = Object.getPrototypeOf(p)) {
    const kind = builtinPrototypes.get(p);
    if (kind != null) return kind;
  }
  return undefined;
}

/**
 * Rebuilds a Temporal object from its type ("Temporal.Instant") and text.
 * @throws {TypeError} When the type is unknown.
 * @throws {RangeError} When the text is not valid for the type.
 */
export function reviveTemporal(type: string, text: string): unknown {
  const name = type.startsWith("Temporal.") ? type.slice(9) : "";
  if (!Object.hasOwn(temporalClasses, name)) {
    throw new TypeError(`unknown Temporal type ${JSON.stringify(type)}.`);
  }
  return temporalClasses[name as keyof typeof temporalClasses].from(text);
}

type Base64Codec = {
  encode(bytes: Uint8Array): string;
  decode(text: string): Uint8Array;
};

// Uint8Array.toBase64() where the runtime has it (Deno, Bun), Buffer on
// Node.js, atob/btoa as the last resort.
const base64: Base64Codec = (() => {
  const u8 = Uint8Array as unknown as {
    fromBase64?: (text: string) => Uint8Array;
    prototype: { toBase64?: () => string };
  };
  if (typeof u8.fromBase64 === "function" && typeof u8.prototype.toBase64 === "function") {
    return {
      encode: (bytes) => (bytes as unknown as { toBase64(): string }).toBase64(),
      decode: (text) => u8.fromBase64!(text),
    };
  }
  const buffer = (globalThis as {
    Buffer?: {
      from(data: Uint8Array | string, encoding?: string): Uint8Array & {
        toString(encoding: string): string;
      };
    };
  }).Buffer;
  if (buffer != null) {
    return {
      encode: (bytes) => buffer.from(bytes).toString("base64"),
      decode: (text) => {
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
          throw new TypeError("invalid base64.");
        }
        return new Uint8Array(buffer.from(text, "base64"));
      },
    };
  }
  return {
    encode(bytes) {
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return btoa(binary);
    },
    decode(text) {
      const binary = atob(text);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      return bytes;
    },
  };
})();

/** Encodes bytes as base64 (with padding), as devalue does. */
export function encodeBase64(bytes: Uint8Array): string {
  return base64.encode(bytes);
}

/**
 * Decodes base64 (with padding) into a fresh buffer.
 * @throws {TypeError} When the text is not base64.
 */
export function decodeBase64(text: string): ArrayBuffer {
  const bytes = base64.decode(text);
  // A fresh, exactly sized buffer: Buffer.from() may return a view into a
  // shared pool.
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength &&
      bytes.buffer instanceof ArrayBuffer
    ? bytes.buffer
    : bytes.slice().buffer as ArrayBuffer;
}
