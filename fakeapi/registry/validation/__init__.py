"""Pure validation functions per kind, returning `Cause`s with upstream paths and messages.

`field` builds the causes in upstream's `field.Error` shapes, `common` holds the shared name,
collection, node-selector and condition rules, and `resource` / `scheduling` / `meta` hold the
rules of the DRA kinds. The registry strategies call these; nothing here touches the store.
"""
