"""The notebooks run top to bottom (nbclient, a fresh kernel each) and are stored without outputs."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_the_five_notebooks_are_there():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_stripped(path):
    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: outputs committed"
            )


# The quick start runs in the default suite; the others (about 80 CPU s together) run under
# ``-m deep`` and in CI's documentation build, which executes every notebook (``mkdocs.yml``:
# mkdocs-jupyter with ``execute: true`` and ``allow_errors: false``)
RUNS = [
    pytest.param(p, id=p.stem, marks=() if p.name.startswith("01") else pytest.mark.deep)
    for p in NOTEBOOKS
]


@pytest.mark.parametrize("path", RUNS)
def test_notebook_runs_top_to_bottom(path):
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError (with the cell and traceback) if any cell fails
    errors = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors
    images = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert images, f"{path.name} draws no picture"
