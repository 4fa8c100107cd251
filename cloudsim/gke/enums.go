package gke

// enumValue is one value of a proto enum: its number and its name.
type enumValue struct {
	Number int
	Name   string
}

// protoEnum is an enum field of the API: the proto enum's name and its
// values.
type protoEnum struct {
	Type   string
	Values []enumValue
}

// enums are the enum fields of container/v1, by schema and JSON field
// name (NodeTaint.effect), with each value's number: the values are the
// discovery document's (container-api.json of google.golang.org/api
// v0.311.0), the numbers the proto's (google/container/v1/
// cluster_service.proto, as @google-cloud/container 7.2.0 ships it). A
// client may send either (the proto3 JSON mapping:
// https://protobuf.dev/programming-guides/json/), so the emulator reads
// both. TestEnumTable checks this table against both sources.
var enums = map[string]protoEnum{
	"AdditionalIPRangesConfig.status":                                 {"Status", []enumValue{{0, "STATUS_UNSPECIFIED"}, {1, "ACTIVE"}, {2, "DRAINING"}}},
	"AdvancedDatapathObservabilityConfig.relayMode":                   {"RelayMode", []enumValue{{0, "RELAY_MODE_UNSPECIFIED"}, {1, "DISABLED"}, {3, "INTERNAL_VPC_LB"}, {4, "EXTERNAL_LB"}}},
	"AdvancedMachineFeatures.performanceMonitoringUnit":               {"PerformanceMonitoringUnit", []enumValue{{0, "PERFORMANCE_MONITORING_UNIT_UNSPECIFIED"}, {1, "ARCHITECTURAL"}, {2, "STANDARD"}, {3, "ENHANCED"}}},
	"AnonymousAuthenticationConfig.mode":                              {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "ENABLED"}, {2, "LIMITED"}}},
	"AutoMonitoringConfig.scope":                                      {"Scope", []enumValue{{0, "SCOPE_UNSPECIFIED"}, {1, "ALL"}, {2, "NONE"}}},
	"AutopilotCompatibilityIssue.incompatibilityType":                 {"IssueType", []enumValue{{0, "UNSPECIFIED"}, {1, "INCOMPATIBILITY"}, {2, "ADDITIONAL_CONFIG_REQUIRED"}, {3, "PASSED_WITH_OPTIONAL_CONFIG"}}},
	"AutoprovisioningRestrictionConfig.serviceAccountPermissionCheck": {"Mode", []enumValue{{1, "DISABLED"}, {2, "ENABLED"}}},
	"BinaryAuthorization.evaluationMode":                              {"EvaluationMode", []enumValue{{0, "EVALUATION_MODE_UNSPECIFIED"}, {1, "DISABLED"}, {2, "PROJECT_SINGLETON_POLICY_ENFORCE"}}},
	"BlueGreenInfo.phase":                                             {"Phase", []enumValue{{0, "PHASE_UNSPECIFIED"}, {1, "UPDATE_STARTED"}, {2, "CREATING_GREEN_POOL"}, {3, "CORDONING_BLUE_POOL"}, {4, "DRAINING_BLUE_POOL"}, {5, "NODE_POOL_SOAKING"}, {6, "DELETING_BLUE_POOL"}, {7, "ROLLBACK_STARTED"}}},
	"CloudRunConfig.loadBalancerType":                                 {"LoadBalancerType", []enumValue{{0, "LOAD_BALANCER_TYPE_UNSPECIFIED"}, {1, "LOAD_BALANCER_TYPE_EXTERNAL"}, {2, "LOAD_BALANCER_TYPE_INTERNAL"}}},
	"Cluster.status":                                                  {"Status", []enumValue{{0, "STATUS_UNSPECIFIED"}, {1, "PROVISIONING"}, {2, "RUNNING"}, {3, "RECONCILING"}, {4, "STOPPING"}, {5, "ERROR"}, {6, "DEGRADED"}}},
	"ClusterAutoscaling.autopilotGeneralProfile":                      {"AutopilotGeneralProfile", []enumValue{{0, "AUTOPILOT_GENERAL_PROFILE_UNSPECIFIED"}, {1, "NO_PERFORMANCE"}, {2, "NONE"}}},
	"ClusterAutoscaling.autoscalingProfile":                           {"AutoscalingProfile", []enumValue{{0, "PROFILE_UNSPECIFIED"}, {1, "OPTIMIZE_UTILIZATION"}, {2, "BALANCED"}}},
	"ClusterNetworkPerformanceConfig.totalEgressBandwidthTier":        {"Tier", []enumValue{{0, "TIER_UNSPECIFIED"}, {1, "TIER_1"}}},
	"ClusterUpdate.desiredDatapathProvider":                           {"DatapathProvider", []enumValue{{0, "DATAPATH_PROVIDER_UNSPECIFIED"}, {1, "LEGACY_DATAPATH"}, {2, "ADVANCED_DATAPATH"}}},
	"ClusterUpdate.desiredInTransitEncryptionConfig":                  {"InTransitEncryptionConfig", []enumValue{{0, "IN_TRANSIT_ENCRYPTION_CONFIG_UNSPECIFIED"}, {1, "IN_TRANSIT_ENCRYPTION_DISABLED"}, {2, "IN_TRANSIT_ENCRYPTION_INTER_NODE_TRANSPARENT"}}},
	"ClusterUpdate.desiredPrivateIpv6GoogleAccess":                    {"PrivateIPv6GoogleAccess", []enumValue{{0, "PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED"}, {1, "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED"}, {2, "PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE"}, {3, "PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL"}}},
	"ClusterUpdate.desiredStackType":                                  {"StackType", []enumValue{{0, "STACK_TYPE_UNSPECIFIED"}, {1, "IPV4"}, {2, "IPV4_IPV6"}}},
	"ClusterUpgradeInfo.autoUpgradeStatus":                            {"AutoUpgradeStatus", []enumValue{{0, "UNKNOWN"}, {1, "ACTIVE"}, {4, "MINOR_UPGRADE_PAUSED"}, {5, "UPGRADE_PAUSED"}}},
	"ClusterUpgradeInfo.pausedReason":                                 {"AutoUpgradePausedReason", []enumValue{{0, "AUTO_UPGRADE_PAUSED_REASON_UNSPECIFIED"}, {1, "MAINTENANCE_WINDOW"}, {5, "MAINTENANCE_EXCLUSION_NO_UPGRADES"}, {6, "MAINTENANCE_EXCLUSION_NO_MINOR_UPGRADES"}, {4, "CLUSTER_DISRUPTION_BUDGET"}, {7, "CLUSTER_DISRUPTION_BUDGET_MINOR_UPGRADE"}, {8, "SYSTEM_CONFIG"}}},
	"CompliancePostureConfig.mode":                                    {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "DISABLED"}, {2, "ENABLED"}}},
	"ConfidentialNodes.confidentialInstanceType":                      {"ConfidentialInstanceType", []enumValue{{0, "CONFIDENTIAL_INSTANCE_TYPE_UNSPECIFIED"}, {1, "SEV"}, {2, "SEV_SNP"}, {3, "TDX"}}},
	"ControlPlaneEgress.mode":                                         {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "VIA_CONTROL_PLANE"}, {2, "NONE"}}},
	"DNSConfig.clusterDns":                                            {"Provider", []enumValue{{0, "PROVIDER_UNSPECIFIED"}, {1, "PLATFORM_DEFAULT"}, {2, "CLOUD_DNS"}, {3, "KUBE_DNS"}}},
	"DNSConfig.clusterDnsScope":                                       {"DNSScope", []enumValue{{0, "DNS_SCOPE_UNSPECIFIED"}, {1, "CLUSTER_SCOPE"}, {2, "VPC_SCOPE"}}},
	"DatabaseEncryption.currentState":                                 {"CurrentState", []enumValue{{0, "CURRENT_STATE_UNSPECIFIED"}, {7, "CURRENT_STATE_ENCRYPTED"}, {2, "CURRENT_STATE_DECRYPTED"}, {3, "CURRENT_STATE_ENCRYPTION_PENDING"}, {4, "CURRENT_STATE_ENCRYPTION_ERROR"}, {5, "CURRENT_STATE_DECRYPTION_PENDING"}, {6, "CURRENT_STATE_DECRYPTION_ERROR"}, {8, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_ENABLED"}, {9, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_PENDING"}, {10, "CURRENT_STATE_ALL_OBJECTS_ENCRYPTION_ERROR"}}},
	"DatabaseEncryption.state":                                        {"State", []enumValue{{0, "UNKNOWN"}, {1, "ENCRYPTED"}, {2, "DECRYPTED"}, {3, "ALL_OBJECTS_ENCRYPTION_ENABLED"}}},
	"DataplaneV2Config.scalabilityMode":                               {"ScalabilityMode", []enumValue{{0, "SCALABILITY_MODE_UNSPECIFIED"}, {3, "DISABLED"}, {4, "SCALE_OPTIMIZED"}}},
	"DesiredEnterpriseConfig.desiredTier":                             {"ClusterTier", []enumValue{{0, "CLUSTER_TIER_UNSPECIFIED"}, {1, "STANDARD"}, {2, "ENTERPRISE"}}},
	"DisruptionEvent.disruptionType":                                  {"DisruptionType", []enumValue{{0, "DISRUPTION_TYPE_UNSPECIFIED"}, {1, "POD_NOT_ENOUGH_PDB"}, {2, "POD_PDB_VIOLATION"}}},
	"EnterpriseConfig.clusterTier":                                    {"ClusterTier", []enumValue{{0, "CLUSTER_TIER_UNSPECIFIED"}, {1, "STANDARD"}, {2, "ENTERPRISE"}}},
	"EnterpriseConfig.desiredTier":                                    {"ClusterTier", []enumValue{{0, "CLUSTER_TIER_UNSPECIFIED"}, {1, "STANDARD"}, {2, "ENTERPRISE"}}},
	"Filter.eventType":                                                {"EventType", []enumValue{{0, "EVENT_TYPE_UNSPECIFIED"}, {1, "UPGRADE_AVAILABLE_EVENT"}, {2, "UPGRADE_EVENT"}, {3, "SECURITY_BULLETIN_EVENT"}, {4, "UPGRADE_INFO_EVENT"}}},
	"Fleet.membershipType":                                            {"MembershipType", []enumValue{{0, "MEMBERSHIP_TYPE_UNSPECIFIED"}, {1, "LIGHTWEIGHT"}}},
	"GPUDirectConfig.gpuDirectStrategy":                               {"GPUDirectStrategy", []enumValue{{0, "GPU_DIRECT_STRATEGY_UNSPECIFIED"}, {2, "RDMA"}}},
	"GPUDriverInstallationConfig.gpuDriverVersion":                    {"GPUDriverVersion", []enumValue{{0, "GPU_DRIVER_VERSION_UNSPECIFIED"}, {1, "INSTALLATION_DISABLED"}, {2, "DEFAULT"}, {3, "LATEST"}}},
	"GPUSharingConfig.gpuSharingStrategy":                             {"GPUSharingStrategy", []enumValue{{0, "GPU_SHARING_STRATEGY_UNSPECIFIED"}, {1, "TIME_SHARING"}, {2, "MPS"}}},
	"GatewayAPIConfig.channel":                                        {"Channel", []enumValue{{0, "CHANNEL_UNSPECIFIED"}, {1, "CHANNEL_DISABLED"}, {3, "CHANNEL_EXPERIMENTAL"}, {4, "CHANNEL_STANDARD"}}},
	"GkeAutoUpgradeConfig.patchMode":                                  {"PatchMode", []enumValue{{0, "PATCH_MODE_UNSPECIFIED"}, {1, "ACCELERATED"}}},
	"HostConfig.capabilities":                                         {"HostCapability", []enumValue{{0, "HOST_CAPABILITY_UNSPECIFIED"}, {1, "HOST_CAPABILITY_PULL"}, {2, "HOST_CAPABILITY_RESOLVE"}, {3, "HOST_CAPABILITY_PUSH"}}},
	"IPAllocationPolicy.ipv6AccessType":                               {"IPv6AccessType", []enumValue{{0, "IPV6_ACCESS_TYPE_UNSPECIFIED"}, {1, "INTERNAL"}, {2, "EXTERNAL"}}},
	"IPAllocationPolicy.stackType":                                    {"StackType", []enumValue{{0, "STACK_TYPE_UNSPECIFIED"}, {1, "IPV4"}, {2, "IPV4_IPV6"}}},
	"LinuxNodeConfig.cgroupMode":                                      {"CgroupMode", []enumValue{{0, "CGROUP_MODE_UNSPECIFIED"}, {1, "CGROUP_MODE_V1"}, {2, "CGROUP_MODE_V2"}}},
	"LinuxNodeConfig.transparentHugepageDefrag":                       {"TransparentHugepageDefrag", []enumValue{{0, "TRANSPARENT_HUGEPAGE_DEFRAG_UNSPECIFIED"}, {1, "TRANSPARENT_HUGEPAGE_DEFRAG_ALWAYS"}, {2, "TRANSPARENT_HUGEPAGE_DEFRAG_DEFER"}, {3, "TRANSPARENT_HUGEPAGE_DEFRAG_DEFER_WITH_MADVISE"}, {4, "TRANSPARENT_HUGEPAGE_DEFRAG_MADVISE"}, {5, "TRANSPARENT_HUGEPAGE_DEFRAG_NEVER"}}},
	"LinuxNodeConfig.transparentHugepageEnabled":                      {"TransparentHugepageEnabled", []enumValue{{0, "TRANSPARENT_HUGEPAGE_ENABLED_UNSPECIFIED"}, {1, "TRANSPARENT_HUGEPAGE_ENABLED_ALWAYS"}, {2, "TRANSPARENT_HUGEPAGE_ENABLED_MADVISE"}, {3, "TRANSPARENT_HUGEPAGE_ENABLED_NEVER"}}},
	"LoggingComponentConfig.enableComponents":                         {"Component", []enumValue{{0, "COMPONENT_UNSPECIFIED"}, {1, "SYSTEM_COMPONENTS"}, {2, "WORKLOADS"}, {3, "APISERVER"}, {4, "SCHEDULER"}, {5, "CONTROLLER_MANAGER"}, {7, "KCP_SSHD"}, {8, "KCP_CONNECTION"}, {9, "KCP_HPA"}, {10, "KCP_VPA"}}},
	"LoggingVariantConfig.variant":                                    {"Variant", []enumValue{{0, "VARIANT_UNSPECIFIED"}, {1, "DEFAULT"}, {2, "MAX_THROUGHPUT"}}},
	"MaintenanceExclusionOptions.endTimeBehavior":                     {"EndTimeBehavior", []enumValue{{0, "END_TIME_BEHAVIOR_UNSPECIFIED"}, {1, "UNTIL_END_OF_SUPPORT"}}},
	"MaintenanceExclusionOptions.scope":                               {"Scope", []enumValue{{0, "NO_UPGRADES"}, {1, "NO_MINOR_UPGRADES"}, {2, "NO_MINOR_OR_NODE_UPGRADES"}}},
	"ManagedOpenTelemetryConfig.scope":                                {"Scope", []enumValue{{0, "SCOPE_UNSPECIFIED"}, {1, "NONE"}, {2, "COLLECTION_AND_INSTRUMENTATION_COMPONENTS"}}},
	"MonitoringComponentConfig.enableComponents":                      {"Component", []enumValue{{0, "COMPONENT_UNSPECIFIED"}, {1, "SYSTEM_COMPONENTS"}, {3, "APISERVER"}, {4, "SCHEDULER"}, {5, "CONTROLLER_MANAGER"}, {7, "STORAGE"}, {8, "HPA"}, {9, "POD"}, {10, "DAEMONSET"}, {11, "DEPLOYMENT"}, {12, "STATEFULSET"}, {13, "CADVISOR"}, {14, "KUBELET"}, {15, "DCGM"}, {16, "JOBSET"}}},
	"NetworkConfig.datapathProvider":                                  {"DatapathProvider", []enumValue{{0, "DATAPATH_PROVIDER_UNSPECIFIED"}, {1, "LEGACY_DATAPATH"}, {2, "ADVANCED_DATAPATH"}}},
	"NetworkConfig.inTransitEncryptionConfig":                         {"InTransitEncryptionConfig", []enumValue{{0, "IN_TRANSIT_ENCRYPTION_CONFIG_UNSPECIFIED"}, {1, "IN_TRANSIT_ENCRYPTION_DISABLED"}, {2, "IN_TRANSIT_ENCRYPTION_INTER_NODE_TRANSPARENT"}}},
	"NetworkConfig.privateIpv6GoogleAccess":                           {"PrivateIPv6GoogleAccess", []enumValue{{0, "PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED"}, {1, "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED"}, {2, "PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE"}, {3, "PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL"}}},
	"NetworkPerformanceConfig.totalEgressBandwidthTier":               {"Tier", []enumValue{{0, "TIER_UNSPECIFIED"}, {1, "TIER_1"}}},
	"NetworkPolicy.provider":                                          {"Provider", []enumValue{{0, "PROVIDER_UNSPECIFIED"}, {1, "CALICO"}}},
	"NetworkTierConfig.networkTier":                                   {"NetworkTier", []enumValue{{0, "NETWORK_TIER_UNSPECIFIED"}, {1, "NETWORK_TIER_DEFAULT"}, {2, "NETWORK_TIER_PREMIUM"}, {3, "NETWORK_TIER_STANDARD"}}},
	"NodeAffinity.operator":                                           {"Operator", []enumValue{{0, "OPERATOR_UNSPECIFIED"}, {1, "IN"}, {2, "NOT_IN"}}},
	"NodeConfig.effectiveCgroupMode":                                  {"EffectiveCgroupMode", []enumValue{{0, "EFFECTIVE_CGROUP_MODE_UNSPECIFIED"}, {1, "EFFECTIVE_CGROUP_MODE_V1"}, {2, "EFFECTIVE_CGROUP_MODE_V2"}}},
	"NodeConfig.localSsdEncryptionMode":                               {"LocalSsdEncryptionMode", []enumValue{{0, "LOCAL_SSD_ENCRYPTION_MODE_UNSPECIFIED"}, {1, "STANDARD_ENCRYPTION"}, {2, "EPHEMERAL_KEY_ENCRYPTION"}}},
	"NodeCreationConfig.nodeCreationMode":                             {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "VIA_KUBELET"}, {2, "VIA_CONTROL_PLANE"}}},
	"NodeKernelModuleLoading.policy":                                  {"Policy", []enumValue{{0, "POLICY_UNSPECIFIED"}, {1, "ENFORCE_SIGNED_MODULES"}, {2, "DO_NOT_ENFORCE_SIGNED_MODULES"}}},
	"NodeNetworkConfig.datapathProvider":                              {"DatapathProvider", []enumValue{{0, "DATAPATH_PROVIDER_UNSPECIFIED"}, {1, "LEGACY_DATAPATH"}, {2, "ADVANCED_DATAPATH"}}},
	"NodePool.status":                                                 {"Status", []enumValue{{0, "STATUS_UNSPECIFIED"}, {1, "PROVISIONING"}, {2, "RUNNING"}, {3, "RUNNING_WITH_ERROR"}, {4, "RECONCILING"}, {5, "STOPPING"}, {6, "ERROR"}}},
	"NodePoolAutoscaling.locationPolicy":                              {"LocationPolicy", []enumValue{{0, "LOCATION_POLICY_UNSPECIFIED"}, {1, "BALANCED"}, {2, "ANY"}}},
	"NodePoolUpgradeInfo.autoUpgradeStatus":                           {"AutoUpgradeStatus", []enumValue{{0, "UNKNOWN"}, {1, "ACTIVE"}, {4, "MINOR_UPGRADE_PAUSED"}, {5, "UPGRADE_PAUSED"}}},
	"NodePoolUpgradeInfo.pausedReason":                                {"AutoUpgradePausedReason", []enumValue{{0, "AUTO_UPGRADE_PAUSED_REASON_UNSPECIFIED"}, {1, "MAINTENANCE_WINDOW"}, {2, "MAINTENANCE_EXCLUSION_NO_UPGRADES"}, {3, "MAINTENANCE_EXCLUSION_NO_MINOR_UPGRADES"}, {4, "SYSTEM_CONFIG"}}},
	"NodeTaint.effect":                                                {"Effect", []enumValue{{0, "EFFECT_UNSPECIFIED"}, {1, "NO_SCHEDULE"}, {2, "PREFER_NO_SCHEDULE"}, {3, "NO_EXECUTE"}}},
	"Operation.operationType":                                         {"Type", []enumValue{{0, "TYPE_UNSPECIFIED"}, {1, "CREATE_CLUSTER"}, {2, "DELETE_CLUSTER"}, {3, "UPGRADE_MASTER"}, {4, "UPGRADE_NODES"}, {5, "REPAIR_CLUSTER"}, {6, "UPDATE_CLUSTER"}, {7, "CREATE_NODE_POOL"}, {8, "DELETE_NODE_POOL"}, {9, "SET_NODE_POOL_MANAGEMENT"}, {10, "AUTO_REPAIR_NODES"}, {11, "AUTO_UPGRADE_NODES"}, {12, "SET_LABELS"}, {13, "SET_MASTER_AUTH"}, {14, "SET_NODE_POOL_SIZE"}, {15, "SET_NETWORK_POLICY"}, {16, "SET_MAINTENANCE_POLICY"}, {18, "RESIZE_CLUSTER"}, {19, "FLEET_FEATURE_UPGRADE"}}},
	"Operation.status":                                                {"Status", []enumValue{{0, "STATUS_UNSPECIFIED"}, {1, "PENDING"}, {2, "RUNNING"}, {3, "DONE"}, {4, "ABORTING"}}},
	"OperationProgress.status":                                        {"Status", []enumValue{{0, "STATUS_UNSPECIFIED"}, {1, "PENDING"}, {2, "RUNNING"}, {3, "DONE"}, {4, "ABORTING"}}},
	"PlacementPolicy.type":                                            {"Type", []enumValue{{0, "TYPE_UNSPECIFIED"}, {1, "COMPACT"}}},
	"PodAutoscaling.hpaProfile":                                       {"HPAProfile", []enumValue{{0, "HPA_PROFILE_UNSPECIFIED"}, {1, "NONE"}, {2, "PERFORMANCE"}}},
	"ReleaseChannel.channel":                                          {"Channel", []enumValue{{0, "UNSPECIFIED"}, {1, "RAPID"}, {2, "REGULAR"}, {3, "STABLE"}, {4, "EXTENDED"}}},
	"ReleaseChannelConfig.channel":                                    {"Channel", []enumValue{{0, "UNSPECIFIED"}, {1, "RAPID"}, {2, "REGULAR"}, {3, "STABLE"}, {4, "EXTENDED"}}},
	"ReservationAffinity.consumeReservationType":                      {"Type", []enumValue{{0, "UNSPECIFIED"}, {1, "NO_RESERVATION"}, {2, "ANY_RESERVATION"}, {3, "SPECIFIC_RESERVATION"}, {4, "ANY_RESERVATION_THEN_FAIL"}}},
	"RollbackSafeUpgradeStatus.mode":                                  {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "KCP_MINOR_UPGRADE_ROLLBACK_SAFE_MODE"}}},
	"SandboxConfig.type":                                              {"Type", []enumValue{{0, "UNSPECIFIED"}, {1, "GVISOR"}}},
	"SecondaryBootDisk.mode":                                          {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "CONTAINER_IMAGE_CACHE"}}},
	"SecurityPostureConfig.mode":                                      {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "DISABLED"}, {2, "BASIC"}, {3, "ENTERPRISE"}}},
	"SecurityPostureConfig.vulnerabilityMode":                         {"VulnerabilityMode", []enumValue{{0, "VULNERABILITY_MODE_UNSPECIFIED"}, {1, "VULNERABILITY_DISABLED"}, {2, "VULNERABILITY_BASIC"}, {3, "VULNERABILITY_ENTERPRISE"}}},
	"SetMasterAuthRequest.action":                                     {"Action", []enumValue{{0, "UNKNOWN"}, {1, "SET_PASSWORD"}, {2, "GENERATE_PASSWORD"}, {3, "SET_USERNAME"}}},
	"StatusCondition.code":                                            {"Code", []enumValue{{0, "UNKNOWN"}, {1, "GCE_STOCKOUT"}, {2, "GKE_SERVICE_ACCOUNT_DELETED"}, {3, "GCE_QUOTA_EXCEEDED"}, {4, "SET_BY_OPERATOR"}, {7, "CLOUD_KMS_KEY_ERROR"}, {9, "CA_EXPIRING"}, {10, "NODE_SERVICE_ACCOUNT_MISSING_PERMISSIONS"}, {11, "CLOUD_KMS_KEY_DESTROYED"}}},
	"TaintConfig.architectureTaintBehavior":                           {"ArchitectureTaintBehavior", []enumValue{{0, "ARCHITECTURE_TAINT_BEHAVIOR_UNSPECIFIED"}, {1, "NONE"}, {2, "ARM"}}},
	"UpgradeAvailableEvent.resourceType":                              {"UpgradeResourceType", []enumValue{{0, "UPGRADE_RESOURCE_TYPE_UNSPECIFIED"}, {1, "MASTER"}, {2, "NODE_POOL"}}},
	"UpgradeDetails.startType":                                        {"StartType", []enumValue{{0, "START_TYPE_UNSPECIFIED"}, {1, "AUTOMATIC"}, {2, "MANUAL"}}},
	"UpgradeDetails.state":                                            {"State", []enumValue{{0, "UNKNOWN"}, {1, "FAILED"}, {2, "SUCCEEDED"}, {3, "CANCELED"}, {4, "RUNNING"}}},
	"UpgradeEvent.resourceType":                                       {"UpgradeResourceType", []enumValue{{0, "UPGRADE_RESOURCE_TYPE_UNSPECIFIED"}, {1, "MASTER"}, {2, "NODE_POOL"}}},
	"UpgradeInfoEvent.eventType":                                      {"EventType", []enumValue{{0, "EVENT_TYPE_UNSPECIFIED"}, {1, "END_OF_SUPPORT"}, {2, "COS_MILESTONE_VERSION_UPDATE"}, {3, "UPGRADE_LIFECYCLE"}, {4, "DISRUPTION_EVENT"}}},
	"UpgradeInfoEvent.resourceType":                                   {"UpgradeResourceType", []enumValue{{0, "UPGRADE_RESOURCE_TYPE_UNSPECIFIED"}, {1, "MASTER"}, {2, "NODE_POOL"}}},
	"UpgradeInfoEvent.state":                                          {"State", []enumValue{{0, "STATE_UNSPECIFIED"}, {1, "SCHEDULED"}, {3, "STARTED"}, {4, "SUCCEEDED"}, {5, "FAILED"}, {6, "CANCELED"}}},
	"UpgradeSettings.strategy":                                        {"NodePoolUpdateStrategy", []enumValue{{0, "NODE_POOL_UPDATE_STRATEGY_UNSPECIFIED"}, {2, "BLUE_GREEN"}, {3, "SURGE"}, {5, "SHORT_LIVED"}}},
	"UsableSubnetworkSecondaryRange.status":                           {"Status", []enumValue{{0, "UNKNOWN"}, {1, "UNUSED"}, {2, "IN_USE_SERVICE"}, {3, "IN_USE_SHAREABLE_POD"}, {4, "IN_USE_MANAGED_POD"}}},
	"WindowsNodeConfig.osVersion":                                     {"OSVersion", []enumValue{{0, "OS_VERSION_UNSPECIFIED"}, {1, "OS_VERSION_LTSC2019"}, {2, "OS_VERSION_LTSC2022"}}},
	"WorkloadMetadataConfig.mode":                                     {"Mode", []enumValue{{0, "MODE_UNSPECIFIED"}, {1, "GCE_METADATA"}, {2, "GKE_METADATA"}}},
}
