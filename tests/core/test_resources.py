"""Shipped files are found through importlib.resources, by name, and a missing one is an
installation error (exit 4), never bad input."""

from __future__ import annotations

import pytest

from hetsched.cli import EXIT_INPUT, EXIT_INSTALL, main
from hetsched.core import resources
from hetsched.core.errors import InputError, InstallationError
from hetsched.instance.gavel_table import load_throughputs, shipped_trace
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
    with pytest.raises(InputError, match="nope/x.trace: no such file, and no shipped Gavel trace"):
        shipped_trace("nope/x.trace")  # neither a file here nor a shipped one: said at once


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


def test_one_resolver_takes_every_spelling_of_a_shipped_file(tmp_path, monkeypatch):
    """A path as typed, else a shipped name with or without its suffix and folder prefix."""
    monkeypatch.chdir(tmp_path)  # no instances/ folder here: only the shipped files answer
    a = resources.shipped_instance("small-07")
    for name in ("small/small-07", "small/small-07.json", "instances/small/small-07.json"):
        assert resources.resolve_file(name, "instances", ".json", "instance") == a
    t = resources.resolve_file(
        "data/gavel/traces/physical_cluster_minimize_makespan.trace", "data", ".trace", "trace"
    )
    assert resources.resolve_file("physical_cluster_minimize_makespan", "data", ".trace", "") == t
    spec = resources.resolve_file("examples/sweep-small.toml", "examples", ".toml", "sweep spec")
    assert resources.resolve_file("sweep-small", "examples", ".toml", "") == spec


def test_an_unknown_name_lists_the_closest_shipped_ones():
    from hetsched.core.errors import InputError

    with pytest.raises(InputError, match=r"no shipped instance .*closest: .*small/small-07"):
        resources.resolve_file("smal-07", "instances", ".json", "instance")


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "instances/paper/hare_fig9.json", "SOLUTION"],
        ["export", "instances/small/small-07.json", "--out", "OUT/s7.lp"],
        [
            "import-gavel",
            "gavel-trace:physical_cluster_minimize_makespan",
            "--cluster",
            "v100=1",
            "--out",
            "OUT/g.json",
        ],
        ["simulate", "paper/hlas_fig12", "--policy", "hlas-p", "--json"],
    ],
)
def test_the_commands_resolve_shipped_names_the_same_way(tmp_path, monkeypatch, argv):
    """From a directory with no instances/ folder, every command finds the shipped files."""
    from hetsched.cli import main

    monkeypatch.chdir(tmp_path)
    sol = tmp_path / "fig9.json"
    assert main(["solve", "hare_fig9", "--solver", "cpsat", "--out", str(sol)]) == 0
    line = [a.replace("SOLUTION", str(sol)).replace("OUT", str(tmp_path)) for a in argv]
    assert main(line) == 0
