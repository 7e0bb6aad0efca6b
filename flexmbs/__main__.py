"""``python -m flexmbs``: the ``flexmbs`` command (see `flexmbs.cli`)."""
import sys

from .cli import main

sys.exit(main())
