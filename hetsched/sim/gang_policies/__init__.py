"""Job-level (gang) policies for :func:`hetsched.sim.gang_engine.simulate_gang`: Gavel round-based
with an allocation policy, Hadar's online algorithm, Harmony's placement, the model-similarity policy, Tiresias
(2D-LAS) and YARN-CS. Named in the one table :mod:`hetsched.sim.registry`."""

from hetsched.sim.gang_policies.gavel import Gavel
from hetsched.sim.gang_policies.hadar import Hadar
from hetsched.sim.gang_policies.harmony import Harmony
from hetsched.sim.gang_policies.similarity import Similarity
from hetsched.sim.gang_policies.tiresias import Tiresias
from hetsched.sim.gang_policies.yarn_cs import YarnCs

__all__ = ["Gavel", "Hadar", "Harmony", "Similarity", "Tiresias", "YarnCs"]
