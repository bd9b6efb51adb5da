"""`fakeapi explain pod NS/NAME`: ask a running server why a pod is pending."""

from __future__ import annotations

import argparse
import json
import sys

from fakeapi.cli import remote


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fakeapi explain` and its options."""
    explain = sub.add_parser("explain", help="why is my pod pending? ask a running server")
    explain.add_argument("what", choices=["pod"], help="what to explain")
    explain.add_argument("target", metavar="NAMESPACE/NAME",
                         help="the pod (the namespace defaults to `default`)")
    remote.add_kubeconfig_argument(explain)
    explain.add_argument("-o", "--output", choices=["text", "json"], default="text",
                         help="text (default) or the explanation as JSON")
    explain.set_defaults(run=explain_pod)


def explain_pod(args: argparse.Namespace) -> int:
    """`fakeapi explain pod NS/NAME`: print the scheduler's explanation (exit 1 on an error
    Status, with its message, or when the server can't be reached)."""
    import urllib.parse

    from scheduler.explain import text as explanation_text

    namespace, _, name = args.target.rpartition("/")
    path = (f"/explain/namespaces/{urllib.parse.quote(namespace or 'default')}"
            f"/pods/{urllib.parse.quote(name)}")
    try:
        found = remote.request(args.kubeconfig, path)
    except remote.RemoteError as e:
        print(e, file=sys.stderr)
        return 1
    if args.output == "json":
        print(json.dumps(found, indent=2))
    else:
        print(explanation_text(found), end="")
    return 0
