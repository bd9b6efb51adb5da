"""Pure Kubernetes helpers that the core and the components share: taints and tolerations,
node selectors, how pods name their ResourceClaims, and the kubelet's pod-stream contract.

Imports: `fakeapi.machinery`."""
