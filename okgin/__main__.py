"""``python -m okgin`` runs the ``okgin`` command."""

import sys

from .cli import main

sys.exit(main())
