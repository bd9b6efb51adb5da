"""`fakeapi log show DIR` over the checked-in recordings: the columns, every filter (kind by
each of kubectl's names, namespace, name, actor, since/until by revision and by time), the
JSON and YAML entries, --diff, and bad options and logs as clear errors with exit 2 (1 for
damage reached after what was printed)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import orjson
import pytest
import yaml

from fakeapi.cli import main as cli
from fakeapi.storage.walformat import RECORD_HEADER, scan_file
from tests.support.paths import ROOT
from tests.support.processes import stderr_on_a_terminal

RECORDING = ROOT / "tests" / "data" / "recordings" / "format2"
OLD = ROOT / "tests" / "data" / "recordings" / "format1"


def show(capsys: pytest.CaptureFixture[str], *argv: str,
         log: Path = RECORDING) -> tuple[int, str, str]:
    code = cli.main(["log", "show", str(log), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def revisions(out: str) -> list[int]:
    return [int(line.split()[0]) for line in out.splitlines()[1:] if line[:1].isdigit()]


ADMIN_CM = [78, 79, 80, 89]
# (filters, the revisions listed)
FILTERS = [
    (["--kind", "configmaps", "--namespace", "demo"], ADMIN_CM),
    (["--kind", "ConfigMap", "-n", "demo"], ADMIN_CM),
    (["--kind", "CM", "--name", "settings"], ADMIN_CM),
    (["--kind", "configmap", "--actor", "kubernetes-admin"], ADMIN_CM),
    (["--kind", "cm", "-n", "demo", "--since", "79", "--until", "80"], [79, 80]),
    (["--kind", "cm", "-n", "demo", "--since", "2026-01-01T00:00:10Z"], [89]),
    (["--kind", "cm", "-n", "demo", "--until", "2026-01-01T00:00:10+00:00"], [78, 79, 80]),
    (["--kind", "pods", "--name", "nobody"], []),
    (["--kind", "clocks", "--actor", "kubernetes-admin"], [88]),
    (["--since", "87"], [87, 88, 89]),
]


@pytest.mark.parametrize(("argv", "expected"), FILTERS, ids=[" ".join(f[0]) for f in FILTERS])
@pytest.mark.parametrize("log", [RECORDING, OLD], ids=["format2", "format1"])
def test_filters(capsys: pytest.CaptureFixture[str], argv: list[str], expected: list[int],
                 log: Path) -> None:
    code, out, err = show(capsys, *argv, log=log)
    assert (code, err) == (0, "")
    assert revisions(out) == expected


def test_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = show(capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["REVISION", "TIME", "ACTOR", "VERB", "KIND",
                                              "NAMESPACE/NAME"]
    assert revisions(out) == list(range(1, 90))
    by_rev = {int(line.split()[0]): line.split() for line in lines[1:]}
    assert by_rev[79] == ["79", "2026-01-01T00:00:00Z", "kubernetes-admin", "patch",
                          "configmaps", "demo/settings"]
    assert by_rev[82][2:5] == ["system:serviceaccount:kube-system:kube-scheduler",
                               "create/binding", "pods"]
    assert by_rev[1][-1] == "default", "a cluster-scoped object: its name alone"


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_json_and_yaml_entries(capsys: pytest.CaptureFixture[str], output: str) -> None:
    code, out, _ = show(capsys, "-o", output, "--kind", "cm", "-n", "demo")
    entries = ([orjson.loads(line) for line in out.splitlines()] if output == "json"
               else list(yaml.safe_load_all(out)))
    assert code == 0 and [e["revision"] for e in entries] == ADMIN_CM
    patch = entries[2]
    assert {k: patch[k] for k in ("type", "actor", "resource", "namespace", "name")} == {
        "type": "MODIFIED", "actor": "kubernetes-admin", "resource": "configmaps",
        "namespace": "demo", "name": "settings"}
    assert patch["request"]["v"] == "patch" and patch["request"]["m"] == "PATCH"
    assert patch["object"]["data"] == {"mode": "slow"}
    assert patch["object"]["metadata"]["resourceVersion"] == "80"


def test_diff_against_the_previous_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = show(capsys, "--diff", "--kind", "cm", "-n", "demo", "--since", "79")
    lines = out.splitlines()
    assert code == 0
    assert lines[1].startswith("79") and lines[2].strip() == '+ metadata.labels: {"tier":"gold"}'
    assert lines[3].startswith("80") and lines[4].strip() == '~ data.mode: "fast" -> "slow"'
    assert lines[5].startswith("89") and lines[6].strip() == "deleted"
    assert "resourceVersion" not in out and "managedFields" not in out
    _, every, _ = show(capsys, "--diff", "--diff-all", "--kind", "cm", "-n", "demo",
                       "--since", "80", "--until", "80")
    assert '~ metadata.resourceVersion: "79" -> "80"' in every
    _, created, _ = show(capsys, "--diff", "--kind", "cm", "-n", "demo", "--until", "78")
    assert created.splitlines()[2].strip() == "created"


BAD = [
    (["--until", "90"], "revision 90 is beyond the end of the log: its revisions run from 1 "
                        "to 89"),
    (["--since", "0"], "revision 0 is not in the log"),
    (["--since", "yesterday"], "invalid --since 'yesterday'"),
]


@pytest.mark.parametrize(("argv", "says"), BAD, ids=[b[0][0] + b[0][1] for b in BAD])
def test_bad_options_are_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                says: str) -> None:
    code, out, err = show(capsys, *argv)
    assert (code, out) == (2, "")
    assert says in err


def test_bad_logs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = show(capsys, log=tmp_path)
    assert (code, out) == (2, "") and "holds no event log" in err
    data = tmp_path / "data"
    shutil.copytree(RECORDING, data)
    path = data / "events.log"
    raw = path.read_bytes()
    path.write_bytes(b"FAKEWAL3" + raw[8:])
    code, out, err = show(capsys, log=data)
    assert (code, out) == (2, "") and "format 3" in err and "offset 0" in err
    offsets = scan_file(RECORDING / "events.log").offsets
    at = offsets[50] + RECORD_HEADER.size + 2
    path.write_bytes(raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1:])
    code, out, err = show(capsys, log=data)
    assert code == 1
    assert revisions(out) == list(range(1, 51)), "what came before the damage"
    assert f"damaged record 51 at offset {offsets[50]}" in err


def test_dir_or_kubeconfig_is_needed(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["log", "show"]) == 2
    assert "needs DIR or --kubeconfig" in capsys.readouterr().err


def test_a_scan_shows_a_progress_bar_on_a_terminal_only(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    code, _, err = show(capsys, "--kind", "cm")
    assert (code, err) == (0, ""), "no bar when stderr is no terminal"
    argv = [sys.executable, "-m", "fakeapi.cli", "log", "show", str(RECORDING), "--kind", "cm"]
    code, seen = stderr_on_a_terminal(argv)
    assert code == 0 and b"reading the log" in seen
