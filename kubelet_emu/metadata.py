"""Device metadata files (KEP-5304), written as the DRA kubelet plugin library writes them.

Per claim and (top-level) request, each driver writes one file on the node,
`<plugin dir>/dra-device-metadata/<ns>_<claim>/<request>/metadata.json`, and a CDI spec that
bind-mounts it read-only into the containers at
`/var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json`
(or `resourceclaimtemplates/<podClaimName>/...` for a claim made from a template). The file
is a stream of DeviceMetadata objects, v1beta1 first and then v1alpha1; `metadata.generation`
starts at 1 and goes up on each update, which replaces the whole file atomically. A request
prepared with no devices gets no file; unprepare removes the files and specs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

import kubelet_emu.cdi as cdi
from kubelet_emu.plugin import base_request

Obj = dict[str, Any]
GROUP = "metadata.resource.k8s.io"
VERSIONS = ("v1beta1", "v1alpha1")
"""The versions written, newest first (v1beta1 is required)."""
CONTAINER_DIR = "/var/run/kubernetes.io/dra-device-attributes"
CLAIMS_DIR = "resourceclaims"
TEMPLATES_DIR = "resourceclaimtemplates"
HOST_SUBDIR = "dra-device-metadata"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Set on claims made from a template: the pod's name for the claim."""
CDI_VERSION = "0.5.0"
FILE_MODE = 0o444


def container_path(driver: str, claim: Obj, request: str) -> str:
    """Where the container finds the file (KEP-5304's layout)."""
    pod_claim = _pod_claim_name(claim)
    if pod_claim:
        return f"{CONTAINER_DIR}/{TEMPLATES_DIR}/{pod_claim}/{request}/{driver}-metadata.json"
    return (f"{CONTAINER_DIR}/{CLAIMS_DIR}/{claim['metadata']['name']}/{request}/"
            f"{driver}-metadata.json")


def _pod_claim_name(claim: Obj) -> str:
    return str((claim["metadata"].get("annotations") or {}).get(POD_CLAIM_ANNOTATION) or "")


class MetadataWriter:
    """One driver's metadata files and their CDI specs on one node."""

    def __init__(self, *, driver: str, plugin_dir: Path, cdi_dir: Path) -> None:
        self.driver = driver
        self.plugin_dir = plugin_dir
        self.cdi_dir = cdi_dir

    def claim_dir(self, namespace: str, name: str) -> Path:
        """The host folder of one claim's files."""
        return self.plugin_dir / HOST_SUBDIR / f"{namespace}_{name}"

    def host_path(self, namespace: str, name: str, request: str) -> Path:
        """The host file of one request."""
        return self.claim_dir(namespace, name) / request / "metadata.json"

    def _cdi_file(self, uid: str, request: str) -> str:
        return f"{self.driver}_metadata_{uid}_{request}.json"

    def document(self, claim: Obj, generation: int, request: str,
                 devices: Sequence[Obj]) -> bytes:
        """The stream: one DeviceMetadata per version, each on its own line(s)."""
        meta = claim["metadata"]
        body: Obj = {"metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""),
                                  "uid": meta["uid"], "generation": generation}}
        pod_claim = _pod_claim_name(claim)
        if pod_claim:
            body["podClaimName"] = pod_claim
        body["requests"] = [{"name": request, "devices": list(devices)}]
        return b"".join(
            orjson.dumps({"kind": "DeviceMetadata", "apiVersion": f"{GROUP}/{v}", **body},
                         option=orjson.OPT_INDENT_2) + b"\n" for v in VERSIONS)

    def write(self, claim: Obj, devices_by_request: dict[str, list[Obj]]) -> dict[str, str]:
        """Write generation 1 of each request's file and its CDI spec; returns the CDI
        device id per top-level request (requests with no device get nothing)."""
        meta = claim["metadata"]
        ids: dict[str, str] = {}
        for request, devices in sorted(devices_by_request.items()):
            if not devices:
                continue
            base = base_request(request)
            path = self.host_path(meta.get("namespace", ""), meta["name"], base)
            cdi.write_atomically(path, self.document(claim, 1, request, devices), FILE_MODE)
            name = f"{meta['uid']}_{base}"
            kind = f"{self.driver}/metadata"
            cdi.write_spec(self.cdi_dir, self._cdi_file(meta["uid"], base), cdi.spec(
                kind, [{"name": name, "containerEdits": {"mounts": [{
                    "hostPath": str(path), "containerPath": container_path(self.driver, claim,
                                                                           base),
                    "options": ["ro", "bind"]}]}}], CDI_VERSION))
            ids[base] = cdi.qualified(kind, name)
        return ids

    def update(self, claim: Obj, request: str, devices: Sequence[Obj]) -> int:
        """Replace a request's file with the next generation (deferred data such as network
        details); returns the new generation. The file must exist (as upstream)."""
        meta = claim["metadata"]
        path = self.host_path(meta.get("namespace", ""), meta["name"], base_request(request))
        first = json.JSONDecoder().raw_decode(path.read_text())[0]
        generation = int(first["metadata"]["generation"]) + 1
        cdi.write_atomically(path, self.document(claim, generation, request, devices),
                             FILE_MODE)
        return generation

    def remove(self, namespace: str, name: str, uid: str) -> None:
        """Remove a claim's files and their CDI specs."""
        shutil.rmtree(self.claim_dir(namespace, name), ignore_errors=True)
        try:
            specs = list(self.cdi_dir.glob(f"{self.driver}_metadata_{uid}_*.json"))
        except FileNotFoundError:
            specs = []
        for path in specs:
            cdi.remove(path)


def read_stream(text: str) -> list[Obj]:
    """Every object of a metadata stream, in order (how a consumer decodes the file)."""
    decoder = json.JSONDecoder()
    out: list[Obj] = []
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = decoder.raw_decode(text, i)
        out.append(obj)
