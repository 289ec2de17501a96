"""One ``plan -> install steps`` function: the printed commands and `torchsmith install` agree."""

from __future__ import annotations

import shlex

from torchsmith.install.steps import groups_from_plan
from torchsmith.plan.model import PackagePin, Plan
from torchsmith.plan.steps import install_argvs, install_steps

CU126 = "https://download.pytorch.org/whl/cu126"
LINKS = "https://download.openmmlab.com/mmcv/dist/cu126/torch2.6/index.html"
GIT = "git+https://github.com/facebookresearch/pytorch3d.git@v0.7.8"


def _plan() -> Plan:
    return Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cuda", variant="cu126",
                packages=(PackagePin("torch", "2.6.0", "cu126", CU126, local_version="+cu126"),
                          PackagePin("pytorch3d", "0.7.8", "source", wheel_url=GIT),
                          PackagePin("mmcv", "2.2.0", "cu126", find_links=LINKS),
                          PackagePin("einops", "0.8.0"),
                          PackagePin("torch-scatter", "2.1.2", "source")))


def test_steps_in_order_with_sources_built_last_against_the_installed_torch() -> None:
    steps = install_steps(_plan())
    assert [(s.source, s.url) for s in steps] == [
        ("index", CU126), ("find-links", LINKS), ("default", None), ("source-build", None)]
    assert steps[0].pinned and not any(s.pinned for s in steps[1:])
    assert steps[-1].no_build_isolation
    assert steps[-1].requirements == (f"pytorch3d @ {GIT}", "torch-scatter==2.1.2")


def test_install_runs_the_steps_the_commands_print() -> None:
    plan = _plan()
    groups, _ = groups_from_plan(plan)
    printed = install_argvs(plan, "pip")
    assert len(groups) == len(printed)
    held = {"torch==2.6.0+cu126"}  # the printed commands repeat the torch pin; install constrains
    for group, argv in zip(groups, printed):
        urls = (group.index_url, group.find_links)
        wanted = [a for a in argv[4:] if not a.startswith("-") and a not in urls]
        assert set(group.requirements) == set(wanted) - (held if not group.pinned else set())
        assert group.no_build_isolation == ("--no-build-isolation" in argv)
        assert (group.index_url is not None) == ("--index-url" in argv)
    last = shlex.join(printed[-1])
    assert last.endswith(f"--no-build-isolation 'pytorch3d @ {GIT}' torch-scatter==2.1.2 torch==2.6.0+cu126")
