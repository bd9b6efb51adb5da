"""Typed identities: the object UID and the resourceVersion, distinct from any other string.

Both are plain `str` at run time (``NewType`` costs nothing); the type checker keeps them
apart from names, namespaces and user UIDs, so a UID can't be passed where a name is wanted.
A leaf module: it imports nothing from fakeapi, and every layer may import it.

Wrap a value where it is made or read off the wire (``UID(str(uuid))``,
``resource_version(revision)``), not where it is only passed along. The user UID of an
authenticated identity (``authn.UserInfo.uid``) is a different thing and stays a plain ``str``.
"""

from __future__ import annotations

from typing import NewType

UID = NewType("UID", str)
"""metadata.uid of a stored object (and of references to one: ownerReferences, reservedFor)."""

ResourceVersion = NewType("ResourceVersion", str)
"""metadata.resourceVersion: the decimal text of a log revision, opaque to clients."""


def resource_version(revision: int) -> ResourceVersion:
    """The resourceVersion of a log revision (same as etcd's: its decimal text)."""
    return ResourceVersion(str(revision))

