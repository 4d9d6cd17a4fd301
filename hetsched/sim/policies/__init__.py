"""Task-level online policies (for :func:`hetsched.sim.engine.simulate`), one module each. Every
policy, task- or job-level, is named in the one table :mod:`hetsched.sim.registry`, which imports a
policy's module only when the policy is made: this package imports none of them."""
