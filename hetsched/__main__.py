"""``python -m hetsched``: the command line (as the ``hetsched`` script)."""

from hetsched.cli import run

if __name__ == "__main__":
    run()
