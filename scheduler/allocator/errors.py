"""What `allocate` raises besides returning a result or None (upstream's three outcomes)."""

from __future__ import annotations


class AllocationError(Exception):
    """Aborts the whole scheduling attempt, as upstream's Filter returning an error status does
    (a CEL runtime error, All on an incomplete or invalid pool, exceeding the claim limit, a
    disabled feature, ...). The pod goes to backoff; the message is upstream's."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AllocationTimeout(AllocationError):
    """The search ran past its deadline (upstream's filterTimeout, DRASchedulerFilterTimeout):
    `timed out trying to allocate devices`. Upstream retries such a pod through backoff."""

    def __init__(self) -> None:
        super().__init__("timed out trying to allocate devices")


class NodeUnschedulable(Exception):
    """The claims can't be allocated on this node only, with a reason to show (upstream's
    ErrFailedAllocationOnNode, e.g. `invalid resource pools were encountered`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClaimUnschedulable(NodeUnschedulable):
    """Unschedulable on every node until a DeviceClass changes: upstream's PreFilter verdict
    for a request whose class does not exist (`request req-0: device class gpu does not
    exist`). A NodeUnschedulable, so a caller that only knows that type still does right."""
