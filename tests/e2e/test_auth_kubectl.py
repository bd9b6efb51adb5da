"""Authentication and authorization with the real kubectl v1.37: token-file users, `--as`
impersonation, RBAC per default role, `auth can-i` (and `--list`), `auth whoami`, RBAC
escalation checks, and DRA's synthetic claim-status permissions."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.kubectl import Kubectl, token_kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.seeds import SEED_GATES, claim_manifest

TOKENS = '''alice-token,alice,1001,"dev,qa"
bob-token,bob,1002
sched-token,sched,1003
'''
ROLES = ("view", "edit", "admin")
ALLOCATION = {"status": {"allocation": {
    "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                             "device": "gpu-0"}]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}}
DEVICES = {"status": {"devices": [{"driver": "gpu.example.com", "pool": "node-1",
                                   "device": "gpu-0"}]}}
PLUGIN = "system:serviceaccount:kube-system:dra-kubelet-plugin"
NODE_EXTRA = "authentication.kubernetes.io/node-name={node}"


@pytest.fixture(scope="module")
def auth_server(kubectl_binary: str,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with a token file and the gates the seeds use (RPSRs are served)."""
    tmp = tmp_path_factory.mktemp("auth")
    tokens = tmp / "tokens.csv"
    tokens.write_text(TOKENS)
    srv = start_server(tmp / "data", "--token-auth-file", str(tokens), "--feature-gates",
                       SEED_GATES)
    yield srv
    assert srv.stop() == 0


@pytest.fixture(scope="module")
def admin(kubectl_binary: str, auth_server: ServerProcess) -> Kubectl:
    """kubectl with the admin client certificate (system:masters)."""
    return Kubectl(kubectl_binary, auth_server.kubeconfig)


@pytest.fixture(scope="module")
def bob(admin: Kubectl) -> Kubectl:
    """bob from the token file: authenticated, no bindings."""
    return token_kubectl(admin, "bob-token")


@pytest.fixture(scope="module")
def namespaces(admin: Kubectl) -> dict[str, str]:
    """One namespace per default role, alice bound to that role there, and a claim in each."""
    out = {}
    for role in ROLES:
        ns = f"auth-{role}"
        admin("create", "namespace", ns)
        admin("create", "rolebinding", f"alice-{role}", f"--clusterrole={role}", "--user=alice",
              "-n", ns)
        admin("apply", "-n", ns, "-f", "-", input=claim_manifest("existing"))
        out[role] = ns
    return out


def run(k: Kubectl, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return k.run(*args, input=input, check=False)


# --- who am I ---------------------------------------------------------------------------


@pytest.mark.parametrize(("token", "args", "user"), [
    (None, [], {"username": "kubernetes-admin",
                "groups": ["system:masters", "system:authenticated"]}),
    ("alice-token", [], {"username": "alice", "uid": "1001",
                         "groups": ["dev", "qa", "system:authenticated"]}),
    ("bob-token", [], {"username": "bob", "uid": "1002", "groups": ["system:authenticated"]}),
    (None, ["--as=alice", "--as-group=dev"], {"username": "alice",
                                              "groups": ["dev", "system:authenticated"]}),
    (None, ["--as=system:serviceaccount:kube-system:dra-kubelet-plugin",
            "--as-user-extra=" + NODE_EXTRA.format(node="node-1")],
     {"username": PLUGIN, "groups": ["system:serviceaccounts",
                                     "system:serviceaccounts:kube-system",
                                     "system:authenticated"],
      "extra": {"authentication.kubernetes.io/node-name": ["node-1"]}}),
])
def test_whoami(admin: Kubectl, token: str | None, args: list[str], user: dict) -> None:
    k = token_kubectl(admin, token) if token else admin
    got = json.loads(k("auth", "whoami", "-o", "json", *args))
    assert got["kind"] == "SelfSubjectReview"
    assert got["status"]["userInfo"] == user


def test_whoami_table(admin: Kubectl) -> None:
    out = token_kubectl(admin, "alice-token")("auth", "whoami")
    assert out.split("\n")[:4] == ["ATTRIBUTE   VALUE", "Username    alice", "UID         1001",
                                   "Groups      [dev qa system:authenticated]"]


def test_bad_token_is_unauthorized(admin: Kubectl) -> None:
    res = run(token_kubectl(admin, "no-such-token"), "get", "pods")
    assert res.returncode == 1
    # kubectl words it after its first call (discovery), as against any apiserver
    assert "error: You must be logged in to the server (" in res.stderr


# --- impersonation ----------------------------------------------------------------------


def test_impersonation_needs_the_impersonate_verb(admin: Kubectl, bob: Kubectl) -> None:
    pods = "/api/v1/namespaces/default/pods"  # --raw: no discovery, the 403 comes through
    res = run(bob, "--as=alice", "get", "--raw", pods)
    assert res.returncode == 1
    assert res.stderr.strip() == (
        'Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot '
        'impersonate resource "users" in API group "" at the cluster scope')
    admin("create", "clusterrole", "impersonate-alice", "--verb=impersonate", "--resource=users",
          "--resource-name=alice")
    admin("create", "clusterrolebinding", "bob-impersonates", "--clusterrole=impersonate-alice",
          "--user=bob")
    assert json.loads(bob("--as=alice", "auth", "whoami", "-o", "json"))["status"][
        "userInfo"]["username"] == "alice"
    res = run(bob, "--as=alice", "--as-group=dev", "get", "--raw", pods)
    assert res.stderr.strip() == (
        'Error from server (Forbidden): groups "dev" is forbidden: User "bob" cannot '
        'impersonate resource "groups" in API group "" at the cluster scope')


# --- RBAC per default role --------------------------------------------------------------

FORBIDDEN = ('Error from server (Forbidden): {prefix}{what} is forbidden: User "alice" cannot '
             '{verb} resource "{resource}" in API group "{group}" {scope}')
RC = "resource.k8s.io"
CASES = [
    # (role, args, stdin, None when allowed else (prefix, what, verb, resource, group, scoped))
    ("view", ["get", "resourceclaims"], None, None),
    ("view", ["get", "resourceclaim", "existing", "--subresource=status"], None, None),
    ("view", ["create", "-f", "-"], claim_manifest("new"),
     ('error when creating "STDIN": ', f"resourceclaims.{RC}", "create", "resourceclaims", RC,
      True)),
    ("view", ["delete", "resourceclaim", "existing"], None,
     ("", f'resourceclaims.{RC} "existing"', "delete", "resourceclaims", RC, True)),
    ("view", ["get", "configmaps"], None, None),
    ("view", ["get", "rolebindings"], None,
     ("", "rolebindings.rbac.authorization.k8s.io", "list", "rolebindings",
      "rbac.authorization.k8s.io", True)),
    ("edit", ["create", "-f", "-"], claim_manifest("new"), None),
    ("edit", ["label", "resourceclaim", "existing", "a=b"], None, None),
    ("edit", ["patch", "resourceclaim", "existing", "--subresource=status", "--type=merge",
              "-p", '{"status":{"devices":[]}}'], None,
     ("", f'resourceclaims.{RC} "existing"', "patch", "resourceclaims/status", RC, True)),
    ("edit", ["create", "role", "r", "--verb=get", "--resource=pods"], None,
     ("", "roles.rbac.authorization.k8s.io", "create", "roles", "rbac.authorization.k8s.io",
      True)),
    ("admin", ["create", "role", "r", "--verb=get", "--resource=pods"], None, None),
    ("admin", ["create", "rolebinding", "rb", "--clusterrole=view", "--user=carol"], None, None),
    ("admin", ["get", "deviceclasses"], None,
     ("", f"deviceclasses.{RC}", "list", "deviceclasses", RC, False)),
    ("admin", ["get", "resourcepoolstatusrequests"], None,
     ("", f"resourcepoolstatusrequests.{RC}", "list", "resourcepoolstatusrequests", RC, False)),
    ("admin", ["get", "pods", "-n", "default"], None, ("", "pods", "list", "pods", "", "default")),
]


@pytest.mark.parametrize(("role", "args", "stdin", "refusal"), CASES,
                         ids=[f"{c[0]}-{' '.join(c[1][:2])}" for c in CASES])
def test_default_roles(admin: Kubectl, namespaces: dict[str, str], role: str, args: list[str],
                       stdin: str | None, refusal: tuple | None) -> None:
    ns = namespaces[role]
    res = run(admin, "--as=alice", "-n", ns, *args, input=stdin)
    if refusal is None:
        assert res.returncode == 0, res.stderr
        return
    prefix, what, verb, resource, group, scoped = refusal
    if scoped is True:
        scope = f'in the namespace "{ns}"'
    elif scoped:
        scope = f'in the namespace "{scoped}"'
    else:
        scope = "at the cluster scope"
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == FORBIDDEN.format(
        prefix=prefix, what=what, verb=verb, resource=resource, group=group, scope=scope)


def test_escalation_is_refused(admin: Kubectl, namespaces: dict[str, str]) -> None:
    res = run(admin, "--as=alice", "-n", namespaces["admin"], "create", "rolebinding", "esc",
              "--clusterrole=cluster-admin", "--user=alice")
    assert res.returncode == 1
    assert res.stderr.splitlines() == [
        'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "esc" is '
        'forbidden: user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC '
        "permissions not currently held:",
        '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
        '{NonResourceURLs:["*"], Verbs:["*"]}']


# --- can-i ------------------------------------------------------------------------------

CAN_I = [
    ("view", ["list", "resourceclaims"], True),
    ("view", ["create", "resourceclaims"], False),
    ("view", ["get", "resourceclaims", "--subresource=status"], True),
    ("edit", ["create", "resourceclaimtemplates"], True),
    ("edit", ["update", "resourceclaims", "--subresource=status"], False),
    ("admin", ["create", "rolebindings"], True),
    ("admin", ["create", "resourcepoolstatusrequests"], False),
    ("admin", ["update", "resourceclaims", "--subresource=binding"], False),
    ("admin", ["list", "deviceclasses"], False),
]


@pytest.mark.parametrize(("role", "args", "allowed"), CAN_I,
                         ids=[f"{c[0]}-{' '.join(c[1])}" for c in CAN_I])
def test_can_i(admin: Kubectl, namespaces: dict[str, str], role: str, args: list[str],
               allowed: bool) -> None:
    res = run(admin, "auth", "can-i", *args, "--as=alice", "-n", namespaces[role])
    assert (res.stdout.strip(), res.returncode) == (("yes", 0) if allowed else ("no", 1))


@pytest.mark.parametrize(("args", "answer"), [
    (["create", "resourcepoolstatusrequests"], "yes"),
    (["update", "resourceclaims", "--subresource=binding"], "yes"),
    (["get", "/metrics"], "yes"),
    (["get", "/metrics", "--as=alice"], "no"),
    (["get", "/version", "--as=alice"], "yes"),
    (["get", "/apis/resource.k8s.io/v1", "--as=alice"], "yes"),
])
def test_can_i_cluster_wide(admin: Kubectl, args: list[str], answer: str) -> None:
    assert run(admin, "auth", "can-i", *args).stdout.strip() == answer


def _list_rows(out: str) -> dict[str, str]:
    rows = {}
    for line in out.splitlines()[1:]:
        cells = line.split()
        if cells and not cells[0].startswith("["):
            rows[cells[0]] = " ".join(sorted(line.split("[", 3)[-1].rstrip("]").split()))
    return rows


@pytest.mark.parametrize(("role", "resource", "verbs"), [
    ("view", "resourceclaims.resource.k8s.io", "get list watch"),
    ("view", "resourceclaims.resource.k8s.io/status", "get list watch"),
    ("edit", "resourceclaimtemplates.resource.k8s.io",
     "create delete deletecollection get list patch update watch"),
    ("admin", "rolebindings.rbac.authorization.k8s.io",
     "create delete deletecollection get list patch update watch"),
])
def test_can_i_list(admin: Kubectl, namespaces: dict[str, str], role: str, resource: str,
                    verbs: str) -> None:
    out = admin("auth", "can-i", "--list", "--as=alice", "-n", namespaces[role])
    assert out.splitlines()[0].split() == ["Resources", "Non-Resource", "URLs", "Resource",
                                           "Names", "Verbs"]
    assert _list_rows(out)[resource] == verbs
    assert "resourcepoolstatusrequests" not in out
    assert "[/version]" in out


# --- synthetic claim-status permissions -------------------------------------------------


def test_claim_status_needs_binding_and_driver_permissions(admin: Kubectl) -> None:
    ns = "auth-status"
    admin("create", "namespace", ns)
    admin("apply", "-n", ns, "-f", "-", input=claim_manifest("c1"))
    admin("create", "clusterrole", "claim-status-writer", "--verb=get,update,patch",
          "--resource=resourceclaims,resourceclaims/status")
    admin("create", "clusterrolebinding", "sched-status", "--clusterrole=claim-status-writer",
          "--user=sched")
    sched = token_kubectl(admin, "sched-token")

    def patch(k: Kubectl, body: dict, *extra: str) -> subprocess.CompletedProcess[str]:
        return run(k, *extra, "-n", ns, "patch", "resourceclaim", "c1", "--subresource=status",
                   "--type=merge", "-p", json.dumps(body))

    res = patch(sched, ALLOCATION)
    assert res.returncode == 1
    assert res.stderr.strip() == (
        'The ResourceClaim "c1" is invalid: status: Forbidden: changing status.allocation or '
        "status.reservedFor requires extra permission: resourceclaims.resource.k8s.io is "
        'forbidden: User "sched" cannot patch resource "resourceclaims/binding" in API group '
        '"resource.k8s.io" at the cluster scope')
    assert "allocation" not in json.loads(admin("get", "-n", ns, "resourceclaim", "c1", "-o",
                                                "json")).get("status", {})
    admin("create", "clusterrole", "claim-binder", "--verb=update,patch",
          "--resource=resourceclaims/binding")
    admin("create", "clusterrolebinding", "sched-binder", "--clusterrole=claim-binder",
          "--user=sched")
    assert patch(sched, ALLOCATION).returncode == 0

    # status.devices: the scheduler has no driver permission at all
    res = patch(sched, DEVICES)
    assert res.returncode == 1
    assert ('status.devices: Forbidden: changing status.devices requires extra permission: '
            'resourceclaims.resource.k8s.io "gpu.example.com" is forbidden: User "sched" cannot '
            'arbitrary-node:patch resource "resourceclaims/driver" in API group '
            f'"resource.k8s.io" in the namespace "{ns}"') in res.stderr
    # the emulator's plugin identity may write devices of claims allocated to its own node
    other = patch(admin, DEVICES, f"--as={PLUGIN}",
                  "--as-user-extra=" + NODE_EXTRA.format(node="node-2"))
    assert other.returncode == 1
    assert f'User "{PLUGIN}" cannot arbitrary-node:patch' in other.stderr
    own = patch(admin, DEVICES, f"--as={PLUGIN}",
                "--as-user-extra=" + NODE_EXTRA.format(node="node-1"))
    assert own.returncode == 0, own.stderr
    got = json.loads(admin("get", "-n", ns, "resourceclaim", "c1", "-o", "json"))
    assert got["status"]["devices"] == DEVICES["status"]["devices"]


# --- the bootstrap policy as kubectl sees it --------------------------------------------


def test_bootstrap_roles_are_listed(admin: Kubectl) -> None:
    roles = admin("get", "clusterroles", "-o", "name").split()
    for name in ("cluster-admin", "admin", "edit", "view", "system:basic-user",
                 "system:discovery", "system:public-info-viewer"):
        assert f"clusterrole.rbac.authorization.k8s.io/{name}" in roles
    view = json.loads(admin("get", "clusterrole", "view", "-o", "json"))
    assert view["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}
    assert {"apiGroups": ["resource.k8s.io"],
            "resources": ["resourceclaims", "resourceclaims/status", "resourceclaimtemplates"],
            "verbs": ["get", "list", "watch"]} in view["rules"]


def test_a_new_aggregated_role_extends_view(admin: Kubectl, namespaces: dict[str, str]) -> None:
    ns = namespaces["view"]
    assert run(admin, "auth", "can-i", "list", "deviceclasses", "--as=alice").stdout.strip() == (
        "no")
    admin("apply", "-f", "-", input="""
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: view-leases
  labels: {rbac.authorization.k8s.io/aggregate-to-view: "true"}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list]}
""")
    assert admin("auth", "can-i", "list", "leases", "--as=alice", "-n", ns).strip() == "yes"
    # admin and edit aggregate view, so they get it too
    assert admin("auth", "can-i", "list", "leases", "--as=alice", "-n",
                 namespaces["admin"]).strip() == "yes"


def test_data_dir_keeps_the_policy(tmp_path: Path, admin: Kubectl) -> None:
    """Restarting on the same data directory keeps bindings and doesn't duplicate roles."""
    srv = start_server(tmp_path / "data")
    try:
        k = Kubectl(admin.binary, srv.kubeconfig)
        k("create", "clusterrolebinding", "keep", "--clusterrole=view", "--user=zed")
    finally:
        assert srv.stop() == 0
    srv = start_server(tmp_path / "data")
    try:
        k = Kubectl(admin.binary, srv.kubeconfig)
        assert k("get", "clusterrolebinding", "keep", "-o", "name").strip() == (
            "clusterrolebinding.rbac.authorization.k8s.io/keep")
        assert k("auth", "can-i", "list", "pods", "--as=zed", "-n", "default").strip() == "yes"
    finally:
        assert srv.stop() == 0
