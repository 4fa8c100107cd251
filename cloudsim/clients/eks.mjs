// The AWS SDK for JavaScript v3 (@aws-sdk/client-eks, @aws-sdk/client-ec2)
// against the EKS emulator: a launch template on EC2's Query API, then a
// node group on it: create, describe, list, update its config (labels,
// scaling), roll out a new template version (UpdateNodegroupVersion),
// delete it and its template, waiting for each to settle; then read EC2's
// catalogue (the subnet's zone, the instance types its zone offers, paged,
// and their figures) and see a create with one the zone does not offer
// refused. Environment:
// ENDPOINT, REGION, CLUSTER, NODE_ROLE, SUBNET, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY; the emulator's CA in NODE_EXTRA_CA_CERTS. Prints
// one JSON line per step.
import { EKSClient, CreateNodegroupCommand, DescribeNodegroupCommand, ListNodegroupsCommand,
  UpdateNodegroupConfigCommand, UpdateNodegroupVersionCommand, DescribeUpdateCommand,
  DeleteNodegroupCommand } from "@aws-sdk/client-eks";
import { EC2Client, CreateLaunchTemplateCommand, CreateLaunchTemplateVersionCommand,
  DescribeLaunchTemplateVersionsCommand, DeleteLaunchTemplateCommand, DescribeSubnetsCommand,
  DescribeInstanceTypesCommand, paginateDescribeInstanceTypeOfferings } from "@aws-sdk/client-ec2";

const env = process.env;
const config = {
  region: env.REGION, endpoint: env.ENDPOINT, maxAttempts: 1,
  credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
};
const eks = new EKSClient(config);
const ec2 = new EC2Client(config);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const name = "js-client";
const ltName = "js-client-lt";
const cluster = { clusterName: env.CLUSTER };
const userData = (line) => Buffer.from(
  'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="==JS=="\n\n--==JS==\n' +
  `Content-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\n${line}\n\n--==JS==--\n`).toString("base64");

// settle waits until the node group is no longer CREATING or UPDATING.
async function settle() {
  for (let i = 0; i < 600; i++) {
    const { nodegroup } = await eks.send(new DescribeNodegroupCommand({ ...cluster, nodegroupName: name }));
    if (nodegroup.status !== "CREATING" && nodegroup.status !== "UPDATING") return nodegroup;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${name} did not settle`);
}

const lt = await ec2.send(new CreateLaunchTemplateCommand({
  LaunchTemplateName: ltName,
  LaunchTemplateData: {
    UserData: userData("echo one"),
    BlockDeviceMappings: [{ DeviceName: "/dev/xvda", Ebs: { VolumeType: "gp3", VolumeSize: 40 } }],
  },
}));
out("template", { name: lt.LaunchTemplate.LaunchTemplateName, version: lt.LaunchTemplate.LatestVersionNumber });

const created = await eks.send(new CreateNodegroupCommand({
  ...cluster, nodegroupName: name, nodeRole: env.NODE_ROLE, subnets: [env.SUBNET],
  scalingConfig: { minSize: 1, maxSize: 3, desiredSize: 2 }, instanceTypes: ["m5.large"], labels: { team: "js" },
  launchTemplate: { name: ltName },
}));
out("create", { status: created.nodegroup.status, name: created.nodegroup.nodegroupName,
  launchTemplate: created.nodegroup.launchTemplate.version });
const got = await eks.send(new DescribeNodegroupCommand({ ...cluster, nodegroupName: name }));
out("describe", { name: got.nodegroup.nodegroupName, desired: got.nodegroup.scalingConfig.desiredSize });
const listed = await eks.send(new ListNodegroupsCommand(cluster));
out("list", { names: listed.nodegroups });
out("created", { status: (await settle()).status });

const config1 = await eks.send(new UpdateNodegroupConfigCommand({
  ...cluster, nodegroupName: name, scalingConfig: { desiredSize: 3 },
  labels: { addOrUpdateLabels: { tier: "batch" }, removeLabels: ["team"] },
}));
out("update-config", { type: config1.update.type, status: config1.update.status });
const updated = await settle();
out("updated", { status: updated.status, desired: updated.scalingConfig.desiredSize, labels: updated.labels });

const v2 = await ec2.send(new CreateLaunchTemplateVersionCommand({
  LaunchTemplateName: ltName, SourceVersion: "1", LaunchTemplateData: { UserData: userData("echo two") },
}));
const rolled = await eks.send(new UpdateNodegroupVersionCommand({
  ...cluster, nodegroupName: name, launchTemplate: { name: ltName, version: String(v2.LaunchTemplateVersion.VersionNumber) },
}));
out("update-version", { type: rolled.update.type, params: rolled.update.params.map((p) => `${p.type}=${p.value}`) });
await settle();
const { update } = await eks.send(new DescribeUpdateCommand({ name: env.CLUSTER, nodegroupName: name, updateId: rolled.update.id }));
const after = await eks.send(new DescribeNodegroupCommand({ ...cluster, nodegroupName: name }));
out("rolled", { update: update.status, launchTemplate: after.nodegroup.launchTemplate.version });
const kept = await ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateName: ltName, Versions: ["$Latest"] }));
const ebs = kept.LaunchTemplateVersions[0].LaunchTemplateData.BlockDeviceMappings[0].Ebs;
out("template-version", { version: kept.LaunchTemplateVersions[0].VersionNumber, volumeType: ebs.VolumeType, volumeSize: ebs.VolumeSize });

const deleted = await eks.send(new DeleteNodegroupCommand({ ...cluster, nodegroupName: name }));
out("delete", { status: deleted.nodegroup.status });
for (let i = 0; ; i++) {
  const { nodegroups } = await eks.send(new ListNodegroupsCommand(cluster));
  if (!nodegroups.includes(name)) { out("deleted", { names: nodegroups }); break; }
  if (i > 600) throw new Error(`${name} was not deleted`);
  await new Promise((r) => setTimeout(r, 20));
}
const gone = await ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateName: ltName }));
out("template-deleted", { name: gone.LaunchTemplate.LaunchTemplateName });

const { Subnets } = await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [env.SUBNET] }));
const zone = Subnets[0].AvailabilityZone;
out("subnet", { zone });
const offered = [];
let pages = 0;
for await (const page of paginateDescribeInstanceTypeOfferings({ client: ec2, pageSize: 5 },
  { LocationType: "availability-zone", Filters: [{ Name: "location", Values: [zone] }] })) {
  pages++;
  offered.push(...page.InstanceTypeOfferings.map((o) => o.InstanceType));
}
out("offerings", { many: pages > 1, m5: offered.includes("m5.large"), p4d: offered.includes("p4d.24xlarge") });
const { InstanceTypes } = await ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: ["g5.xlarge"] }));
const g5 = InstanceTypes[0];
out("instance-type", { name: g5.InstanceType, vcpus: g5.VCpuInfo.DefaultVCpus, memory: g5.MemoryInfo.SizeInMiB,
  gpus: g5.GpuInfo.Gpus[0].Count, usage: g5.SupportedUsageClasses });
try {
  await eks.send(new CreateNodegroupCommand({
    ...cluster, nodegroupName: "js-p4d", nodeRole: env.NODE_ROLE, subnets: [env.SUBNET], instanceTypes: ["p4d.24xlarge"],
  }));
  out("unoffered", { refused: false });
} catch (e) {
  out("unoffered", { refused: e.name, status: e.$metadata.httpStatusCode });
}
