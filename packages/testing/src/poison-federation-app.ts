// The app of the federation poison test, shared by the web process (the
// test) and the worker process: one builder, an inbox listener on Create.
import { createFederationBuilder, type FederationBuilder } from "@fedwork/core";
import { Create } from "@fedify/vocab";

/**
 * Builds the app's federation builder.
 * @param onCreate What the inbox listener does with a Create.
 * @returns The builder.
 */
export function definePoisonApp(
  onCreate: (create: Create) => Promise<void> | void,
): FederationBuilder<void> {
  const builder = createFederationBuilder<void>();
  builder.setActorDispatcher("/users/{identifier}", () => null);
  builder.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Create, (_ctx, create) => onCreate(create));
  return builder;
}
