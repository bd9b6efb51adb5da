"""`Warning` response headers, written as upstream's warning recorder writes them.

Same as k8s.io/apiserver's WithWarningRecorder: empty and repeated texts are skipped, each
warning is one `299 - "text"` header (quotes and backslashes escaped), a text with control
characters is dropped (net.NewWarningHeader refuses it: a CR or LF would split the header),
and past 4096 runes in all, every warning is cut to 256 runes and the rest are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def header_value(text: str) -> str:
    """One warning as a header value: code 299, agent "-", the quoted text."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def warning_headers(texts: Iterable[str]) -> list[str]:
    """The Warning header values for `texts`, in order."""
    ordered: list[str] = []
    for text in texts:
        if text and text not in ordered:
            ordered.append(text)
    sendable = [t for t in ordered if not _CONTROL.search(t)]
    kept: list[str] = []
    written = 0
    truncating = False
    for i, text in enumerate(sendable):
        if truncating:
            if written >= TRUNCATE_AT_TOTAL_RUNES:
                break
            kept.append(text[:TRUNCATE_ITEM_RUNES])
            written += len(kept[-1])
        elif written + len(text) <= TRUNCATE_AT_TOTAL_RUNES:
            kept.append(text)
            written += len(text)
        else:  # over the limit: from now on every warning (the earlier ones too) is cut
            truncating = True
            kept = [t[:TRUNCATE_ITEM_RUNES] for t in sendable[: i + 1]]
            written = sum(len(t) for t in kept)
    return [header_value(t) for t in kept]
