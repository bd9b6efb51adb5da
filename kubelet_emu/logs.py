"""Container logs, kept as a kubelet keeps them: one file per container run under the node's
`var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`, in the CRI log format
(`<RFC 3339 nano time> <stdout|stderr> F <line>`).

`read_log` is the log source `kubectl logs` needs: the API server's `pods/log` endpoint can
call it with the node's root folder (see `Kubelet.container_log` for the in-process way).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import kubelet_emu.node_dirs as node_dirs


def log_dir(root: Path, namespace: str, pod: str, uid: str, container: str) -> Path:
    """The folder of one container's log files on the node."""
    return root / node_dirs.LOGS / f"{namespace}_{pod}_{uid}" / container


def cri_time(t: dt.datetime) -> str:
    """RFC 3339 with nanoseconds, as CRI log lines carry it."""
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


def append(path: Path, lines: list[tuple[dt.datetime, bool, str]]) -> None:
    """Append (time, stderr, text) lines to a CRI log file."""
    if not lines:
        return
    stamps: dict[dt.datetime, str] = {}  # (a batch shares its time: one strftime)
    text = "".join(f"{stamps.get(t) or stamps.setdefault(t, cri_time(t))} "
                   f"{'stderr' if stderr else 'stdout'} F {line}\n" for t, stderr, line in lines)
    try:
        f = path.open("a")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = path.open("a")
    with f:
        f.write(text)


def parse(text: str, *, timestamps: bool = False) -> str:
    """The log as `kubectl logs` prints it: the lines' content (with their times when
    `timestamps`), each ending in a newline."""
    out = []
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4:
            continue
        content = parts[3]
        out.append(f"{parts[0]} {content}\n" if timestamps else f"{content}\n")
    return "".join(out)


def read_log(root: Path, *, namespace: str, pod: str, uid: str, container: str,
             previous: bool = False, timestamps: bool = False) -> str | None:
    """A container's log (`previous`: the run before the current one), or None when that
    container has never logged on this node."""
    folder = log_dir(root, namespace, pod, uid, container)
    try:
        runs = sorted((int(p.stem), p) for p in folder.glob("*.log") if p.stem.isdigit())
    except FileNotFoundError:
        return None
    if previous:
        runs = runs[:-1]
    if not runs:
        return None
    return parse(runs[-1][1].read_text(), timestamps=timestamps)
