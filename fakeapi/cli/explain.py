"""`fakeapi explain pod NS/NAME`: ask a running server why a pod is pending."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi explain` and its options."""
    explain = sub.add_parser("explain", help="why is my pod pending? ask a running server")
    explain.add_argument("what", choices=["pod"], help="what to explain")
    explain.add_argument("target", metavar="NAMESPACE/NAME",
                         help="the pod (the namespace defaults to `default`)")
    explain.add_argument("--kubeconfig", type=Path, default=None,
                         help="the server to ask (default: $KUBECONFIG, else "
                              ".fakeapi/kubeconfig)")
    explain.add_argument("-o", "--output", choices=["text", "json"], default="text")
    explain.set_defaults(run=explain_pod)


def explain_pod(args: argparse.Namespace) -> int:
    """`fakeapi explain pod NS/NAME`: print the scheduler's explanation (exit 1 on an error
    Status, with its message)."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    from fakeapi.auth.kubeconfig import read_kubeconfig
    from scheduler.explain import text as explanation_text

    namespace, _, name = args.target.rpartition("/")
    path = args.kubeconfig or Path(os.environ.get("KUBECONFIG") or ".fakeapi/kubeconfig")
    server, ssl_context = read_kubeconfig(path)
    url = (f"{server}/explain/namespaces/{urllib.parse.quote(namespace or 'default')}"
           f"/pods/{urllib.parse.quote(name)}")
    try:
        with urllib.request.urlopen(url, context=ssl_context, timeout=30) as resp:
            found = json.loads(resp.read())
    except urllib.error.HTTPError as e:
        status = json.loads(e.read() or b"{}")
        print(f"Error from server ({status.get('reason', e.code)}): "
              f"{status.get('message', e.reason)}", file=sys.stderr)
        return 1
    if args.output == "json":
        print(json.dumps(found, indent=2))
    else:
        print(explanation_text(found), end="")
    return 0
