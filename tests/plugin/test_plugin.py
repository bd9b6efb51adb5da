"""The pytest plugin as a user's test run sees it (pytester runs the user's tests): the entry
point loads it, markers and options configure the cluster as the API shows, bad settings
fail with a clear message, golden logs fail with a diff and `--update-golden` rewrites them,
and teardown leaves no thread, socket, folder or warning behind."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from fakeapi.testing import ClusterSettings, FakeapiCluster

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def loaded() -> None:
    """Load what a cluster and the `kubernetes` client import, once: pytester's in-process
    runs drop the modules a run imported, and native extensions (cel-expr-python, grpc)
    can't be imported twice in one process."""
    import kubernetes.config  # noqa: F401

    with FakeapiCluster(ClusterSettings(nodes=1)) as cluster:
        cluster.client  # noqa: B018


@pytest.fixture(autouse=True)
def user_project(pytester: pytest.Pytester, loaded: None) -> None:
    """The user's project: its own ini (pytest-asyncio, installed here, wants its loop scope
    set, as in any project that has it)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")

FACTS = '''
import json
from pathlib import Path

import pytest
from kubernetes import client

{module_mark}

{mark}
def test_facts(fakeapi_cluster, request):
    core = client.CoreV1Api(fakeapi_cluster.client)
    slices = client.ResourceV1Api(fakeapi_cluster.client).list_resource_slice().items
    api = fakeapi_cluster.client
    response = api.call_api(*api.param_serialize("GET", "/metrics")[:3])
    response.read()
    metrics = response.data
    gates = {{}}
    for line in metrics.decode().splitlines():
        if line.startswith("kubernetes_feature_enabled{{"):
            name = line.split('name="', 1)[1].split('"', 1)[0]
            gates[name] = line.endswith(" 1")
    try:
        fakeapi_cluster.advance("10s")
        clock = "virtual"
    except RuntimeError:
        clock = "real"
    facts = {{
        "nodes": sorted(n.metadata.name for n in core.list_node().items),
        "drivers": sorted({{s.spec.driver for s in slices}}),
        "clock": clock,
        "uid": core.read_namespace("default").metadata.uid,
        "gates": gates,
    }}
    Path(request.node.name + ".json").write_text(json.dumps(facts))
'''


def facts(pytester: pytest.Pytester, *args: str, mark: str = "",
          module_mark: str = "") -> dict[str, Any]:
    """What the cluster of a user's one test showed through the API, run with `args`."""
    pytester.makepyfile(test_facts=FACTS.format(mark=mark, module_mark=module_mark))
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    found: dict[str, Any] = json.loads((pytester.path / "test_facts.json").read_text())
    return found


def test_the_entry_point_loads_the_plugin_in_a_fresh_process(
        pytester: pytest.Pytester) -> None:
    fixtures = pytester.runpytest_subprocess("--fixtures")
    assert fixtures.ret == 0
    fixtures.stdout.fnmatch_lines(["fakeapi_cluster -- *fakeapi/testing/plugin.py:*"])
    markers = pytester.runpytest_subprocess("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.fakeapi(feature_gates=*"])
    help_text = pytester.runpytest_subprocess("--help").stdout.str()
    for option in ("--fakeapi-feature-gates", "--fakeapi-node-profile", "--fakeapi-nodes",
                   "--fakeapi-clock", "--update-golden"):
        assert option in help_text


DEFAULT_DRIVERS = ["gpu.example.com", "nic.example.com"]
PROFILES = Path(__file__).resolve().parents[1] / "data" / "kubelet_emu" / "profiles"


@pytest.mark.parametrize(("args", "mark", "module_mark", "expected"), [
    pytest.param((), "", "", {"nodes": ["worker-0", "worker-1"], "drivers": DEFAULT_DRIVERS,
                              "clock": "virtual"}, id="fakeapi serve's defaults, virtual"),
    pytest.param(("--fakeapi-nodes", "1", "--fakeapi-node-profile", "gpu"), "", "",
                 {"nodes": ["worker-0"], "drivers": ["gpu.example.com"]}, id="options"),
    pytest.param((), '@pytest.mark.fakeapi(nodes=3, node_profile="net")', "",
                 {"nodes": ["worker-0", "worker-1", "worker-2"],
                  "drivers": ["net.example.com"]}, id="a marker"),
    pytest.param(("--fakeapi-nodes", "3"), "@pytest.mark.fakeapi(nodes=1)", "",
                 {"nodes": ["worker-0"]}, id="a marker over an option"),
    pytest.param((), "@pytest.mark.fakeapi(nodes=0)",
                 'pytestmark = pytest.mark.fakeapi(nodes=1, node_profile="gpu")',
                 {"nodes": [], "drivers": []}, id="a function's marker over its module's"),
    pytest.param((), "", 'pytestmark = pytest.mark.fakeapi(node_profile="gpu")',
                 {"drivers": ["gpu.example.com"]}, id="a module's marker"),
    pytest.param(("--fakeapi-clock", "real"), "@pytest.mark.fakeapi(nodes=0)", "",
                 {"clock": "real"}, id="the real clock by option"),
    pytest.param(("--fakeapi-clock", "real"), "@pytest.mark.fakeapi(clock='virtual')", "",
                 {"clock": "virtual"}, id="the virtual clock by marker over the option"),
    pytest.param(("--fakeapi-feature-gates", "DRAResourcePoolStatus=true,DRAPartitionable"
                  "Devices=false"),
                 "@pytest.mark.fakeapi(nodes=0, feature_gates={'DRAPartitionableDevices': "
                 "True, 'DRAConsumableCapacity': False})", "",
                 {"gates": {"DRAResourcePoolStatus": True, "DRAPartitionableDevices": True,
                            "DRAConsumableCapacity": False}},
                 id="gates: a marker's over the option's, the rest kept"),
    pytest.param((), "@pytest.mark.fakeapi(feature_gates='DRAResourcePoolStatus=true')", "",
                 {"gates": {"DRAResourcePoolStatus": True}}, id="gates as a string"),
    pytest.param(("--fakeapi-node-profile", str(PROFILES / "cpu-one-numa-node.yaml")), "", "",
                 {"drivers": ["cpu.example.com"]}, id="a profile file by option"),
    pytest.param((), f"@pytest.mark.fakeapi(node_profile=Path({str(PROFILES)!r}) / "
                 "'cpu-one-numa-node.yaml', nodes=1)", "",
                 {"nodes": ["worker-0"], "drivers": ["cpu.example.com"]},
                 id="a profile file by marker, as a Path"),
    pytest.param((), "@pytest.mark.fakeapi(components='-kubelet')", "",
                 {"nodes": [], "drivers": []}, id="components"),
])
def test_markers_and_options_configure_the_cluster(
        pytester: pytest.Pytester, args: tuple[str, ...], mark: str, module_mark: str,
        expected: dict[str, Any]) -> None:
    found = facts(pytester, *args, mark=mark, module_mark=module_mark)
    for key, value in expected.items():
        if key == "gates":
            assert {g: found["gates"][g] for g in value} == value
        else:
            assert found[key] == value, key


def test_a_seed_fixes_the_uids_and_none_leaves_them_random(pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        import pytest
        from kubernetes import client

        UIDS = []

        @pytest.mark.parametrize("seed", [1, 1, 2, None, None])
        def test_uid(request, seed):
            request.applymarker(pytest.mark.fakeapi(seed=seed, nodes=0))
            cluster = request.getfixturevalue("fakeapi_cluster")
            UIDS.append(client.CoreV1Api(cluster.client).read_namespace("default")
                        .metadata.uid)

        def test_compare():
            one, again, two, random1, random2 = UIDS
            assert one == again and len({one, two, random1, random2}) == 4
    ''')
    pytester.runpytest().assert_outcomes(passed=6)


@pytest.mark.parametrize(("args", "mark", "message"), [
    pytest.param((), "@pytest.mark.fakeapi(node=1)",
                 "@pytest.mark.fakeapi got unknown arguments node; it takes feature_gates, "
                 "node_profile, nodes, clock, seed, components", id="unknown argument"),
    pytest.param((), "@pytest.mark.fakeapi(1)",
                 "@pytest.mark.fakeapi takes keyword arguments only: *", id="positional"),
    pytest.param((), "@pytest.mark.fakeapi(feature_gates={'NoSuchGate': True})",
                 "fakeapi_cluster can't run with feature gates: unrecognized feature gate: "
                 "NoSuchGate", id="unknown gate"),
    pytest.param((), "@pytest.mark.fakeapi(feature_gates='DRAResourcePoolStatus')",
                 "@pytest.mark.fakeapi(feature_gates='DRAResourcePoolStatus'): missing bool "
                 "value for DRAResourcePoolStatus", id="gate without a value"),
    pytest.param((), "@pytest.mark.fakeapi(feature_gates={'DRAResourcePoolStatus': 'yes'})",
                 "@pytest.mark.fakeapi(feature_gates=...) takes a dict of gate names to "
                 "True/False or 'A=true,B=false', not *", id="gate not a bool"),
    pytest.param((), "@pytest.mark.fakeapi(nodes=-1, clock='sideways', seed='x')",
                 "fakeapi_cluster can't run with clock='sideways': one of virtual, real; "
                 "nodes=-1: a number >= 0; seed='x': a number or None", id="bad values"),
    pytest.param((), "@pytest.mark.fakeapi(node_profile=5, components=['scheduler'])",
                 "fakeapi_cluster can't run with node_profile=5: a profile's name or file; "
                 "components=['scheduler']: a list like '*,-kubelet'", id="bad types"),
    pytest.param(("--fakeapi-nodes", "-2"), "",
                 "fakeapi_cluster can't run with nodes=-2: a number >= 0",
                 id="negative node count option"),
    pytest.param((), "@pytest.mark.fakeapi(node_profile='no-such-profile')",
                 "fakeapi_cluster can't start: unknown node profile 'no-such-profile': *",
                 id="unknown profile"),
    pytest.param(("--fakeapi-node-profile", "missing.yaml"), "",
                 "fakeapi_cluster can't start: *missing.yaml*", id="missing profile file"),
    pytest.param((), "@pytest.mark.fakeapi(components='nope')",
                 "fakeapi_cluster can't start: 'nope' not in the list of known components: *",
                 id="unknown component"),
])
def test_bad_settings_fail_the_test_saying_why(pytester: pytest.Pytester,
                                               args: tuple[str, ...], mark: str,
                                               message: str) -> None:
    pytester.makepyfile(f"import pytest\n\n{mark}\ndef test_it(fakeapi_cluster):\n    pass\n")
    result = pytester.runpytest(*args)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(("args", "message"), [
    (("--fakeapi-feature-gates", "NoSuchGate=true"),
     "*argument --fakeapi-feature-gates: unrecognized feature gate: NoSuchGate"),
    (("--fakeapi-feature-gates", "DRAResourcePoolStatus=maybe"),
     "*argument --fakeapi-feature-gates: invalid value of DRAResourcePoolStatus=maybe*"),
    (("--fakeapi-clock", "sideways"),
     "*argument --fakeapi-clock: invalid choice: 'sideways' (choose from *virtual*real*)"),
    (("--fakeapi-nodes", "two"), "*argument --fakeapi-nodes: invalid int value: 'two'"),
])
def test_bad_options_are_usage_errors(pytester: pytest.Pytester, args: tuple[str, ...],
                                      message: str) -> None:
    pytester.makepyfile("def test_it(fakeapi_cluster):\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


GOLDEN = '''
from kubernetes import client
from fakeapi.testing import assert_matches_golden

def test_log(fakeapi_cluster):
    core = client.CoreV1Api(fakeapi_cluster.client)
    core.create_namespaced_config_map("default", {{
        "metadata": {{"name": "settings"}},
        "data": {{"colour": "{colour}", "server": fakeapi_cluster.url}}}})
    assert_matches_golden(fakeapi_cluster, "golden/log.yaml", ignore={ignore!r})
'''


def golden_run(pytester: pytest.Pytester, *args: str, colour: str = "blue",
               ignore: tuple[str, ...] = ()) -> pytest.RunResult:
    pytester.makepyfile(test_golden=GOLDEN.format(colour=colour, ignore=ignore))
    return pytester.runpytest("--fakeapi-nodes", "0", *args)


def test_a_missing_golden_log_fails_and_update_golden_writes_it(
        pytester: pytest.Pytester) -> None:
    result = golden_run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["golden log */golden/log.yaml does not exist: run pytest "
                                 "with --update-golden to write it"])
    golden = pytester.path / "golden" / "log.yaml"
    assert not golden.exists()

    result = golden_run(pytester, "--update-golden")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*fakeapi golden logs rewritten*", str(golden)])
    text = golden.read_text()
    assert text.startswith("# fakeapi golden log: 1 events after the cluster was ready")
    assert "--- # " in text and " ADDED configmaps default/settings by kubernetes-admin at " \
        "2026-01-01T00:00:00Z\n" in text
    assert "colour: blue\n" in text
    assert "server: https://<server>\n" in text  # the ephemeral port is normalised
    assert "managedFields" in text and "uid: " in text  # nothing else is dropped

    golden_run(pytester).assert_outcomes(passed=1)  # another port, the same log
    result = golden_run(pytester, "--update-golden")  # unchanged: not rewritten
    result.assert_outcomes(passed=1)
    assert "golden logs rewritten" not in result.stdout.str()


def test_a_golden_mismatch_fails_with_a_diff_naming_the_event(
        pytester: pytest.Pytester) -> None:
    golden_run(pytester, "--update-golden").assert_outcomes(passed=1)
    before = (pytester.path / "golden" / "log.yaml").read_text()

    result = golden_run(pytester, colour="red")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "the log differs from the golden log */golden/log.yaml (pytest --update-golden "
        "rewrites it):",
        "--- log.yaml (golden)",
        "+++ log.yaml (this run)",
        "@@ * @@ event * ADDED configmaps default/settings by kubernetes-admin at *",
        "*-  colour: blue",
        "*+  colour: red",
    ])
    assert "Traceback" not in result.stdout.str()
    assert (pytester.path / "golden" / "log.yaml").read_text() == before

    golden_run(pytester, "--update-golden", colour="red").assert_outcomes(passed=1)
    golden_run(pytester, colour="red").assert_outcomes(passed=1)


def test_ignored_fields_are_left_out_of_the_golden_log(pytester: pytest.Pytester) -> None:
    golden_run(pytester, "--update-golden", ignore=("metadata.managedFields", "data.colour"))
    text = (pytester.path / "golden" / "log.yaml").read_text()
    assert "managedFields" not in text and "colour" not in text and "server:" in text
    golden_run(pytester, colour="red", ignore=("metadata.managedFields", "data.colour")
               ).assert_outcomes(passed=1)


def test_golden_logs_need_the_virtual_clock(pytester: pytest.Pytester) -> None:
    result = golden_run(pytester, "--fakeapi-clock", "real", "--update-golden")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["assert_matches_golden needs a reproducible log: the virtual "
                                 "clock and a seed (this cluster has clock='real', seed=1)"])
    assert not (pytester.path / "golden").exists()


def test_teardown_leaves_no_thread_socket_folder_or_warning(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile('''
        import json
        from pathlib import Path

        def test_it(fakeapi_cluster):
            fakeapi_cluster.client  # made, so that closing it is part of the teardown
            Path("seen.json").write_text(json.dumps(
                {"port": int(fakeapi_cluster.url.rsplit(":", 1)[1]),
                 "state": str(fakeapi_cluster.state_dir)}))
    ''')
    before = set(threading.enumerate())
    result = pytester.runpytest("-W", "error", "--fakeapi-nodes", "1")
    result.assert_outcomes(passed=1)
    assert "warnings" not in result.parseoutcomes()
    assert set(threading.enumerate()) <= before
    seen = json.loads((pytester.path / "seen.json").read_text())
    assert not Path(seen["state"]).exists()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(
            ("127.0.0.1", seen["port"]), timeout=5):
        pass


def test_the_readme_example_is_the_example_test() -> None:
    root = Path(__file__).resolve().parents[2]
    example = (root / "tests" / "plugin" / "test_example.py").read_text()
    readme = (root / "README.md").read_text()
    assert example in readme
