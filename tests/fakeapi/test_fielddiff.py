"""The field-level diff that `log show --diff` and `replay --check` print."""

import pytest

from fakeapi.machinery.fielddiff import ABSENT, changes, render

CASES = [
    ({"a": 1}, {"a": 1}, []),
    ({"a": 1}, {"a": 2}, ["~ a: 1 -> 2"]),
    ({}, {"spec": {"x": "y"}}, ['+ spec: {"x":"y"}']),  # a new subtree is one line
    ({"spec": {"x": "y", "z": 1}}, {"spec": {"z": 1}}, ['- spec.x: "y"']),
    ({"l": [1, 2]}, {"l": [1, 3, 4]}, ["~ l[1]: 2 -> 3", "+ l[2]: 4"]),
    ({"m": {"labels": {"a.b/c": "1"}}}, {"m": {"labels": {"a.b/c": "2"}}},
     ['~ m.labels["a.b/c"]: "1" -> "2"']),
    ({"a": 1}, {"a": "1"}, ['~ a: 1 -> "1"']),
    ({"a": {"b": 1}}, {"a": [1]}, ['~ a: {"b":1} -> [1]']),
    ({"a": 1}, {"a": True}, ["~ a: 1 -> true"]),
]


@pytest.mark.parametrize(("old", "new", "lines"), CASES)
def test_changes_name_each_leaf_by_its_path(old, new, lines):
    assert [c.line() for c in changes(old, new)] == lines


def test_render_indents_and_skips_prefixes():
    found = list(changes({"metadata": {"resourceVersion": "1"}, "a": 1},
                         {"metadata": {"resourceVersion": "2"}, "a": 2}))
    assert render(found, skip=("metadata.resourceVersion",)) == "  ~ a: 1 -> 2"
    assert [c.sign for c in found] == ["~", "~"]
    assert list(changes(ABSENT, ABSENT)) == []
