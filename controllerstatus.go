package kpool

import "fmt"

// ValidateControllerStatus checks a controller's report (not its generation,
// which needs the pool).
func ValidateControllerStatus(cs *ControllerStatus) error {
	var fe FieldErrors
	if cs.ControllerName == "" {
		fe.Add("controller_name", "required")
	} else if !controllerName().MatchString(cs.ControllerName) {
		fe.Add("controller_name", "%q is not valid: use lowercase letters, digits, '-' and '.' (such as gcp-nodepool-controller)", cs.ControllerName)
	}
	if cs.ObservedGeneration < 0 {
		fe.Add("observed_generation", "must not be negative, got %d", cs.ObservedGeneration)
	}
	if len(cs.Conditions) > 32 {
		fe.Add("conditions", "at most 32 conditions, got %d", len(cs.Conditions))
	}
	seen := map[string]bool{}
	for i, c := range cs.Conditions {
		f := fmt.Sprintf("conditions[%d]", i)
		switch {
		case c.Type == "":
			fe.Add(f+".type", "required")
		case !conditionType().MatchString(c.Type):
			fe.Add(f+".type", "%q is not a condition type such as Ready", c.Type)
		case seen[c.Type]:
			fe.Add(f+".type", "duplicate condition %q", c.Type)
		}
		seen[c.Type] = true
		if c.Status != ConditionTrue && c.Status != ConditionFalse && c.Status != ConditionUnknown {
			fe.Add(f+".status", "must be True, False or Unknown, got %q", c.Status)
		}
		if c.Reason != "" && (len(c.Reason) > 1024 || !conditionWhy.MatchString(c.Reason)) {
			fe.Add(f+".reason", "%q is not a reason such as NodesReady (CamelCase, letters, digits and '_')", c.Reason)
		}
		if len(c.Message) > 32768 {
			fe.Add(f+".message", "at most 32768 bytes")
		}
	}
	if len(cs.Metadata) > 64<<10 {
		fe.Add("metadata", "at most 64 KiB")
	} else if len(cs.Metadata) > 0 && (cs.Metadata[0] != '{') {
		fe.Add("metadata", "must be an object")
	}
	return fe.Err()
}
