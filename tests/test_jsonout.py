"""Standard JSON on stdout: non-finite numbers become null and are listed, never Infinity/NaN."""

import json
import math

from hetsched.jsonout import json_text


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
