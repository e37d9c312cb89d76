// The Worker the smoke test runs in workerd: one federation with an actor,
// answering through federation.fetch().  The federation is created in the
// first request, not at the module's top level, because Workers forbid
// timers and random values in the global scope.
import { Person } from "@fedify/vocab";
import {
  createFederation,
  type Federation,
  InProcessMessageQueue,
  MemoryKvStore,
} from "@fedwork/core";

let federation: Federation<void> | undefined;

function getFederation(): Federation<void> {
  if (federation != null) return federation;
  federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
  });
  federation.setActorDispatcher(
    "/users/{identifier}",
    (ctx, identifier) =>
      identifier === "alice"
        ? new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier })
        : null,
  );
  return federation;
}

export default {
  fetch(request: Request): Promise<Response> {
    return getFederation().fetch(request, { contextData: undefined });
  },
};
