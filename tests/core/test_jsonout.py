"""Standard JSON on stdout: non-finite numbers become null and are listed, never Infinity/NaN."""

import io
import json
import math

from hypothesis import given
from hypothesis import strategies as st

from hetsched.core.jsonio import json_text, write_json


def _strict(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_become_null_and_are_listed():
    out = _strict(
        json_text(
            {"objective": math.inf, "gap": math.nan, "runs": [{"bound": -math.inf}, {"bound": 1.5}]}
        )
    )
    assert out["objective"] is None and out["gap"] is None and out["runs"][0]["bound"] is None
    assert out["runs"][1]["bound"] == 1.5
    assert out["non_finite"] == ["$.objective", "$.gap", "$.runs[0].bound"]


def test_finite_output_is_unchanged():
    obj = {"status": "optimal", "objective": 14.4, "log": "x"}
    assert _strict(json_text(obj)) == obj and "non_finite" not in _strict(json_text(obj))


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats()  # nan and inf included: they become null and are listed
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_json)
def test_streamed_json_is_the_same_text(obj):
    out = io.StringIO()
    write_json(obj, out)
    assert out.getvalue() == json_text(obj)


def test_streamed_json_writes_an_iterator_of_rows_as_a_list():
    out = io.StringIO()
    write_json({"rows": iter([{"a": 1.0}, {"a": float("inf")}]), "n": 2}, out)
    assert json.loads(out.getvalue()) == {
        "rows": [{"a": 1.0}, {"a": None}],
        "n": 2,
        "non_finite": ["$.rows[1].a"],
    }


def test_a_schedule_file_and_json_output_are_streamed_and_read_back(tmp_path, capsys):
    from support import instance_path

    from hetsched.cli import main
    from hetsched.instance.io import load_instance
    from hetsched.schedule.io import load_schedule
    from hetsched.schedule.validate import validate

    path = instance_path("hare_fig9.json")
    assert main(["heuristic", str(path), "--json", "--out", str(tmp_path / "s.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    written = load_schedule(tmp_path / "s.json")
    assert printed["solution"] == written.to_dict() and len(printed["solution"]["assignments"]) > 0
    assert validate(load_instance(path), written).objective == printed["objective"]
