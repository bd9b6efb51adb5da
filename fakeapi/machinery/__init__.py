"""Machinery: the values and wire formats every layer shares (errors, JSON and YAML decoding,
names, field paths, ids, randomness, feature gates, the clock, quantities, times, label and
field selectors, protobuf wire reading and writing), in the manner of k8s.io/apimachinery.

Imports: the standard library and third-party dependencies only."""
