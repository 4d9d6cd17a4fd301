"""``python -m hetsched``: the command line (as the ``hetsched`` script)."""

from hetsched.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
