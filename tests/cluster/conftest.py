"""A real single-host Slurm cluster (munged, slurmctld, three slurmds), once per test session.

Skips with the reason when Slurm is not installed (.ci/install-slurm) or cannot start here.
"""

from __future__ import annotations

from typing import Iterator

import pytest
from tests.cluster.slurm_cluster import SlurmCluster, SlurmUnavailable


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    cluster = SlurmCluster(str(tmp_path_factory.mktemp("slurm")))
    try:
        cluster.start()
    except SlurmUnavailable as exc:
        cluster.stop()
        pytest.skip(f"Slurm test cluster unavailable: {str(exc).splitlines()[0]}")
    try:
        yield cluster
    finally:
        cluster.stop()
