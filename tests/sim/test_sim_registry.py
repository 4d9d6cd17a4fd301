"""The one table of online policies: every name makes its policy, on the engine it names."""

from __future__ import annotations

import pytest

from hetsched.core.errors import HetschedError
from hetsched.sim.registry import POLICIES, is_job_level, make_policy, names, usage


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_name_makes_a_policy_for_its_engine(name):
    policy = make_policy(name)
    assert is_job_level(name) == (POLICIES[name].level == "job")
    # the gang engine asks a policy to allocate GPUs per round; the task engine, for decisions
    assert hasattr(policy, "allocate") == is_job_level(name)


def test_arguments_are_taken_where_declared_and_refused_elsewhere():
    assert make_policy("hlas:4").groups == 4
    assert make_policy("tiresias:100,1000").name.startswith("tiresias")
    with pytest.raises(HetschedError, match="unknown policy 'fifo:3'"):
        make_policy("fifo:3")
    with pytest.raises(HetschedError, match="GPU groups U >= 1"):
        make_policy("hlas:0")
    assert set(names("task")) | set(names("job")) == set(POLICIES)
    assert "harmony[:PLACEMENT-METHOD[:ORDER[:SECONDS]]]" in usage("job") and "hlas[:U]" in usage(
        "task"
    )
