"""``torchsmith install`` and ``guard`` as a library: install a plan safely, verify it, keep it.

- :mod:`~torchsmith.install.target`: the environment (an existing venv/conda prefix or a new venv)
- :mod:`~torchsmith.install.steps`: install groups and the exact pip/uv commands, one source each
- :mod:`~torchsmith.install.snapshot`: snapshot and exact restore of an environment
- :mod:`~torchsmith.install.runner`: the whole sequence, with rollback
- :mod:`~torchsmith.install.lock`: the lock and its reproduction
- :mod:`~torchsmith.install.guard`: the constraints that keep torch in place afterwards
- :mod:`~torchsmith.install.check`: predict what a pip/uv command would do to a guarded stack
"""

from __future__ import annotations
