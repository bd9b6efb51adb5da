#!/usr/bin/env python3
"""Generate the Python modules of the kubelet plugin API (kubelet_emu/pluginapi/*.proto) with
grpcio-tools, and check them in:

    .venv/bin/python scripts/gen_pluginapi.py          # rewrite the generated modules
    .venv/bin/python scripts/gen_pluginapi.py --check  # exit 1 if they are out of date

Each `NAME.proto` gives `NAME_pb2.py` (messages), `NAME_pb2.pyi` (their types) and
`NAME_pb2_grpc.py` (client stubs and servicer bases). grpcio-tools is a test dependency
(pinned, so the output is the same byte for byte); installing fakeapi needs only grpcio and
protobuf. tests/kubelet_emu/test_pluginapi.py runs `--check`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path("kubelet_emu") / "pluginapi"
SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")


def generate(out: Path) -> list[Path]:
    """Run protoc on every .proto of the package, writing below `out`; the files written."""
    from grpc_tools import protoc  # the test extra's grpcio-tools

    protos = sorted((ROOT / PACKAGE).glob("*.proto"))
    args = ["protoc", f"-I{ROOT}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *(str(p.relative_to(ROOT)) for p in protos)]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    return [out / PACKAGE / f"{p.stem}{s}" for p in protos for s in SUFFIXES]


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated modules, or (--check) report those that differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if out of date")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        stale = []
        for made in generate(Path(tmp)):
            target = ROOT / made.relative_to(tmp)
            if not target.exists() or target.read_bytes() != made.read_bytes():
                stale.append(target.relative_to(ROOT))
                if not args.check:
                    target.write_bytes(made.read_bytes())
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
