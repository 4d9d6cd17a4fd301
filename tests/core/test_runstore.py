"""The one run store (JSON lines) and the atomic JSON document writer."""

from __future__ import annotations

import json

import pytest

from hetsched.core.errors import InputError
from hetsched.core.jsonio import save_json
from hetsched.core.runstore import RunStore


def test_runs_are_kept_by_key_across_reopening_and_a_later_row_replaces_an_earlier(tmp_path):
    path = tmp_path / "sub" / "runs.jsonl"
    store = RunStore(path, ("method", "seed"))
    store.add({"method": "a", "seed": 0, "value": 1.0})
    store.add({"method": "a", "seed": 1, "value": 2.0})
    store.add({"method": "a", "seed": 0, "value": 3.0})
    again = RunStore(path, ("method", "seed"))
    assert len(again) == 2 and ("a", 0) in again and ("b", 0) not in again
    assert again.get(("a", 0))["value"] == 3.0
    assert [r["seed"] for r in again.rows()] == [0, 1]  # the order first written
    assert again.keys() == {("a", 0), ("a", 1)}


def test_a_list_in_a_key_field_is_a_key_like_a_tuple(tmp_path):
    store = RunStore(tmp_path / "r.jsonl", ("engine",))
    store.add({"engine": [360.0, 0.0, "gavel"]})
    assert (((360.0, 0.0, "gavel"),)) in RunStore(tmp_path / "r.jsonl", ("engine",))


def test_a_partial_last_line_from_a_killed_writer_is_dropped_and_the_store_goes_on(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"k": 1}) + "\n" + '{"k": 2, "val')  # killed mid-line
    store = RunStore(path, ("k",))
    assert store.keys() == {(1,)}
    store.add({"k": 2})
    assert [json.loads(x)["k"] for x in path.read_text().splitlines()] == [1, 2]


def test_a_file_that_is_not_a_run_store_is_bad_input_naming_the_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"k": 1}\n[1, 2]\n')
    with pytest.raises(InputError, match=r"runs.jsonl: line 2: not a JSON object"):
        RunStore(path, ("k",))
    path.write_bytes(b"SQLite format 3\x00\xff\xfe\n")
    with pytest.raises(InputError, match=r"line 1: .*not a hetsched run store"):
        RunStore(path, ("k",))


def test_save_json_replaces_the_document_whole_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "manifest.json"
    save_json(path, {"a": 1})
    save_json(path, {"b": [1, 2]}, indent=1, sort_keys=True)
    assert json.loads(path.read_text()) == {"b": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]
