// The AWS SDK for JavaScript v3 (@aws-sdk/client-eks) against the EKS
// emulator: create, describe, list, update and delete a node group as the
// SDK sends them. Environment: ENDPOINT, REGION, CLUSTER, NODE_ROLE,
// SUBNET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; the emulator's CA in
// NODE_EXTRA_CA_CERTS. Prints one JSON line per step.
import { EKSClient, CreateNodegroupCommand, DescribeNodegroupCommand, ListNodegroupsCommand,
  UpdateNodegroupConfigCommand, DeleteNodegroupCommand } from "@aws-sdk/client-eks";

const env = process.env;
const eks = new EKSClient({
  region: env.REGION, endpoint: env.ENDPOINT, maxAttempts: 1,
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
});
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const name = "js-client";

const created = await eks.send(new CreateNodegroupCommand({
  clusterName: env.CLUSTER, nodegroupName: name, nodeRole: env.NODE_ROLE, subnets: [env.SUBNET],
  scalingConfig: { minSize: 1, maxSize: 3, desiredSize: 2 }, instanceTypes: ["m5.large"], labels: { team: "js" },
}));
out("create", { status: created.nodegroup.status, name: created.nodegroup.nodegroupName });
const got = await eks.send(new DescribeNodegroupCommand({ clusterName: env.CLUSTER, nodegroupName: name }));
out("describe", { status: got.nodegroup.status, desired: got.nodegroup.scalingConfig.desiredSize });
const listed = await eks.send(new ListNodegroupsCommand({ clusterName: env.CLUSTER }));
out("list", { names: listed.nodegroups });
