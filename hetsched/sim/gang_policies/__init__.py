"""Job-level (gang) policies for :func:`hetsched.sim.gang_engine.simulate_gang`: Gavel round-based
with an allocation policy, Hadar's online algorithm, Harmony's placement, the model-similarity policy, Tiresias
(2D-LAS) and YARN-CS."""

from hetsched.sim.gang_policies.gavel import Gavel
from hetsched.sim.gang_policies.hadar import Hadar
from hetsched.sim.gang_policies.harmony import Harmony
from hetsched.sim.gang_policies.similarity import Similarity
from hetsched.sim.gang_policies.tiresias import Tiresias
from hetsched.sim.gang_policies.yarn_cs import YarnCs

GANG_POLICIES = {
    "gavel": Gavel,
    "hadar": Hadar,
    "harmony": Harmony,
    "harmony-greedy": Harmony,  # Harmony's greedy by reward, the default method
    "similarity": Similarity,
    "tiresias": Tiresias,
    "yarn-cs": YarnCs,
}

__all__ = ["GANG_POLICIES", "Gavel", "Hadar", "Harmony", "Similarity", "Tiresias", "YarnCs"]
