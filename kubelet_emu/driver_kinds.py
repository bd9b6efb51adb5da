"""The kinds of fake driver a node profile can name, and the controller plugins it can turn
on: names the profile schema and the drivers share."""

from __future__ import annotations

from typing import Literal

DriverType = Literal["example-gpu", "example-net", "example-cpu", "nic", "custom"]
"""How a fake driver behaves: the dra-example-driver's gpu, net and cpu profiles, the seeds'
NIC with network data (`nic`), or devices listed one by one (`custom`)."""

ControllerPlugin = Literal["BindingConditions"]
"""The dra-example-controller's plugins (cmd/dra-example-controller/plugins)."""
BINDING_CONDITIONS_PLUGIN: ControllerPlugin = "BindingConditions"
