"""Apply and patch: server-side apply with `metadata.managedFields`, JSON patch, merge patch
and strategic merge patch, as pure functions over JSON data.

Imports: `fakeapi.machinery`, `fakeapi.schema`."""
