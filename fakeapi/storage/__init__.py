"""Storage: the event log (the one truth), its write-ahead log, the materialized store, watch
cursors and log checks, in the manner of etcd's MVCC.

Imports: `fakeapi.machinery`."""
