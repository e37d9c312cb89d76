import { assert, assertEquals, test } from "@fedify/fixture";
import { cloneRegistry, createRegistry } from "./registry.ts";
import type { FederationRegistry } from "./registry-api.ts";

test("cloneRegistry() copies maps and clones objects that have a clone() method", () => {
  class Store {
    readonly names: string[];
    constructor(names: string[] = []) {
      this.names = names;
    }
    clone(): Store {
      return new Store([...this.names]);
    }
  }
  const registry = { ...createRegistry<void>(), store: new Store(["a"]) };
  const copy = cloneRegistry(registry as FederationRegistry<void>) as typeof registry;
  copy.store.names.push("b");
  copy.inboxListeners.set(class {} as never, () => {});
  assertEquals([registry.store.names, registry.inboxListeners.size], [["a"], 0]);
  assert(copy.store instanceof Store, "the clone keeps its class");
});
