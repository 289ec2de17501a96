"""``torchsmith install`` and ``guard`` as a library: install a plan safely, verify it, keep it.

- :mod:`~torchsmith.install.target_choice`: which environment a command means (``--python``,
  ``--venv``, ``--prefix`` or each command's default), with where that came from
- :mod:`~torchsmith.install.target`: the environment (an existing venv/conda prefix or a new venv)
- :mod:`~torchsmith.install.steps`: install groups, one source each
- :mod:`~torchsmith.install.installers`: the installer interface and its kinds (pip, uv)
- :mod:`~torchsmith.install.prepare`: what an install will do, from a plan or a lock
- :mod:`~torchsmith.install.session`: one install from start to end (the CLI's one call)
- :mod:`~torchsmith.install.runner`: the groups, verify, lock and guard, with rollback
- :mod:`~torchsmith.install.snapshot`: snapshot and exact restore of an environment
- :mod:`~torchsmith.install.verify`, :mod:`~torchsmith.install.closure`,
  :mod:`~torchsmith.install.export`: verify snippet, locked closure and guarded names, conda export
- :mod:`~torchsmith.install.lock`: the lock and its reproduction
- :mod:`~torchsmith.install.guard`, :mod:`~torchsmith.install.guard_view`: the constraints that
  keep torch in place afterwards, and the ``guard`` command's calls
- :mod:`~torchsmith.install.check`: predict what a pip/uv command would do to a guarded stack
"""

from __future__ import annotations
