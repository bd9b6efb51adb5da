"""`fakeapi replay DIR`: feed a recording's external inputs into a fresh control plane on a
virtual clock; `--check` compares the new log with the recording, `--until REV|TIME` stops
at a point of it, and `--serve` serves the state there read-only (time travel)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakeapi.cli.serve import add_log_level, add_run_settings, run_main

if TYPE_CHECKING:
    from fakeapi.replay.inputs import Recording
    from fakeapi.replay.replay import Replayed, ReplaySettings


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi replay` and its options."""
    cmd = sub.add_parser(
        "replay", help="replay a recording's inputs into a fresh control plane; check it, or "
                       "serve the state at a point of it")
    cmd.add_argument("data_dir", type=Path, metavar="DIR", help="the recording (a --data-dir)")
    cmd.add_argument("--check", action="store_true",
                     help="compare the replay's log with the recording's, event by event; exit "
                          "1 at the first divergence")
    cmd.add_argument("--until", metavar="REV|TIME",
                     help="stop once the replay reaches revision REV (or the newest event at "
                          "or before the RFC 3339 TIME)")
    cmd.add_argument("--serve", action="store_true",
                     help="then serve the state there read-only for kubectl, until SIGINT")
    cmd.add_argument("--data-dir", dest="out", type=Path, metavar="OUT",
                     help="keep the replay's own recording here (a new directory)")
    cmd.add_argument("--host", default="127.0.0.1", help="where --serve listens")
    cmd.add_argument("--port", type=int, default=0, help="--serve's port (0: a free one)")
    cmd.add_argument("--kubeconfig", type=Path, help="--serve: write the admin kubeconfig here")
    add_run_settings(cmd)
    cmd.set_defaults(**dict.fromkeys(RUN_SETTINGS))  # None: not given (see settings_of)
    add_log_level(cmd)
    cmd.set_defaults(run=run)


RUN_SETTINGS = ("seed", "feature_gates", "runtime_config", "nodes", "node_profile", "components",
                "adopt_nodes", "drivers", "disabled_drivers")
"""The run-setting flags (`cli.serve.add_run_settings`), each None on the command line
unless given."""


def settings_of(recorded: Mapping[str, Any], args: argparse.Namespace) -> ReplaySettings:
    """The settings a recording ran with: each flag given, else the one its header
    `recorded` (format 2), else `fakeapi serve`'s default. ValueError for recorded settings
    this version can't take (a node profile that no longer validates)."""
    from fakeapi.replay.replay import ReplaySettings
    from kubelet_emu.profile import NodeProfile

    values: dict[str, Any] = {}
    for name in RUN_SETTINGS:
        given = getattr(args, name)
        if given is None:
            given = recorded.get(name)
            if given is not None and name == "node_profile":
                try:
                    given = NodeProfile.model_validate(given)
                except ValueError as e:
                    raise ValueError(f"the recorded node profile is not valid here: {e}") from None
        if given is not None:
            values[name] = tuple(given) if name == "disabled_drivers" else given
    return ReplaySettings(**values)


def run(args: argparse.Namespace) -> int:
    """0: replayed (no divergence); 1: a divergence or a damaged log; 2: bad input."""
    return run_main(args, replay_command)


def _fail(message: str, code: int = 2) -> int:
    print(f"fakeapi: {message}", file=sys.stderr, flush=True)
    return code


async def replay_command(args: argparse.Namespace) -> int:
    """Check everything, replay, then check, serve, or both."""
    import shutil

    from fakeapi.machinery.statedir import make_temporary_state
    from fakeapi.replay import history
    from fakeapi.replay.inputs import read_recording
    from fakeapi.storage import logcheck

    try:
        recording = read_recording(args.data_dir)
        until = recording.revision_of(args.until) if args.until is not None else None
    except history.HistoryError as e:
        return _fail(str(e), 1 if isinstance(e, history.LogDamaged) else 2)
    if args.out is not None and (logcheck.log_path(args.out).exists()
                                 or args.out.resolve() == args.data_dir.resolve()):
        return _fail(f"--data-dir {args.out} already holds a log: a replay records into a new "
                     "directory")
    try:
        settings = settings_of(recording.log.header.settings, args)
    except ValueError as e:
        return _fail(str(e))
    engine = recording.log.header.settings.get("cel_engine")
    if engine:  # the CEL engine the recording's server evaluated with
        from fakeapi import cel
        cel.set_default_engine(engine)
    state_dir = make_temporary_state()
    try:
        return await _replay(args, recording, until, settings, state_dir)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


async def _replay(args: argparse.Namespace, recording: Recording, until: int | None,
                  settings: ReplaySettings, state_dir: Path) -> int:
    from fakeapi.replay import check
    from fakeapi.replay.replay import replay

    done = await replay(recording, settings, state_dir=state_dir, data_dir=args.out,
                        until=until)
    print(_summary(args.data_dir, done), flush=True)
    code = 0
    if args.check:
        base = recording.log.base
        upto = recording.last if until is None else until
        found = check.first_divergence(recording.log.records[:upto - base],
                                       done.records[:upto - base] if until is not None
                                       else done.records, base=base)
        if not recording.exact:
            print(f"note: {args.data_dir} was recorded on a {recording.clock_mode()} clock: the "
                  "replay sends its inputs at their recorded times, but the components' timing "
                  "may differ (a check is exact for --clock virtual recordings)", flush=True)
        if found is not None:
            print(found.text(), flush=True)
            code = 1
        else:
            print(f"no divergence in {upto - base} events"
                  + (f" after the base at revision {base}" if base else ""), flush=True)
    if args.serve:
        at = until if until is not None else done.revision
        served = await _serve(args, recording, done.records, at, settings, state_dir)
        code = code or served
    return code


def _summary(data_dir: Path, done: Replayed) -> str:
    rate = len(done.records) / done.seconds if done.seconds else 0.0
    refused = f", {len(done.refused)} refused" if done.refused else ""
    return (f"replayed {done.inputs} inputs of {data_dir}{refused}: {len(done.records)} "
            f"events, revision {done.revision}, in {done.seconds:.1f} s ({rate:,.0f} events/s)")


async def _serve(args: argparse.Namespace, recording: Recording, records: list[bytes], at: int,
                 settings: ReplaySettings, state_dir: Path) -> int:
    """Serve the replay's state at `at` read-only until SIGINT/SIGTERM."""
    import asyncio
    import signal

    from fakeapi.http import serving
    from fakeapi.replay.replay import read_only_cluster

    base = recording.log.base
    if base:  # a replay from a base redoes the components' restart: serve what was recorded
        print(f"note: {args.data_dir} was compacted at revision {base}: serving the "
              f"recorded state at revision {at}", flush=True)
        records = recording.log.records
    if at > base + len(records):
        return _fail(f"the replay ended at revision {base + len(records)}, before revision "
                     f"{at}", 1)
    cluster = read_only_cluster(records, at, settings, source=f"the replay of {args.data_dir}",
                                base=base, base_records=recording.base_records,
                                base_time=recording.start())
    kubeconfig = args.kubeconfig or state_dir / "kubeconfig"
    listener = await serving.listen(cluster, host=args.host, port=args.port,
                                    pki_dir=state_dir / "pki", kubeconfig=kubeconfig)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"serving revision {at} read-only", flush=True)
    print(f"fakeapi ready at {listener.url} kubeconfig={kubeconfig}", flush=True)
    await stop.wait()
    await listener.close()
    await cluster.close()
    return 0
