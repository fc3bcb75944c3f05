//go:build tools

// Package helm only records, for `go mod tidy`, the command that
// tests/k8s/build-helm builds.
package helm

import _ "helm.sh/helm/v3/cmd/helm"
