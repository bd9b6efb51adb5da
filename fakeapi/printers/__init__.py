"""Printers: what `kubectl get` shows for each kind, as declarative column specs (upstream's
pkg/printers/internalversion).

Imports: `fakeapi.machinery`."""
