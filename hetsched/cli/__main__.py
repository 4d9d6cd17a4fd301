"""``python -m hetsched.cli``: the same as the ``hetsched`` command."""

from hetsched.cli import run

run()
