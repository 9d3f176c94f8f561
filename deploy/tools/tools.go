//go:build tools

// Package tools pins the main packages make -C deploy tools builds from this module.
package tools

import (
	_ "github.com/yannh/kubeconform/cmd/kubeconform"
	_ "helm.sh/helm/v3/cmd/helm"
)
