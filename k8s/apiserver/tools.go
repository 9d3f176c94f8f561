//go:build tools

// Package tools pins kube-apiserver's main package in this module's requirements.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
