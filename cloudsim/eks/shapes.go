package eks

// Wire shapes of the EKS model (member names as the JSON carries them;
// timestamps in epoch seconds, restJson1's default).
type (
	scalingConfig struct {
		MinSize     *int32 `json:"minSize,omitempty"`
		MaxSize     *int32 `json:"maxSize,omitempty"`
		DesiredSize *int32 `json:"desiredSize,omitempty"`
	}
	taint struct {
		Key    *string `json:"key,omitempty"`
		Value  *string `json:"value,omitempty"`
		Effect string  `json:"effect,omitempty"`
	}
	issue struct {
		Code        string   `json:"code"`
		Message     string   `json:"message"`
		ResourceIDs []string `json:"resourceIds,omitempty"`
	}
	health struct {
		Issues []issue `json:"issues"`
	}
	updateConfig struct {
		MaxUnavailable           *int32 `json:"maxUnavailable,omitempty"`
		MaxUnavailablePercentage *int32 `json:"maxUnavailablePercentage,omitempty"`
	}
	resources struct {
		AutoScalingGroups []struct {
			Name string `json:"name"`
		} `json:"autoScalingGroups"`
	}
	// Nodegroup is a node group as DescribeNodegroup returns it.
	Nodegroup struct {
		NodegroupName  string            `json:"nodegroupName"`
		NodegroupArn   string            `json:"nodegroupArn"`
		ClusterName    string            `json:"clusterName"`
		Version        string            `json:"version"`
		ReleaseVersion string            `json:"releaseVersion"`
		CreatedAt      float64           `json:"createdAt"`
		ModifiedAt     float64           `json:"modifiedAt"`
		Status         string            `json:"status"`
		CapacityType   string            `json:"capacityType"`
		ScalingConfig  scalingConfig     `json:"scalingConfig"`
		InstanceTypes  []string          `json:"instanceTypes"`
		Subnets        []string          `json:"subnets"`
		AmiType        string            `json:"amiType"`
		NodeRole       string            `json:"nodeRole"`
		Labels         map[string]string `json:"labels"`
		Taints         []taint           `json:"taints"`
		Resources      *resources        `json:"resources,omitempty"`
		DiskSize       *int32            `json:"diskSize,omitempty"`
		LaunchTemplate *ltSpec           `json:"launchTemplate,omitempty"`
		Health         health            `json:"health"`
		UpdateConfig   updateConfig      `json:"updateConfig"`
		Tags           map[string]string `json:"tags"`
	}
	updateParam struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	}
	errorDetail struct {
		ErrorCode    string   `json:"errorCode"`
		ErrorMessage string   `json:"errorMessage"`
		ResourceIDs  []string `json:"resourceIds,omitempty"`
	}
	updateView struct {
		ID        string        `json:"id"`
		Status    string        `json:"status"`
		Type      string        `json:"type"`
		Params    []updateParam `json:"params"`
		CreatedAt float64       `json:"createdAt"`
		Errors    []errorDetail `json:"errors"`
	}
)
