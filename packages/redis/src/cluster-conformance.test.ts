// The conformance suites (message queue with its SIGKILL crash test, key–value
// store, federation over the queue, task progress and routing through
// RedisPubSub) on a three-master Redis Cluster.  The cluster is
// scripts/ensure-services.sh's (or REDIS_CLUSTER_NODES): when it cannot be
// reached the first test fails saying so, rather than every test timing out.
import { assert, test } from "@fedify/fixture";
import {
  testFederationOverQueue,
  testKvStore,
  testMessageQueue,
  testTaskProgressAndRouting,
} from "@fedwork/testing";
import { Socket } from "node:net";
import { RedisKvStore } from "./kv-store.ts";
import {
  createCluster,
  deleteClusterKeys,
  REDIS_CLUSTER_NODES,
} from "./testdata/cluster-factory.ts";
import { openRedisBackend, redisBackendPrefixes } from "./testdata/progress-backend.ts";

/** Whether a TCP connection to host:port opens within two seconds. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

test("the Redis Cluster the cluster tests use is reachable and serves every slot", async () => {
  for (const { host, port } of REDIS_CLUSTER_NODES) {
    assert(
      await reachable(host, port),
      `Redis Cluster node ${host}:${port} is unreachable: run bash scripts/ensure-services.sh ` +
        "(as root), or set REDIS_CLUSTER_NODES to a cluster's nodes (host:port,...).",
    );
  }
  const cluster = createCluster();
  try {
    const info = String(await cluster.cluster("INFO"));
    assert(info.includes("cluster_state:ok"), `The Redis Cluster is not serving: ${info}`);
  } finally {
    await cluster.quit();
  }
});

const factoryModule = new URL("./testdata/cluster-factory.ts", import.meta.url).href;

testMessageQueue({
  name: "RedisMessageQueue (Cluster)",
  factoryModule,
  durable: true,
  leases: true,
  redelivery: true,
  deduplication: true,
  prefetch: true,
  priority: true,
  deliveryCount: true,
});

testKvStore({
  name: "RedisKvStore (Cluster)",
  createStore: (namespace) => new RedisKvStore({ createClient: createCluster, prefix: namespace }),
  cleanup: (namespace) => deleteClusterKeys(`${namespace}:`),
});

testFederationOverQueue({
  name: "RedisMessageQueue (Cluster)",
  factoryModule,
  redelivery: true,
});

testTaskProgressAndRouting({
  name: "RedisMessageQueue (Cluster)",
  open: (namespace) => openRedisBackend({ createClient: createCluster }, namespace),
  async cleanup(namespace) {
    for (const prefix of redisBackendPrefixes(namespace)) await deleteClusterKeys(prefix);
  },
});
