"""Time travel over a recording: the state of a data directory's log at a revision, snapshots
of it as multi-document YAML, and loading one back (`fakeapi snapshot`, `fakeapi serve
--from`); the replay of a recording's inputs comes here too.

Imports: the composition root and everything below it, never `http` or `cli`.
"""
