"""Suite-wide pytest setup. Keep it tiny: shared fixtures live in tests/support/."""

from __future__ import annotations

pytest_plugins = ["tests.support.fixtures"]
