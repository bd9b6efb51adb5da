"""fakeapi: an event-sourced fake Kubernetes API server for Dynamic Resource Allocation.

Its folders are its layers, each importing only those below it (`tests/meta/test_imports.py`
checks both directions; DESIGN.md has the table): `machinery` (values and wire formats) →
`cel`, `storage` (the event log), `schema`, `printers`, `patching`, `auth`, `kube` (pure
helpers components share) → `registry` (the kind table and the strategies) → `client`
(with `remote_client` beside it: the same calls over HTTPS) → `cluster` → `http`; beside
HTTP, `runtime` (what components stand on, over the client); on top, `catalog`,
`controlplane` (the composition root with the components) and `cli`.
"""

KUBERNETES_VERSION = "v1.37.0"
