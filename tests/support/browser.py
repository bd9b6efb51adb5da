"""Headless Chromium for the web view's tests and bench: Debian's `chromium` and
`chromium-driver` driven by selenium, on a fresh profile, trusting the test server's own
certificate authority by accepting its certificate; and reading a screenshot's pixels."""

from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000")
"""What Chromium needs to run here: no sandbox (root in a container), no GPU, and nothing
that reaches the network on its own."""
TOKEN_KEY = "fakeapi.token"
"""Where the page keeps the bearer token (sessionStorage)."""


def browser(profile: Path) -> Any:
    """A headless Chromium WebDriver on a fresh profile folder (the test skips, saying why,
    when Chromium, its driver or selenium is missing: scripts/test.sh installs them)."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (Debian: apt-get install "
                    "chromium chromium-driver; scripts/test.sh does when it may)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.accept_insecure_certs = True  # the server's CA is the test's own
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def sign_in(driver: Any, url: str, token: str) -> None:
    """Open the view at `url` as the user of `token` (kept for the session, as the login
    form keeps it)."""
    driver.get(url + "/ui/")
    driver.execute_script("sessionStorage.setItem(arguments[0], arguments[1])", TOKEN_KEY, token)
    driver.refresh()


def script_errors(driver: Any) -> list[str]:
    """The console's errors that are not a failed request (those the page shows itself)."""
    return [e["message"] for e in driver.get_log("browser")
            if e["level"] == "SEVERE" and e.get("source") != "network"]


def _rows(png: bytes, most: int) -> Iterator[tuple[int, bytes]]:
    """(bytes per pixel, the unfiltered bytes) of the first `most` rows of an 8-bit,
    non-interlaced PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, data, header = 8, b"", b""
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        chunk = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            data += chunk
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and not interlace, "an unexpected PNG layout"
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(data)
    stride = width * step
    previous = bytearray(stride)
    for y in range(min(height, most)):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = row[i - step] if i >= step else 0
            up, corner = previous[i], previous[i - step] if i >= step else 0
            if kind == 1:
                row[i] = (row[i] + left) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + up) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                row[i] = (row[i] + (left if pa <= pb and pa <= pc else up if pb <= pc
                                    else corner)) & 0xFF
        previous = row
        yield step, bytes(row)


def colours(png: bytes, rows: int = 300) -> int:
    """How many distinct colours the top `rows` rows of a PNG screenshot hold (1 for a blank
    page; the rows are decoded in Python, so not all of a large one)."""
    seen: set[bytes] = set()
    for step, row in _rows(png, rows):
        seen.update(row[i:i + 3] for i in range(0, len(row), step))
    return len(seen)
