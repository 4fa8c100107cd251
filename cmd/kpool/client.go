package main

import "github.com/spf13/cobra"

// addClientCommands adds the cluster and nodepool commands.
func addClientCommands(root *cobra.Command) {}
