"""Pure validation functions per kind, returning `Cause`s with upstream paths and messages.

`fakeapi.machinery.field` builds the causes in upstream's `field.Error` shapes; `common` holds
the shared name, collection, node-selector and condition rules, `meta` the ObjectMeta rules,
and the kinds' rules are by kind: `claims` (ResourceClaims and their templates), `slices`
(ResourceSlices), `classes` (DeviceClasses and DeviceTaintRules), `poolstatus`
(ResourcePoolStatusRequests) and `scheduling` (PodGroups and Workloads). The registry
strategies call these; nothing here touches the store.
"""
