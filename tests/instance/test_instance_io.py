import json
from pathlib import Path

import pytest
from support import INSTANCES

from hetsched.cli import main
from hetsched.core.errors import InputError
from hetsched.instance.io import instance_hash, instance_to_dict, load_instance, parse_instance
from hetsched.instance.schema import INSTANCE_SCHEMA

ALL_FILES = sorted((INSTANCES / "small").glob("*.json")) + sorted(
    (INSTANCES / "paper").glob("*.json")
)


def test_schema_file_is_generated_from_the_code():
    assert json.loads((INSTANCES / "schema.json").read_text()) == INSTANCE_SCHEMA


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_round_trip(path, tmp_path):
    inst = load_instance(path)
    again = parse_instance(json.loads(json.dumps(instance_to_dict(inst))), "copy")
    assert again == inst
    assert instance_hash(again) == instance_hash(inst)


def test_hash_ignores_name_and_description_but_not_times():
    d = instance_to_dict(load_instance(INSTANCES / "paper" / "hare_fig9.json"))
    base = instance_hash(parse_instance(d))
    d2 = json.loads(json.dumps(d))
    d2["name"] = "other"
    d2["description"] = "x"
    assert instance_hash(parse_instance(d2)) == base
    d2["jobs"][0]["train_time"]["gpu1"] = 3.5
    assert instance_hash(parse_instance(d2)) != base


def test_per_gpu_override_wins_over_type_time():
    d = instance_to_dict(load_instance(INSTANCES / "paper" / "hare_fig5.json"))
    d["jobs"][0]["train_time_per_gpu"] = {"GPU2": 7.5}
    inst = parse_instance(d)
    assert inst.train_time("J1", "GPU2") == 7.5 and inst.train_time("J1", "GPU1") == 2.0


def _fig5() -> dict:
    return json.loads((INSTANCES / "paper" / "hare_fig5.json").read_text())


def _mutate(fn):
    d = _fig5()
    fn(d)
    return json.dumps(d)


MALFORMED = {
    "not_json": ("{ not json", "not valid JSON"),
    "nan": (
        _mutate(lambda d: d["jobs"][0]["train_time"].update(gpu="@")).replace('"@"', "NaN"),
        "$.jobs[0].train_time.gpu: must be a finite number (got nan)",
    ),
    "infinite": (
        _mutate(lambda d: d["jobs"][3].update(arrival="@")).replace('"@"', "Infinity"),
        "$.jobs[3].arrival: must be a finite number (got inf)",
    ),
    "overflow": (
        _mutate(lambda d: d["jobs"][3].update(arrival="@")).replace('"@"', "1e999"),
        "$.jobs[3].arrival: must be a finite number (got inf)",
    ),
    "missing_field": (
        _mutate(lambda d: d["jobs"][1].pop("rounds")),
        "$.jobs[1]: missing required field 'rounds'",
    ),
    "wrong_type": (
        _mutate(lambda d: d["jobs"][2].update(rounds="two")),
        '$.jobs[2].rounds: must be a whole number (got "two")',
    ),
    "negative_time": (
        _mutate(lambda d: d["jobs"][3]["train_time"].update(gpu=-2)),
        "$.jobs[3].train_time.gpu: must be > 0 (got -2)",
    ),
    "vanishing_time": (  # 5 + 1e-300 == 5: its tasks would take no time and overlap others
        _mutate(lambda d: d["jobs"][3]["train_time"].update(gpu=1e-300)),
        "$.jobs[3].train_time.gpu: 1e-300 s is below 2^-50 of the instance's time span",
    ),
    "negative_sync": (
        _mutate(lambda d: d["jobs"][0]["sync_time"].update(gpu=-1)),
        "$.jobs[0].sync_time.gpu: must be >= 0 (got -1)",
    ),
    "unknown_gpu_type_in_times": (
        _mutate(lambda d: d["jobs"][0]["train_time"].update(a100=1)),
        "$.jobs[0].train_time.a100: unknown GPU type 'a100'",
    ),
    "unknown_gpu_type_of_gpu": (
        _mutate(lambda d: d["cluster"]["servers"][0]["gpus"][1].update(type="h100")),
        "$.cluster.servers[0].gpus[1].type: unknown GPU type 'h100'",
    ),
    "missing_type_time": (
        _mutate(lambda d: d["jobs"][2].update(train_time={})),
        "$.jobs[2].train_time: missing time for GPU type 'gpu'",
    ),
    "zero_tasks": (
        _mutate(lambda d: d["jobs"][0].update(tasks_per_round=0)),
        "$.jobs[0].tasks_per_round: must be >= 1 (got 0)",
    ),
    "zero_rounds": (
        _mutate(lambda d: d["jobs"][1].update(rounds=0)),
        "$.jobs[1].rounds: must be >= 1 (got 0)",
    ),
    "duplicate_job": (
        _mutate(lambda d: d["jobs"][2].update(id="J1")),
        "$.jobs[2].id: duplicate job id 'J1'",
    ),
    "duplicate_gpu": (
        _mutate(lambda d: d["cluster"]["servers"][0]["gpus"][2].update(id="GPU1")),
        "$.cluster.servers[0].gpus[2].id: duplicate GPU id 'GPU1'",
    ),
    "unknown_field": (
        _mutate(lambda d: d["jobs"][0].update(trian_time={})),
        "$.jobs[0].trian_time: unknown field",
    ),
    "no_jobs": (
        _mutate(lambda d: d.update(jobs=[])),
        "$.jobs: must have at least 1 item(s) (got 0)",
    ),
    "zero_weight": (
        _mutate(lambda d: d["jobs"][0].update(weight=0)),
        "$.jobs[0].weight: must be > 0 (got 0)",
    ),
    "unknown_override_gpu": (
        _mutate(lambda d: d["jobs"][0].update(train_time_per_gpu={"GPU9": 1})),
        "$.jobs[0].train_time_per_gpu.GPU9: unknown GPU id 'GPU9'",
    ),
    "bool_as_number": (
        _mutate(lambda d: d["jobs"][0].update(arrival=True)),
        "$.jobs[0].arrival: must be a number (got true)",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_instance_gives_one_clear_line_and_exit_2(case, tmp_path, capsys):
    text, expected = MALFORMED[case]
    f = tmp_path / "bad.json"
    f.write_text(text)
    code = main(["solve", str(f), "--solver", "cpsat"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"hetsched: error: {f}: "), err  # the file as the user gave it
    assert expected in err, err
    assert "Traceback" not in err


def test_missing_file_is_input_error():
    with pytest.raises(InputError, match="no such file"):
        load_instance(Path("/nonexistent/x.json"))


def test_an_error_names_the_file_as_given_so_two_files_of_one_name_differ(tmp_path, capsys):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "instance.json").write_text("{}" if folder == "a" else "[")
    for folder in ("a", "b"):
        path = tmp_path / folder / "instance.json"
        assert main(["solve", str(path)]) == 2
        assert capsys.readouterr().err.startswith(f"hetsched: error: {path}: ")
