"""The real kubectl v1.37: where it is, and running it against one server."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import TypedDict, Unpack

import pytest
import yaml

from tests.support.paths import ROOT

KUBECTL_INSTALLED = ROOT / ".cache" / "kubectl" / "kubectl"
"""Where scripts/install_kubectl.py puts kubectl v1.37."""


def kubectl_path() -> str | None:
    """The kubectl to test with: $KUBECTL (a path, or a command on PATH), else the project's
    installed copy; None when that is not an executable file."""
    wanted = os.environ.get("KUBECTL") or str(KUBECTL_INSTALLED)
    found = wanted if os.sep in wanted else shutil.which(wanted)
    if found is None or not Path(found).is_file() or not os.access(found, os.X_OK):
        return None
    return found


def in_ci() -> bool:
    """Whether the tests run under CI: $CI set to anything but empty, 0, false or no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_kubectl() -> str:
    """The kubectl v1.37 binary. Without it the test is skipped locally, and fails under CI
    (a CI run must never pass by skipping the tests that drive the real kubectl)."""
    binary = kubectl_path()
    if binary is None:
        where = os.environ.get("KUBECTL") or str(KUBECTL_INSTALLED)
        message = f"kubectl not found at {where}: run scripts/install_kubectl.py or set KUBECTL"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return binary


class RunOptions(TypedDict, total=False):
    """The keyword options of `Kubectl.run` (for the calls that pass them on)."""

    input: str | None
    check: bool
    env: dict[str, str] | None
    timeout: float


@dataclasses.dataclass
class Kubectl:
    """Runs the real kubectl binary against one server."""

    binary: str
    kubeconfig: Path

    def run(self, *args: str, input: str | None = None, check: bool = True,
            env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run kubectl; with check=True a non-zero exit fails the test with its stderr."""
        full_env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), **(env or {})}
        res = subprocess.run([self.binary, *args], input=input, capture_output=True, text=True,
                             env=full_env, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n"
                                 f"{res.stdout}\n{res.stderr}")
        return res

    def __call__(self, *args: str, **options: Unpack[RunOptions]) -> str:
        """Run kubectl and return its stdout."""
        return self.run(*args, **options).stdout


def token_kubectl(admin: Kubectl, token: str) -> Kubectl:
    """The admin kubeconfig with its user swapped for a bearer token."""
    cfg = yaml.safe_load(admin.kubeconfig.read_text())
    cfg["users"] = [{"name": "token-user", "user": {"token": token}}]
    cfg["contexts"][0]["context"]["user"] = "token-user"
    # named for the token's digest: a service-account JWT is longer than a file name may be
    path = admin.kubeconfig.parent / f"kubeconfig-{hashlib.sha256(token.encode()).hexdigest()[:16]}"
    path.write_text(yaml.safe_dump(cfg))
    return Kubectl(admin.binary, path)
