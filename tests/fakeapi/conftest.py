"""Fixtures shared by the HTTP tests of tests/fakeapi: a served cluster, seeded or not (they
live in test_api.py, next to the helpers that use them)."""

from tests.fakeapi.test_api import seeded, serve, served

__all__ = ["seeded", "serve", "served"]
