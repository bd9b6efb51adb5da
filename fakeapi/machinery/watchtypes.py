"""The types of change a watch event reports (apimachinery's `watch.EventType`), shared by
the log, the store, watch streams and every informer."""

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
"""A watch event carrying only a resourceVersion the watcher has caught up to."""
ERROR = "ERROR"
"""A watch event carrying a Status (410 Expired: the revision left the window)."""
