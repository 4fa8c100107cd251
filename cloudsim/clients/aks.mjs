// Microsoft's Node.js client for AKS (@azure/arm-containerservice) against
// the AKS emulator: create, get, list, update (count, labels, taints), stop,
// start, upgrade the node image of and delete an agent pool, following each
// long-running operation, read the pool's upgrade profile and the
// cluster's agent pool versions, and get AKS's refusals of a VM size the
// location does not offer and of a zone the size is not offered in.
// Environment: ENDPOINT (https://127.0.0.1:PORT, the client's `endpoint`:
// every request goes there, none to management.azure.com), SUBSCRIPTION,
// RESOURCE_GROUP, CLUSTER, TOKEN (a bearer token the emulator takes); the
// emulator's CA in NODE_EXTRA_CA_CERTS. The credential is a fixed token
// (@azure/core-auth's TokenCredential shape): no Entra ID, no
// login.microsoftonline.com. Prints one JSON line per step.
import { ContainerServiceClient } from "@azure/arm-containerservice";

const env = process.env;
/** @type {import("@azure/core-auth").TokenCredential} */
const credential = {
  getToken: async () => ({ token: env.TOKEN, expiresOnTimestamp: Date.now() + 3600 * 1000 }),
};
const aks = new ContainerServiceClient(credential, env.SUBSCRIPTION, { endpoint: env.ENDPOINT });
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const rg = env.RESOURCE_GROUP;
const cluster = env.CLUSTER;
const name = "jsclient";
const poll = { updateIntervalInMs: 20 };

async function names() {
  const all = [];
  for await (const p of aks.agentPools.list(rg, cluster)) all.push(p.name);
  return all;
}

const creating = await aks.agentPools.beginCreateOrUpdate(rg, cluster, name, {
  vmSize: "Standard_D4s_v5", count: 1, mode: "User", osType: "Linux", orchestratorVersion: "",
  nodeLabels: { team: "js" }, nodeTaints: ["dedicated=js:NoSchedule"],
}, poll);
out("create", { status: creating.getOperationState().status });
const created = await creating.pollUntilDone();
out("created", { provisioningState: created.provisioningState, orchestratorVersion: created.orchestratorVersion });

const got = await aks.agentPools.get(rg, cluster, name);
out("get", { vmSize: got.vmSize, count: got.count, mode: got.mode, taints: got.nodeTaints, powerState: got.powerState?.code });

out("list", { names: await names() });

const updated = await aks.agentPools.beginCreateOrUpdateAndWait(rg, cluster, name, {
  ...got, count: 2, nodeLabels: { team: "js", tier: "batch" }, nodeTaints: ["dedicated=batch:NoExecute"],
}, { ...poll, ifMatch: got.eTag });
out("update", { provisioningState: updated.provisioningState, count: updated.count, labels: updated.nodeLabels, taints: updated.nodeTaints });

// Stop and start: a PUT of powerState alone, as Microsoft's examples send it.
const stopped = await aks.agentPools.beginCreateOrUpdateAndWait(rg, cluster, name, { powerState: { code: "Stopped" } }, poll);
out("stop", { provisioningState: stopped.provisioningState, powerState: stopped.powerState?.code, count: stopped.count });
const started = await aks.agentPools.beginCreateOrUpdateAndWait(rg, cluster, name, { powerState: { code: "Running" } }, poll);
out("start", { provisioningState: started.provisioningState, powerState: started.powerState?.code });

// A node image upgrade: a POST whose result the poller reads at Location.
await aks.agentPools.beginUpgradeNodeImageVersionAndWait(rg, cluster, name, poll);
const imaged = await aks.agentPools.get(rg, cluster, name);
out("nodeImage", { provisioningState: imaged.provisioningState, ubuntu: imaged.nodeImageVersion.startsWith("AKSUbuntu") });

const profile = await aks.agentPools.getUpgradeProfile(rg, cluster, name);
const versions = await aks.agentPools.getAvailableAgentPoolVersions(rg, cluster);
out("versions", {
  kubernetesVersion: profile.kubernetesVersion,
  default: versions.agentPoolVersions.find((v) => v.default)?.kubernetesVersion,
});

// VM sizes the location does not offer, or not in a zone: AKS refuses the
// PUT itself; the client raises its RestError with ARM's status and code.
for (const [step, props] of [
  ["sizeRefused", { vmSize: "Standard_Bogus_v9", count: 1 }],
  ["zoneRefused", { vmSize: "Standard_NC24ads_A100_v4", count: 1, availabilityZones: ["3"] }],
]) {
  try {
    await aks.agentPools.beginCreateOrUpdate(rg, cluster, "refused", props, poll);
    out(step, { refused: false });
  } catch (e) {
    out(step, { status: e.statusCode, code: e.code, message: e.message });
  }
}

await aks.agentPools.beginDeleteAndWait(rg, cluster, name, poll);
out("delete", { names: await names() });
