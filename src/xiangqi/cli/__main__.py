"""`python -m xiangqi.cli ...` runs the command line (the same as the `xiangqi` command)."""

import sys

from xiangqi.cli import main

sys.exit(main())
