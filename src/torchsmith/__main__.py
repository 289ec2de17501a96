from __future__ import annotations

import sys

try:
    from torchsmith.cli import main
except KeyboardInterrupt:  # Ctrl-C before the CLI could take over: still one line, still 130
    sys.stderr.write("interrupted\n")
    sys.exit(130)

sys.exit(main())
