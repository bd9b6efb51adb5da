"""fakeapi: an event-sourced fake Kubernetes API server for Dynamic Resource Allocation."""

KUBERNETES_VERSION = "v1.37.0"
