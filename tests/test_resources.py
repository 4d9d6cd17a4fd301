"""Shipped files are found through importlib.resources, by name, and a missing one is an
installation error (exit 4), never bad input."""

from __future__ import annotations

import pytest

from hetsched import resources
from hetsched.allocation.gavel_data import load_throughputs, shipped_trace
from hetsched.cli import EXIT_INPUT, EXIT_INSTALL, main
from hetsched.errors import InputError, InstallationError
from hetsched.instance.io import load_instance


def test_shipped_folders_are_directories_with_their_files():
    assert (resources.shipped_dir("data") / "gavel" / "simulation_throughputs.json").is_file()
    assert (resources.shipped_dir("instances") / "schema.json").is_file()
    assert (resources.shipped_dir("docs") / "formulations.md").is_file()


def test_shipped_instance_by_bare_name_by_relative_path_and_with_suffix():
    a = resources.shipped_instance("hare_fig9")
    assert a is not None and a.name == "hare_fig9.json"
    assert resources.shipped_instance("paper/hare_fig9") == a
    assert resources.shipped_instance("paper/hare_fig9.json") == a
    assert resources.shipped_instance("no_such_instance") is None
    assert resources.shipped_instance("manifest") is None  # a manifest is not an instance


def test_load_instance_falls_back_to_the_shipped_instance():
    inst = load_instance("hare_fig9")
    assert inst.name == "hare_fig9" and len(inst.jobs) > 0


def test_an_unknown_instance_is_bad_input_not_an_installation_error():
    with pytest.raises(InputError):
        load_instance("no_such_instance.json")
    assert main(["solve", "no_such_instance.json"]) == EXIT_INPUT


def test_shipped_trace_by_name():
    p = shipped_trace("physical_cluster_max_min_fairness")
    assert p.is_file() and p.suffix == ".trace"
    assert shipped_trace("nope/x.trace").name == "x.trace"  # a path stays a path


def test_a_missing_shipped_file_is_an_installation_error(monkeypatch):
    with pytest.raises(InstallationError, match="missing from the installation"):
        resources.shipped("data", "gavel", "no_such_table.json")
    monkeypatch.setitem(resources.PACKAGES, "data", "hetsched.no_such_package")
    with pytest.raises(InstallationError, match="not installed"):
        load_throughputs()


def test_cli_exits_4_on_a_broken_installation(monkeypatch, capsys):
    monkeypatch.setitem(resources.PACKAGES, "data", "hetsched.no_such_package")
    code = main(["import-gavel", "physical_cluster_minimize_makespan", "--out", "unused.json"])
    err = capsys.readouterr().err
    assert code == EXIT_INSTALL, err
    assert err.startswith("hetsched: installation error:") and err.count("\n") == 1


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("hetsched ")
