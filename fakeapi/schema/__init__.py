"""Schema: the Kubernetes 1.37 JSON schemas, structural decoding against them, the fields
feature gates drop, CustomResourceDefinition schemas and the emulator's own API group.

Imports: `fakeapi.machinery`, `fakeapi.cel`."""
