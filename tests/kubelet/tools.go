//go:build tools

// Package kubelettest records, for `go mod tidy`, the kubelet that
// tests/kubelet/build-kubelet builds (same k8s.io/kubernetes v1.36.3 module
// set as tests/k8s) besides the FAKE CRI runtime in fakecri/.
package kubelettest

import (
	_ "k8s.io/kubernetes/cmd/kubelet"
)
