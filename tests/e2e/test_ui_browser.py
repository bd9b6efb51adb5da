"""The web view in headless Chromium against a real `fakeapi serve` (the default cluster: two
nodes of eight GPUs), with the dra-example-driver's quickstart applied by kubectl v1.37: the
grid shows the allocated GPUs and the pods holding them, a pending pod shows the scheduler's
explanation, a revision picked before a GPU's allocation shows it free (read-only, unwatched)
until back to live, a DeviceFault applied from the page's own form turns the cell Unhealthy without
a reload (its `<script>` message shown as text), a screenshot is not blank, and a user who may
not list ResourceSlices sees the 403, not an empty grid. One server and one browser for the
module: CI time is tight."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.browser import browser, colours, script_errors, sign_in
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll

QUICKSTART = (ROOT / "tests" / "data" / "dra-example-driver" / "examples"
              / "basic-resourceclaimtemplate" / "basic-resourceclaimtemplate.yaml")
NAMESPACE = "basic-resourceclaimtemplate"
ADMIN, VIEWER = "admin-token", "viewer-token"
TOKENS = f'{ADMIN},admin,1,"system:masters"\n{VIEWER},viewer,2\n'
XSS = "<script>alert(1)</script>"
VIEWER_RBAC = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "ui-viewer"}, "rules": [
         {"apiGroups": [""], "resources": ["nodes", "pods", "namespaces"],
          "verbs": ["get", "list", "watch"]},
         {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"],
          "verbs": ["get", "list", "watch"]},
         {"apiGroups": ["emulator.fakeapi.dev"], "resources": ["devicefaults", "nodefaults"],
          "verbs": ["get", "list", "watch"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "ui-viewer"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                 "name": "ui-viewer"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "viewer"}]}]
PENDING = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
     "metadata": {"namespace": NAMESPACE, "name": "nine-gpus"},
     "spec": {"devices": {"requests": [
         {"name": "gpus", "exactly": {"deviceClassName": "gpu.example.com", "count": 9}}]}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": NAMESPACE, "name": "greedy"},
     "spec": {"containers": [{"name": "ctr0", "image": "ubuntu:22.04",
                              "resources": {"claims": [{"name": "gpus"}]}}],
              "resourceClaims": [{"name": "gpus", "resourceClaimName": "nine-gpus"}]}}]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("ui")
    (folder / "tokens.csv").write_text(TOKENS)
    server = start_server(folder / "data", "--token-auth-file", str(folder / "tokens.csv"))
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def k(kubectl_binary: str, srv: ServerProcess) -> Kubectl:
    k = Kubectl(kubectl_binary, srv.kubeconfig)
    k("wait", "--for=create", "node/worker-1", "--timeout=30s")
    k("apply", "-f", str(QUICKSTART))
    k("apply", "-f", "-", input=yaml.safe_dump_all([*VIEWER_RBAC, *PENDING]))
    k("wait", "--for=condition=Ready", "pod/pod0", "pod/pod1", "-n", NAMESPACE, "--timeout=60s")
    return k


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, srv: ServerProcess,
         k: Kubectl) -> Iterator[Any]:
    driver = browser(tmp_path_factory.mktemp("chromium"))
    try:
        yield driver
    finally:
        driver.quit()


def cells(page: Any) -> list[dict[str, str]]:
    """Every device cell: its id, state, health and text."""
    return page.execute_script("""return [...document.querySelectorAll('#grid .cell')].map(
        (c) => ({id: c.dataset.device, state: c.dataset.state, health: c.dataset.health,
                 text: c.innerText}))""")


def text_of(page: Any, selector: str) -> str:
    return page.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", selector)


def allocated(k: Kubectl) -> dict[str, str]:
    """Each quickstart pod's GPU, as the claims' allocations say (device id → pod)."""
    claims = json.loads(k("get", "resourceclaims", "-n", NAMESPACE, "-o", "json"))["items"]
    out = {}
    for c in claims:
        for r in (c["status"].get("allocation") or {}).get("devices", {}).get("results", []):
            for holder in c["status"].get("reservedFor", []):
                out[f"{r['driver']}/{r['pool']}/{r['device']}"] = holder["name"]
    return out


def test_the_grid_shows_the_allocated_gpus_and_the_pods_holding_them(
        page: Any, srv: ServerProcess, k: Kubectl) -> None:
    sign_in(page, srv.url, ADMIN)
    want = allocated(k)
    assert sorted(want.values()) == ["pod0", "pod1"]

    def taken(found: list[dict[str, str]]) -> bool:
        return {c["id"] for c in found if c["state"] == "allocated"} == set(want)

    found = poll(lambda: cells(page), until=taken, what="the two allocated GPUs in the grid")
    assert len(found) == 2 * 10  # two nodes: eight GPUs and two NICs each
    for c in found:
        if c["id"] in want:
            assert f"{NAMESPACE}/{want[c['id']]}" in c["text"]
        assert c["health"] == "Healthy"
    claims = poll(lambda: text_of(page, "#claims"), until=lambda t: "pods pod1" in t,
                  what="the claims table")
    assert "pods pod0" in claims and "Pod pod0" in claims  # reservedFor and the owner
    assert text_of(page, "#whoami") == "signed in as admin"
    assert script_errors(page) == []


def test_a_pending_pod_shows_the_schedulers_explanation(page: Any, srv: ServerProcess) -> None:
    sign_in(page, srv.url, ADMIN)
    shown = poll(lambda: text_of(page, f'[data-pod="{NAMESPACE}/greedy"]'),
                 until=lambda t: "worker-0" in t, what="the pending pod's explanation")
    assert "state: pending" in shown
    assert "DynamicResources" in shown
    assert f"claim {NAMESPACE}/nine-gpus, request gpus (needs 9 of gpu.example.com)" in shown


def test_a_fault_from_the_form_turns_the_cell_unhealthy_without_a_reload(
        page: Any, srv: ServerProcess, k: Kubectl, tmp_path: Path) -> None:
    sign_in(page, srv.url, ADMIN)
    device = sorted(allocated(k))[0]
    button = poll(lambda: page.find_elements("css selector", f'[data-device="{device}"]'),
                  what="the cell")[0]
    page.execute_script("window.notReloaded = true")
    button.click()  # fills the form's node, driver and device
    page.find_element("id", "fault-message").send_keys(XSS)
    poll(lambda: page.find_element("id", "fault-form").find_element(
        "css selector", "button").is_enabled(), what="the form enabled for the admin")
    page.find_element("css selector", "#fault-form button").click()

    def health() -> str:
        return next(c["health"] for c in cells(page) if c["id"] == device)

    poll(health, until=lambda h: h == "Unhealthy", what="the cell Unhealthy")
    assert page.execute_script("return window.notReloaded") is True
    detail = poll(lambda: text_of(page, "#device-detail"), until=lambda t: "Unhealthy" in t,
                  what="the clicked device's details kept current")
    assert detail.startswith(f"{device}\nstate: allocated\nhealth: Unhealthy (reported: ")
    assert "capacity:\n  memory=80Gi" in detail
    [fault] = json.loads(k("get", "devicefaults", "-o", "json"))["items"]
    assert fault["metadata"]["name"].startswith("ui-")
    created, *status = [json.loads(line) for line in k(
        "get", "--raw", "/debug/fakeapi/log?kind=devicefaults&object=false").splitlines()]
    assert (created["actor"], created["verb"]) == ("admin", "create")  # the user's own write
    assert {s["verb"] for s in status} <= {"patch/status"}  # the kubelet: Applied
    # the attacker-controlled message is text: shown as typed, and nothing ran
    shown = poll(lambda: text_of(page, "#faults"), until=lambda t: XSS in t,
                 what="the fault listed")
    assert XSS in shown
    assert page.execute_script("return document.querySelectorAll('script').length") == 1
    assert page.execute_script("return document.querySelectorAll('#faults script').length") == 0
    assert XSS in page.find_element("css selector", f'[data-device="{device}"]').get_attribute(
        "title")

    png = page.get_screenshot_as_png()
    (tmp_path / "ui.png").write_bytes(png)  # for people to look at
    assert colours(png) > 20, "the screenshot is blank"

    page.find_element("css selector", f'[data-fault="{fault["metadata"]["name"]}"] button').click()
    poll(health, until=lambda h: h == "Healthy", what="the cell healed")
    assert json.loads(k("get", "devicefaults", "-o", "json"))["items"] == []
    assert script_errors(page) == []


def test_a_user_who_may_not_list_slices_sees_the_403(page: Any, srv: ServerProcess) -> None:
    sign_in(page, srv.url, VIEWER)
    grid = poll(lambda: text_of(page, "#grid"), until=lambda t: "403" in t,
                what="the 403 in the grid")
    assert grid.startswith("Can't read resourceslices: 403 Forbidden: ")
    assert 'User "viewer" cannot list resource "resourceslices"' in grid
    assert page.find_elements("css selector", "#grid .cell") == []
    assert "resourceslices: 403" in text_of(page, "#errors")
    assert text_of(page, "#status") == "errors"
    # the claims the viewer may read are shown; the fault form is closed to it
    poll(lambda: text_of(page, "#claims"), until=lambda t: "pods pod0" in t, what="claims")
    assert not page.find_element("css selector", "#fault-form button").is_enabled()
    assert text_of(page, "#fault-note") == "you may not create DeviceFaults"


def allocated_at(k: Kubectl, pod: str) -> tuple[str, int, int]:
    """The claim of `pod`, the revision its allocation was written at, and the pod's binding's."""
    claims = json.loads(k("get", "resourceclaims", "-n", NAMESPACE, "-o", "json"))["items"]
    [claim] = [c["metadata"]["name"] for c in claims
               if pod in [r["name"] for r in c["status"].get("reservedFor", [])]]

    def events(kind: str, name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in k(
            "get", "--raw", f"/debug/fakeapi/log?kind={kind}&namespace={NAMESPACE}&name={name}"
        ).splitlines()]

    allocation = min(e["revision"] for e in events("resourceclaims", claim)
                     if (e["object"].get("status") or {}).get("allocation"))
    bound = min(e["revision"] for e in events("pods", pod) if e["object"]["spec"].get("nodeName"))
    return claim, allocation, bound


def test_a_past_revision_shows_the_cluster_as_it_was_then_read_only(
        page: Any, srv: ServerProcess, k: Kubectl) -> None:
    sign_in(page, srv.url, ADMIN)
    device, pod = sorted(allocated(k).items())[0]
    claim, allocation, bound = allocated_at(k, pod)
    assert allocation < bound  # allocated, then bound: before the allocation it was free

    def cell(id: str) -> dict[str, str]:
        return next((c for c in cells(page) if c["id"] == id), {})

    def has_state(state: str, c: dict[str, str]) -> bool:
        return c.get("state") == state

    poll(lambda: cell(device), until=lambda c: c.get("state") == "allocated", what="live cell")
    page.execute_script("window.notReloaded = true")
    # the server answers that revision's list as it was (etcd's Exact), as kubectl reads it
    past = json.loads(k("get", "--raw", f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/"
                        f"resourceclaims?resourceVersion={allocation - 1}"
                        "&resourceVersionMatch=Exact"))
    assert past["metadata"]["resourceVersion"] == str(allocation - 1)
    assert [c["metadata"]["name"] for c in past["items"]
            if (c.get("status") or {}).get("allocation")] == []
    for revision, state, holder in [(allocation - 1, "free", False),
                                    (bound, "allocated", True)]:
        box = page.find_element("id", "travel-revision")
        box.clear()
        box.send_keys(str(revision))
        page.find_element("css selector", "#travel button[type=submit]").click()
        shown = poll(lambda: cell(device), until=functools.partial(has_state, state),
                     what=f"the cell {state} at revision {revision}")
        assert (f"{NAMESPACE}/{pod}" in shown["text"]) is holder
        poll(lambda: text_of(page, "#status"), until=f"revision {revision}".__eq__,
             what="the past revision's status, every kind read")
        assert text_of(page, "#travel-note") == f"showing revision {revision}, read-only"
        assert not page.find_element("css selector", "#fault-form button").is_enabled()
        row = text_of(page, f'[data-claim="{NAMESPACE}/{claim}"]')
        assert ("not allocated" in row) is (state == "free")
        assert (device.split("/", 1)[1] in row) is holder
    # the past is not watched: a change made now shows once back to live
    node = device.split("/")[1]
    k("taint", "node", node, "ui-travel=1:NoSchedule")
    assert "ui-travel" not in text_of(page, f'[data-node="{node}"]')
    page.find_element("id", "live").click()
    poll(lambda: text_of(page, f'[data-node="{node}"]'), until=lambda t: "ui-travel=1" in t,
         what="the new taint, live again")
    k("taint", "node", node, "ui-travel-")
    poll(lambda: text_of(page, "#status"), until=lambda t: t == "live", what="the live status")
    assert cell(device)["state"] == "allocated"
    assert not page.find_element("id", "live").is_displayed()
    assert page.execute_script("return window.notReloaded") is True
    assert script_errors(page) == []
