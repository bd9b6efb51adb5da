"""The dra-example-driver chart's templates (tests/data/dra-example-driver/helm) rendered as
`helm template` renders them for a release `dra-example-driver` in namespace
`dra-example-driver` with the chart's default values: each `{{ include "..." . }}` the
templates use becomes the value the chart's _helpers.tpl computes; any other template syntax
is refused, so a template that needs more than these names fails loudly."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

TEMPLATES = ROOT / "tests/data/dra-example-driver/helm/templates"
RELEASE = "dra-example-driver"
NAMESPACE = "dra-example-driver"
SERVICE_ACCOUNT = f"{RELEASE}-service-account"
INCLUDES = {
    "dra-example-driver.fullname": RELEASE,  # the release name contains the chart's name
    "dra-example-driver.namespace": NAMESPACE,
    "dra-example-driver.serviceAccountName": SERVICE_ACCOUNT,
    "dra-example-driver.driverName": "gpu.example.com",  # deviceProfile "gpu"
}
_INCLUDE = re.compile(r'\{\{ include "([\w.-]+)" \. \}\}')


def render(name: str) -> str:
    """One template of the chart, its includes filled in."""
    text = (TEMPLATES / name).read_text()
    rendered = _INCLUDE.sub(lambda m: INCLUDES[m.group(1)], text)
    if "{{" in rendered:
        raise ValueError(f"{name}: template syntax this renderer doesn't know")
    return rendered
