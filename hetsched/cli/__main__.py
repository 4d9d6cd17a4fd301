"""``python -m hetsched.cli``: the same as the ``hetsched`` command."""

import sys

from hetsched.cli import main

sys.exit(main())
