from __future__ import annotations

import sys

from torchsmith.cli import main

sys.exit(main())
