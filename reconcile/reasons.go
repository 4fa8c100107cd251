package reconcile

// The reasons of the conditions kpool's controllers report on a pool. A
// pool waiting on an operation at the provider carries the provider's
// neutral state instead (provider.State: Creating, Updating, Deleting,
// Failed); the cluster-wide reasons are the root package's.
const (
	ReasonCreating           = "Creating"              // a create was sent
	ReasonRecreating         = "Recreating"            // a create was sent for a pool deleted behind kpool's back
	ReasonDeleting           = "Deleting"              // a delete was sent, or waits for a create to settle
	ReasonAbandoned          = "Abandoned"             // deleted in kpool, left at the provider
	ReasonDeletedAtProvider  = "DeletedAtProvider"     // nothing of the pool is left
	ReasonNotImplemented     = "NotImplemented"        // the provider lacks the capability
	ReasonProviderRefused    = "ProviderRefused"       // the provider refused this generation
	ReasonProviderError      = "ProviderError"         // a cluster-wide refusal
	ReasonInvalidSpec        = "InvalidSpec"           // the spec does not map onto the provider
	ReasonRetrying           = "Retrying"              // a call failed and is retried with backoff
	ReasonQuotaExceeded      = "QuotaExceeded"         // a quota or limit of the provider's: retried slowly
	ReasonRepairingFailed    = "RepairingFailed"       // a failed pool is sent its spec again
	ReasonUpdating           = "Updating"              // an in-place update was sent
	ReasonCorrectingDrift    = "CorrectingDrift"       // an update undoes a change made behind kpool's back
	ReasonMarking            = "Marking"               // an update writes the owner's mark
	ReasonNeedsReplacement   = "NeedsReplacement"      // differs in what only a new pool can change
	ReasonNodesReady         = "NodesReady"            // the provider has the spec
	ReasonReady              = "Ready"                 // Progressing=False of a ready pool
	ReasonUnknownState       = "UnknownState"          // a provider state kpool does not know
	ReasonChangedAtProvider  = "ChangedAtProvider"     // Drifted=True of a managed pool
	ReasonKeepsChanging      = "ProviderKeepsChanging" // Drifted=True: corrections stopped, the provider undoes them
	ReasonObserved           = "Observed"              // Drifted of an observed pool
	ReasonNotFound           = "NotFound"              // an observed pool the provider does not list
	ReasonAllNodesCurrent    = "AllNodesCurrent"       // NodesCurrent=True
	ReasonNewNodesOnly       = "NewNodesOnly"          // NodesCurrent=False: changes reach new nodes only
	ReasonNodesNotReady      = "NodesNotReady"         // the cloud's nodes are not all Ready in Kubernetes
	ReasonLabelsPresent      = "LabelsPresent"         // NodeLabels=True: every node carries them
	ReasonLabelsRepaired     = "LabelsRepaired"        // NodeLabels=True: labels put back on nodes that lost them
	ReasonLabelsMissing      = "LabelsMissing"         // NodeLabels=False: missing, and not put back (observed pool, or the repair failed)
	ReasonReplacing          = "Replacing"             // a successor pool takes the pool's place (updateStrategy replacement: Surge)
	ReasonReplacementStopped = "ReplacementStopped"    // the replacement stopped (a successor failed, a node would not drain); the old pool serves
	ReasonRollingBack        = "RollingBack"           // the successor is being drained and removed
	ReasonRolledBack         = "RolledBack"            // the replacement was undone; the old pool serves
	ReasonCycling            = "Cycling"               // the provider replaces nodes that run an earlier configuration
	// ReasonForeignPool is the reason of a pool whose provider name
	// another owner's pool holds at the provider.
	ReasonForeignPool = "ForeignPool"
	// ReasonListed is Reachable=True of a cluster whose pools were listed.
	ReasonListed = "Listed"
)
