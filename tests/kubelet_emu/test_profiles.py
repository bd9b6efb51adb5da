"""Node profiles: every shipped one loads and publishes valid devices; malformed ones are
refused with errors naming the field (data-driven, tests/data/kubelet_emu/invalid-profiles);
the CLI refuses a bad --node-profile before starting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubelet_emu.inventory import inventory, seeded_uuids
from kubelet_emu.profile import ProfileError, load_profile, parse_profile, shipped_profiles
from tests.support.paths import ROOT

CASES = sorted((ROOT / "tests" / "data" / "kubelet_emu" / "invalid-profiles").glob("*.yaml"))


def test_the_issue_names_these_shipped_profiles() -> None:
    assert set(shipped_profiles()) >= {"default", "gpu", "net", "cpu", "partitionable",
                                       "shareable", "large", "empty"}


@pytest.mark.parametrize("name", shipped_profiles())
def test_shipped_profiles_load(name: str) -> None:
    profile = load_profile(name)
    assert profile.name == name
    assert bool(profile.drivers) is (name != "empty"), name  # empty: bring your own driver


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_invalid_profiles_are_refused_with_the_field_named(case: Path) -> None:
    data = yaml.safe_load(case.read_text())
    with pytest.raises(ProfileError) as e:
        parse_profile(yaml.safe_dump(data["profile"]), case.name)
    message = str(e.value)
    assert message.startswith(case.name)
    for expected in data["errors"]:
        assert expected in message, message


def test_not_yaml_is_refused() -> None:
    with pytest.raises(ProfileError, match="x.yaml: not valid YAML"):
        parse_profile("name: [unclosed", "x.yaml")


def test_profile_files_load_by_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ndrivers:\n- {name: fpga.example.com, type: custom, devices: "
                    "[{name: fpga-0, attributes: {cells: 4}, capacity: {memory: 4Gi}}]}\n")
    profile = load_profile(str(path))
    devices = inventory(profile.drivers[0], "n").devices
    assert devices == ({"name": "fpga-0", "attributes": {"cells": {"int": 4}},
                        "capacity": {"memory": {"value": "4Gi"}}},)
    with pytest.raises(ProfileError, match="No such file"):
        load_profile(str(tmp_path / "missing.yaml"))
    with pytest.raises(ProfileError, match="unknown node profile 'nope'"):
        load_profile("nope")


def test_uuids_are_stable_per_node_and_differ_between_nodes() -> None:
    a = seeded_uuids("worker-0", "gpu", 3)
    assert a == seeded_uuids("worker-0", "gpu", 3)
    assert a != seeded_uuids("worker-1", "gpu", 3)
    assert len(set(a)) == 3 and all(u.startswith("gpu-") and len(u) == 40 for u in a)


def test_the_cli_refuses_a_bad_profile_with_the_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndrivers:\n- {name: gpu.example.com, type: gpu}\n")
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                          "--http", "--node-profile", str(bad)], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert "argument --node-profile: " in res.stderr
    assert "drivers.0.type: Input should be" in res.stderr
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--nodes", "-1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "invalid node count '-1'" in res.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--disable-driver", "gpu.example.com@"],
     "argument --disable-driver: invalid driver 'gpu.example.com@': DRIVER or DRIVER@NODE"),
    (["--disable-driver", "@worker-0"],
     "argument --disable-driver: invalid driver '@worker-0': DRIVER or DRIVER@NODE"),
    (["--drivers", "docker"], "argument --drivers: invalid choice: 'docker'"),
], ids=["no node", "no driver", "unknown mode"])
def test_the_cli_refuses_bad_driver_flags(args: list[str], message: str) -> None:
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and message in res.stderr, res.stderr
