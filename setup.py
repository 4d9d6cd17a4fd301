"""Package discovery for setuptools (the rest of the metadata is in pyproject.toml).

Every package under ``hetsched/`` is found, and every package under ``models/`` is installed
below ``hetsched.models``; the shipped folders ``data/``, ``instances/``, ``examples/`` and ``docs/``
become ``hetsched.data``, ``hetsched.instances``, ``hetsched.examples`` and ``hetsched.docs`` (their files are package data).
"""

from setuptools import find_packages, setup

SHIPPED = {
    "hetsched.data": "data",
    "hetsched.instances": "instances",
    "hetsched.examples": "examples",
    "hetsched.docs": "docs",
}

packages = find_packages(include=["hetsched", "hetsched.*"])
models = find_packages(include=["models", "models.*"])
packages += ["hetsched." + name for name in models] + sorted(SHIPPED)
package_dir = {"hetsched": "hetsched", **{"hetsched." + name: name.replace(".", "/") for name in models}, **SHIPPED}

setup(packages=packages, package_dir=package_dir)
