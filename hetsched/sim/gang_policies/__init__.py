"""Job-level (gang) policies for :func:`hetsched.sim.gang_engine.simulate_gang`: Gavel round-based
with an allocation policy, Hadar's online algorithm, Harmony's placement, the model-similarity policy, Tiresias
(2D-LAS) and YARN-CS, one module each. Named in the one table :mod:`hetsched.sim.registry`, which
imports a policy's module only when the policy is made: this package imports none of them (Hadar's
loads SciPy's optimizer, Gavel's HiGHS)."""
