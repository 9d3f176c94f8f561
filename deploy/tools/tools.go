//go:build tools

// Package tools pins the main packages make setup builds from this module.
package tools

import (
	_ "github.com/yannh/kubeconform/cmd/kubeconform"
	_ "helm.sh/helm/v3/cmd/helm"
)
