"""Time travel over a recording: the state of a data directory's log at a revision, snapshots
of it as multi-document YAML, and loading one back (`fakeapi snapshot`, `fakeapi serve
--from`); and the replay of a recording's external inputs into a fresh control plane, served
over HTTP as `fakeapi serve` serves one (`inputs`, `replay`, `check`).

Imports: the composition root, `http` (the server a replay sends its inputs to) and
everything below them, never `cli`.
"""
