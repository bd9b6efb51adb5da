"""The types of change a watch event reports (apimachinery's `watch.EventType`), shared by
the log, the store, watch streams and every informer."""

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
