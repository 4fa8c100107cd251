// Google's Node.js client for GKE (@google-cloud/container, its REST
// transport: fallback 'rest') against the GKE emulator: create, list, get,
// resize, update (labels, taints) and delete a node pool, following each
// operation to DONE; read the location's server config and see a create
// with a machine type a zone does not offer refused. Environment: ENDPOINT (https://127.0.0.1:PORT),
// PROJECT, LOCATION, CLUSTER, TOKEN (any bearer token the emulator takes);
// the emulator's CA in NODE_EXTRA_CA_CERTS. The credential is a fixed
// access token on an OAuth2Client: no Application Default Credentials, no
// metadata server, no token endpoint. Prints one JSON line per step.
import container from "@google-cloud/container";
import { OAuth2Client } from "google-auth-library";

const env = process.env;
const url = new URL(env.ENDPOINT);
const auth = new OAuth2Client();
auth.setCredentials({ access_token: env.TOKEN });
const gke = new container.v1.ClusterManagerClient({
  fallback: "rest", apiEndpoint: url.hostname, port: Number(url.port), protocol: "https", authClient: auth,
});
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const parent = `projects/${env.PROJECT}/locations/${env.LOCATION}/clusters/${env.CLUSTER}`;
const pool = `${parent}/nodePools/js-client`;

// wait follows an operation until it is DONE, failing on its error.
async function wait(op) {
  const name = `projects/${env.PROJECT}/locations/${env.LOCATION}/operations/${op.name}`;
  for (let i = 0; i < 600; i++) {
    const [got] = await gke.getOperation({ name });
    if (got.status === "DONE" || got.status === 3) {
      if (got.error && got.error.message) throw new Error(`operation ${op.name}: ${got.error.message}`);
      return got;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`operation ${op.name} not done`);
}

const [created] = await gke.createNodePool({
  parent,
  nodePool: {
    name: "js-client", initialNodeCount: 1, locations: [`${env.LOCATION}-a`],
    config: {
      machineType: "e2-standard-4", diskSizeGb: 50, labels: { team: "js" },
      taints: [{ key: "dedicated", value: "js", effect: "NO_SCHEDULE" }],
    },
    autoscaling: { enabled: false },
  },
});
out("create", { operationType: created.operationType, status: created.status });
out("created", { status: (await wait(created)).status });

const [listed] = await gke.listNodePools({ parent });
out("list", { names: listed.nodePools.map((p) => p.name) });

const [got] = await gke.getNodePool({ name: pool });
out("get", {
  status: got.status, machineType: got.config.machineType, diskSizeGb: got.config.diskSizeGb,
  taints: got.config.taints.map((t) => `${t.key}=${t.value}:${t.effect}`),
});

// The location's node versions (getServerConfig), and a create whose
// machine type a chosen zone does not offer (G2 in zone f), refused.
const [server] = await gke.getServerConfig({ name: `projects/${env.PROJECT}/locations/${env.LOCATION}` });
out("serverConfig", { hasClusterVersion: server.validNodeVersions.includes(got.version) });
try {
  await gke.createNodePool({
    parent, nodePool: { name: "js-gpu", initialNodeCount: 1, locations: [`${env.LOCATION}-f`], config: { machineType: "g2-standard-8" } },
  });
  out("refused", { refused: false });
} catch (e) {
  out("refused", { code: e.code, message: e.message });
}

const [resized] = await gke.setNodePoolSize({ name: pool, nodeCount: 2 });
await wait(resized);
out("resize", { operationType: resized.operationType });

const [updated] = await gke.updateNodePool({
  name: pool, nodeVersion: "-", imageType: "COS_CONTAINERD",
  labels: { labels: { team: "js", tier: "batch" } },
  taints: { taints: [{ key: "dedicated", value: "batch", effect: "NO_EXECUTE" }] },
});
await wait(updated);
const [after] = await gke.getNodePool({ name: pool });
out("update", {
  labels: after.config.labels, taints: after.config.taints.map((t) => `${t.key}=${t.value}:${t.effect}`),
});

const [deleted] = await gke.deleteNodePool({ name: pool });
await wait(deleted);
const [left] = await gke.listNodePools({ parent });
out("delete", { names: left.nodePools.map((p) => p.name) });
