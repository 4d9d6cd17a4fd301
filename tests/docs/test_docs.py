"""Generated docs are current, and every objective and constraint of every model cites its source."""

from pathlib import Path

import pytest

from hetsched.cli import main
from hetsched.tools.docs import model_components

MODELS = sorted((Path(__file__).resolve().parents[2] / "models").rglob("*.py"))


def test_generated_docs_are_current(capsys):
    assert main(["docs", "--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_component_cites_an_equation(path):
    uncited = [name for name, _, cite in model_components(path.read_text()) if not cite]
    assert not uncited, f"{path.name}: cite the equation on the line of {uncited}"


def test_component_parser_reads_comments_and_docstrings():
    source = (
        '"""The model.\n\n    one_gpu[i]: sum_m y = 1    (5)\n"""\n'
        "m.a = pe.Constraint(rule=f)  # (4)\nm.one_gpu = pe.Constraint(rule=g)\nm.obj = pe.Objective(expr=0)\n"
    )
    comps = {n: (k, c) for n, k, c in model_components(source)}
    assert comps["a"] == ("Constraint", "(4)")
    assert comps["one_gpu"][1].endswith("one_gpu[i]: sum_m y = 1 (5)")
    assert comps["obj"] == ("Objective", "")
