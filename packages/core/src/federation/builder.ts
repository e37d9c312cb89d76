import { FederatableImpl } from "./federatable.ts";
import type { Federatable } from "./federatable-api.ts";
import { type Federation, FederationImpl } from "./federation.ts";
import type { FederationOptions } from "./options.ts";
import { cloneRegistry, createRegistry } from "./registry.ts";

/**
 * Collects registrations before the federation's options are known (e.g.
 * in a module that does not own the KV store), then builds federations.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface FederationBuilder<TContextData> extends Federatable<TContextData> {
  /**
   * Builds a federation with a copy of the registrations made so far;
   * later registrations on the builder do not reach it.
   * @param options The federation options; `kv` is required.
   * @returns The federation.
   * @throws {FederationOptionError} When an option is missing or invalid.
   */
  build(options: FederationOptions<TContextData>): Promise<Federation<TContextData>>;
}

class FederationBuilderImpl<TContextData> extends FederatableImpl<TContextData>
  implements FederationBuilder<TContextData> {
  build(options: FederationOptions<TContextData>): Promise<Federation<TContextData>> {
    try {
      return Promise.resolve(new FederationImpl(options, cloneRegistry(this.registry)));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/**
 * Creates a federation builder.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @returns The builder.
 * @example
 * ```ts
 * const builder = createFederationBuilder<void>();
 * builder.setActorDispatcher("/users/{identifier}", dispatchActor);
 * const federation = await builder.build({ kv: new MemoryKvStore() });
 * ```
 * @since 0.1.0
 */
export function createFederationBuilder<TContextData>(): FederationBuilder<TContextData> {
  return new FederationBuilderImpl(createRegistry());
}
