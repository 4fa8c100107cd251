package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the --help examples of the commands built elsewhere, by
// command path without "kpool". A command that sets its own Example keeps
// it; TestExamples fails on a runnable command with none.
var examples = map[string]string{
	"serve": `  # The API and the controllers on 127.0.0.1:8080, with API tokens
  kpool serve --auth token --database postgres://kpool@db/kpool

  # Behind a gateway that authenticates people and sets X-User-Email
  kpool serve --auth header --behind-gateway --listen :8080 --admins ops@example.com`,
	"controller": `  # Controllers only, beside API-only replicas (serve --reconcile=false)
  kpool controller --database postgres://kpool@db/kpool --listen 127.0.0.1:9091`,
	"dev": `  # Everything on loopback with emulated clouds; then try the CLI against it
  kpool dev
  KPOOL_USER=dev@kpool.example kpool nodepool list   # the demo user; or the KPOOL_TOKEN dev prints`,
	"migrate": `  kpool migrate --database postgres://kpool@db/kpool`,
	"cloudsim": `  # Emulators of every provider, their CA written for the drivers to trust
  kpool cloudsim --ca-file /tmp/cloudsim-ca.pem

  # A bad day at AKS: slow, rate-limited and failing answers
  kpool cloudsim --providers aks --latency 500ms --rate-limit 5 --fault-rate 0.1 --seed 7`,
	"token": `  kpool token create --user me@example.com
  kpool token list`,
	"token create": `  # A token for a person: it expires in 90 days
  kpool token create --user me@example.com

  # An admin's token for a day
  kpool token create --user ops@example.com --role admin --expires 1d

  # A token for a controller that reports as aks-nodepool-controller (until revoked)
  kpool token create --user aks-ctl@example.com --role controller --controller-name aks-nodepool-controller`,
	"token list":   `  kpool token list --database postgres://kpool@db/kpool`,
	"token revoke": `  kpool token revoke tok_3f9a1c2b7d4e`,
	"place": `  # Place app.yaml's workloads on the pools they name, checked against the cluster
  kpool place -f app.yaml --cluster prod | kubectl apply -f -

  # Every workload on pool gpu, zone 2, without asking a server
  kpool place -f app.yaml --pool gpu --zone 2`,
	"cluster": `  kpool cluster list
  kpool cluster get prod`,
	"cluster create": `  # Register a GKE cluster
  kpool cluster create prod --platform gcp --project-id my-project --location us-central1 --cluster-name prod

  # Register an AKS cluster
  kpool cluster create aks-prod --platform azure --subscription-id $SUBSCRIPTION_ID --resource-group rg-prod --cluster-name prod --location westeurope

  # From a file (the output of kpool cluster get -o yaml is one)
  kpool cluster create -f cluster.yaml`,
	"cluster list": `  kpool cluster list
  kpool cluster list --all -o json`,
	"cluster get": `  kpool cluster get prod
  kpool cluster get 0b9f8c52-2f86-4c1b-9a53-9d3c0e2b7a10 -o yaml`,
	"cluster delete": `  kpool cluster delete prod

  # With its node pools, without asking first
  kpool cluster delete prod --force --yes`,
	"cluster import": `  # A pool that kpool cluster get lists as unmarked at the provider
  kpool cluster import prod legacy --name legacy-web

  # Another kpool's pool (admins only), observed, never changed
  kpool cluster import prod web --force`,
	"nodepool": `  kpool nodepool list --cluster prod
  kpool nodepool get web --cluster prod`,
	"nodepool create": `  kpool nodepool create web --cluster prod --machine-type e2-standard-4 --count 3 --zones 1,2,3

  # Autoscaling, with labels and a taint
  kpool nodepool create gpu --cluster prod --machine-type n1-standard-8 --min 0 --max 4 --label tier=gpu --taint gpu=true:NoSchedule

  # See what would be created, creating nothing
  kpool nodepool create web --cluster prod --machine-type e2-standard-4 --count 3 --dry-run

  # From a file, flags merged over it, waiting until the pool is Ready
  kpool nodepool create -f web.yaml --count 5 --wait

  # A provider's own flags: OCI's flexible shape size, Civo's public IPs
  kpool nodepool create batch --cluster demo-oke --machine-type VM.Standard.E4.Flex --ocpus 2 --memory-gb 16 --count 2
  kpool nodepool create edge --cluster demo-civo --machine-type g4s.kube.medium --count 2 --public-ip`,
	"nodepool list": `  kpool nodepool list --cluster prod
  kpool nodepool list --health unhealthy --all -o json`,
	"nodepool get": `  kpool nodepool get web --cluster prod
  kpool nodepool get 0b9f8c52-2f86-4c1b-9a53-9d3c0e2b7a10 -o yaml > web.yaml`,
	"nodepool update": `  # Scale and relabel
  kpool nodepool update web --cluster prod --count 5 --label tier=frontend

  # See the plan of a machine type change first
  kpool nodepool update web --cluster prod --machine-type e2-standard-8 --dry-run

  # From a file, only if the pool has not changed since it was read
  kpool nodepool update web --cluster prod -f web.yaml --resource-version 7`,
	"nodepool scale": `  kpool nodepool scale web --cluster prod --count 5 --wait
  kpool nodepool scale web --cluster prod --min 1 --max 10`,
	"nodepool delete": `  kpool nodepool delete web --cluster prod --wait

  # What would happen, deleting nothing
  kpool nodepool delete web --cluster prod --dry-run

  # Several at once, without the question a terminal gets
  kpool nodepool delete web batch --cluster prod --yes`,
	"nodepool status": `  kpool nodepool status web --cluster prod
  kpool nodepool status web --cluster prod -o json`,
	"events": `  kpool events --cluster prod
  kpool events --type nodepool. --actor alice@example.com --all`,
	"completion": `  # Load completion into this bash session, and for every new one
  source <(kpool completion bash)
  kpool completion bash > /etc/bash_completion.d/kpool`,
	"completion bash": `  source <(kpool completion bash)
  kpool completion bash > /etc/bash_completion.d/kpool`,
	"completion zsh":        `  kpool completion zsh > "${fpath[1]}/_kpool"`,
	"completion fish":       `  kpool completion fish > ~/.config/fish/completions/kpool.fish`,
	"completion powershell": `  kpool completion powershell | Out-String | Invoke-Expression`,
}

// addExamples fills in the Example of each command under root that lacks
// one, from examples.
func addExamples(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if c.Example != "" {
			return
		}
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
		c.Example = examples[path]
	})
}
