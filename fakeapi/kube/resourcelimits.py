"""Limits of the resource.k8s.io API that its clients must keep too (k8s.io/api/resource/v1's
constants): a driver splits its pool into ResourceSlices that fit them; validation enforces
them."""

SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64  # with taints, consumesCounters or list attributes
COUNTER_SETS_MAX = 8
