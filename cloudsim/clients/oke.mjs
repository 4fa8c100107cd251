// Oracle's SDK for JavaScript (oci-containerengine, oci-common) against
// the OKE emulator: create, list, get, update (size, labels) and delete a
// node pool, following each work request to SUCCEEDED and reading its
// log. Environment: ENDPOINT (https://127.0.0.1:PORT), OCI_CONFIG (an OCI
// config file, as kpool cloudsim writes for its demo tenancy: tenancy,
// user, fingerprint, key_file, region), COMPARTMENT, CLUSTER, AD, SUBNET,
// IMAGE; the emulator's CA in NODE_EXTRA_CA_CERTS. The SDK signs with its
// own signer (x-date, not date). Prints one JSON line per step.
import ce from "oci-containerengine";
import common from "oci-common";

const env = process.env;
const auth = new common.ConfigFileAuthenticationDetailsProvider(env.OCI_CONFIG, "DEFAULT");
const client = new ce.ContainerEngineClient({ authenticationDetailsProvider: auth });
client.endpoint = env.ENDPOINT;
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const compartmentId = env.COMPARTMENT;

// wait follows a work request until it SUCCEEDED, failing on any other end.
async function wait(workRequestId) {
  for (let i = 0; i < 600; i++) {
    const { workRequest } = await client.getWorkRequest({ workRequestId });
    if (workRequest.status === "SUCCEEDED") return workRequest;
    if (workRequest.status === "FAILED" || workRequest.status === "CANCELED") {
      const { items } = await client.listWorkRequestErrors({ compartmentId, workRequestId });
      throw new Error(`work request ${workRequestId} ${workRequest.status}: ${JSON.stringify(items)}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`work request ${workRequestId} did not end`);
}

const created = await client.createNodePool({
  createNodePoolDetails: {
    compartmentId, clusterId: env.CLUSTER, name: "js-client", nodeShape: "VM.Standard.E4.Flex",
    nodeShapeConfig: { ocpus: 2, memoryInGBs: 32 },
    nodeSourceDetails: { sourceType: "IMAGE", imageId: env.IMAGE, bootVolumeSizeInGBs: 100 },
    nodeConfigDetails: { size: 1, placementConfigs: [{ availabilityDomain: env.AD, subnetId: env.SUBNET }] },
    initialNodeLabels: [{ key: "team", value: "js" }],
    freeformTags: { client: "oci-containerengine" },
  },
});
const createWork = await wait(created.opcWorkRequestId);
const id = createWork.resources.find((r) => r.entityType === "nodepool").identifier;
out("create", { operationType: createWork.operationType, status: createWork.status });

const listed = await client.listNodePools({ compartmentId, clusterId: env.CLUSTER });
out("list", { names: listed.items.map((p) => p.name).sort() });

const got = await client.getNodePool({ nodePoolId: id });
const np = got.nodePool;
out("get", {
  lifecycleState: np.lifecycleState, nodeShape: np.nodeShape, ocpus: np.nodeShapeConfig.ocpus, size: np.nodeConfigDetails.size,
  nodes: np.nodes.length, labels: np.initialNodeLabels.map((l) => `${l.key}=${l.value}`), etag: Boolean(got.etag),
});

const updated = await client.updateNodePool({
  nodePoolId: id, ifMatch: got.etag,
  updateNodePoolDetails: { nodeConfigDetails: { size: 2 }, initialNodeLabels: [{ key: "team", value: "js" }, { key: "tier", value: "batch" }] },
});
const updateWork = await wait(updated.opcWorkRequestId);
const after = (await client.getNodePool({ nodePoolId: id })).nodePool;
out("update", {
  operationType: updateWork.operationType, size: after.nodeConfigDetails.size, nodes: after.nodes.length,
  labels: after.initialNodeLabels.map((l) => `${l.key}=${l.value}`),
});

const logs = await client.listWorkRequestLogs({ compartmentId, workRequestId: updated.opcWorkRequestId });
out("logs", { entries: logs.items.length });

const deleted = await client.deleteNodePool({ nodePoolId: id });
const deleteWork = await wait(deleted.opcWorkRequestId);
const gone = (await client.getNodePool({ nodePoolId: id })).nodePool;
const left = await client.listNodePools({ compartmentId, clusterId: env.CLUSTER, lifecycleState: ["ACTIVE"] });
out("delete", { operationType: deleteWork.operationType, lifecycleState: gone.lifecycleState, names: left.items.map((p) => p.name) });
