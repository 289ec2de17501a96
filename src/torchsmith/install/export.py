"""``torchsmith-environment.yml``: a ``conda env export``-style file of a locked stack."""

from __future__ import annotations

import os

from torchsmith import __version__
from torchsmith.install.env_export import conda_channels, conda_meta_records
from torchsmith.install.lock import Lock, storable_url
from torchsmith.install.target import Target
from torchsmith.redact import redact

__all__ = ["EXPORT_NAME", "LOCK_NAME", "write_export"]

LOCK_NAME = "torchsmith.lock.json"
EXPORT_NAME = "torchsmith-environment.yml"


def write_export(target: Target, lock: Lock) -> str:
    """Write the export into the target prefix; its path.

    A local version (``+cu126``) exists only on the PyTorch index, so the pip section names
    that index (without credentials: pip takes them from your netrc or keyring), and every
    package carries its hashes so no other index can slip in a same-named file.
    """
    path = os.path.join(target.prefix, EXPORT_NAME)
    packages = sorted(lock.packages, key=lambda p: p.name)
    indexes = sorted({storable_url(p.index) or "" for p in packages if p.index})
    links = sorted({storable_url(p.find_links) or "" for p in packages if p.find_links})
    own = any(p.index is None and p.find_links is None for p in packages)
    # All from PyTorch indexes: that index alone. Some from your own index: it stays first.
    options = [f"--index-url {indexes[0]}"] if len(indexes) == 1 and not own else []
    options += [f"--extra-index-url {url}" for url in indexes if f"--index-url {url}" not in options]
    options += [f"--find-links {url}" for url in links]
    hashed = all(p.hashes for p in packages)
    # The environment's own conda packages, as they stand: without them the file recreates a bare
    # Python with pip's packages on top.
    conda = [r for r in conda_meta_records(target.prefix) if r.name not in {p.name for p in packages}]
    channels = conda_channels(conda) or ["conda-forge"]
    lines = [
        f"# Written by torchsmith {__version__}. The same pins, each from its own index: {LOCK_NAME}",
        "# (`torchsmith install --lock`). Index credentials are not written here: pip reads them",
        "# from your netrc or keyring.",
        f"name: {os.path.basename(target.prefix)}",
        "channels:",
        *(f"  - {channel}" for channel in channels),
        "  - nodefaults",
        "dependencies:",
        *(f"  - {r.spec}" for r in conda),
        *([] if any(r.name == "python" for r in conda)
          else [f"  - python={'.'.join(target.python_version.split('.')[:2])}"]),
        *([] if any(r.name == "pip" for r in conda) else ["  - pip"]),
        "  - pip:",
    ]
    lines.extend(f"    - {option}" for option in options)
    lines.extend(f"    - {p.requirement_line() if hashed else f'{p.name}=={p.version}'}" for p in packages)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(redact("\n".join(lines) + "\n"))
    return path
