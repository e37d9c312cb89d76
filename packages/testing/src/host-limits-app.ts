// The app of the host-limit tests (see host-limits-suite.ts), shared by the
// test's own federation (which only sends) and its worker processes (which
// deliver): an actor whose deliveries are signed, and the host policy the
// test gives.
import {
  createFederationBuilder,
  type Federation,
  generateCryptoKeyPair,
  type HostPolicyOptions,
  millisecondsToDuration,
} from "@fedwork/core";
import type { ShutdownBackend } from "./shutdown-suite.ts";

/**
 * Builds the app on a backend.
 * @param backend The engines.
 * @param hostPolicy The federation's `hostPolicy`.
 * @returns The federation; its queue is started by the caller, if at all.
 */
export async function buildHostLimitsApp(
  backend: ShutdownBackend,
  hostPolicy: HostPolicyOptions,
): Promise<Federation<void>> {
  const builder = createFederationBuilder<void>();
  // Made before the first delivery: a first signature that waits for a key
  // to be generated would start late for its host's rate.
  const keyPair = await generateCryptoKeyPair();
  builder.setActorDispatcher("/users/{identifier}", () => null)
    .setKeyPairsDispatcher(() => [keyPair]);
  return await builder.build({
    kv: backend.kv,
    queue: backend.queue,
    ...(backend.pubsub == null ? {} : { pubsub: backend.pubsub }),
    allowPrivateAddress: true,
    manuallyStartQueue: true,
    hostPolicy,
    // Failed attempts are retried soon: the tests wait for every delivery.
    outboxRetryPolicy: ({ attempts }) => attempts >= 10 ? null : millisecondsToDuration(100),
  });
}
