"""Apply and patch: server-side apply with `metadata.managedFields`, JSON patch, merge patch
and strategic merge patch, as pure functions over JSON data.

Server-side apply is `apply` (the apply itself and its conflicts), over `managedfields` (the
entries and the bookkeeping of every other write), `merge` (configuration over live object,
removal of what is no longer applied), `fieldsets` (an object's fields and what a write
changed, as `fakeapi.machinery.fieldpath` sets) and `mergetypes` (schemas compiled for
merging). PATCH bodies are `patch`.

Imports: `fakeapi.machinery`, `fakeapi.schema`."""
