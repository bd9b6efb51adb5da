"""Storage: the event log (the one truth), its write-ahead log, the materialized store, watch
cursors, log checks and the state folder, in the manner of etcd's MVCC.

Imports: `fakeapi.machinery`."""
