import type { KvKey, KvStore, KvStoreListEntry } from "./kv-store.ts";

/** One rewrite of {@link withKeyPrefixes}: keys under `from` go under `to`. */
export interface KeyPrefixRewrite {
  readonly from: KvKey;
  readonly to: KvKey;
}

function startsWith(key: KvKey, prefix: KvKey): boolean {
  return prefix.length <= key.length && prefix.every((part, i) => key[i] === part);
}

function rewrite(key: KvKey, rewrites: readonly KeyPrefixRewrite[], back: boolean): KvKey {
  for (const { from, to } of rewrites) {
    const [source, target] = back ? [to, from] : [from, to];
    if (startsWith(key, source)) return [...target, ...key.slice(source.length)];
  }
  return key;
}

/**
 * Wraps a key–value store so that the keys under each `from` prefix are
 * stored under its `to` prefix instead (the federation's `kvPrefixes`
 * option): every method, `list()` included, whose keys come back under the
 * prefix the caller used.  Internal.
 * @param store The store.
 * @param rewrites The prefixes to move, none a prefix of another `to`.
 * @returns The wrapped store (`getMany`, `setMany` and `cas` only when
 *          `store` has them), or `store` itself when there is nothing to
 *          move.
 * @since 0.4.0
 */
export function withKeyPrefixes(store: KvStore, rewrites: readonly KeyPrefixRewrite[]): KvStore {
  const moved = rewrites.filter(({ from, to }) =>
    from.length !== to.length || from.some((part, i) => to[i] !== part)
  );
  if (moved.length === 0) return store;
  const out = (key: KvKey) => rewrite(key, moved, false);
  const wrapped: KvStore = {
    get: <T>(key: KvKey) => store.get<T>(out(key)),
    set: (key, value, options) => store.set(out(key), value, options),
    delete: (key) => store.delete(out(key)),
    list: (prefix) => listBack(store, prefix == null ? undefined : out(prefix), moved),
  };
  const { getMany, setMany, cas } = store;
  if (typeof getMany === "function") {
    wrapped.getMany = <T>(keys: readonly KvKey[]) =>
      getMany.call(store, keys.map(out)) as Promise<(T | undefined)[]>;
  }
  if (typeof setMany === "function") {
    wrapped.setMany = (entries) =>
      setMany.call(store, entries.map((entry) => ({ ...entry, key: out(entry.key) })));
  }
  if (typeof cas === "function") {
    wrapped.cas = (key, expectedValue, newValue, options) =>
      cas.call(store, out(key), expectedValue, newValue, options);
  }
  return wrapped;
}

async function* listBack(
  store: KvStore,
  prefix: KvKey | undefined,
  rewrites: readonly KeyPrefixRewrite[],
): AsyncIterable<KvStoreListEntry> {
  for await (const entry of store.list(prefix)) {
    yield { key: rewrite(entry.key, rewrites, true), value: entry.value };
  }
}
