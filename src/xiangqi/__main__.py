"""`python -m xiangqi ...` runs the command line (the same as the `xiangqi` command)."""

import sys

from xiangqi.cli import main

sys.exit(main())
