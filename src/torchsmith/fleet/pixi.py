"""One pixi workspace for a fleet: a named hardware platform per node type, locked once.

pixi >= 0.71 declares a platform's virtual packages on ``[workspace].platforms`` entries, which
features bind to by name (docs/workspace/multi_platform_configuration.md; prefix-dev/pixi v0.71.0
crates/pixi_manifest/src/toml/platform.rs). Each node type gets an entry (its driver's CUDA, the
oldest compute capability of its GPUs, its glibc) and a feature + environment holding its own
stack; the shared environment, where one exists, is solved for every node type that can run it.
``pixi lock`` then solves every environment for each of its platforms into one pixi.lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.records import dataclass
from torchsmith.render._common import toml_str
from torchsmith.render.conda import (
    pixi_dependency_lines,
    pixi_find_links,
    pixi_platform_entry,
    pixi_stack,
    pixi_subdir,
    pixi_virtual_packages,
)

if TYPE_CHECKING:
    from torchsmith.fleet import FleetReport, NodeGroup
    from torchsmith.kb import KnowledgeBase
    from torchsmith.plan.model import Plan

__all__ = ["FleetPlatform", "fleet_pixi_platforms", "render_fleet_pixi"]

SHARED = "shared"


@dataclass(frozen=True)
class FleetPlatform:
    """A node type's pixi platform: its name, conda subdir and declared virtual packages."""

    name: str
    subdir: str
    keys: Tuple[Tuple[str, str], ...]
    feature: str  # the node type's feature and environment
    number: int  # the node type's number in the fleet report


def _platform_name(number: int, subdir: str, keys: Sequence[Tuple[str, str]]) -> str:
    """``type1-linux-64-cuda12-sm80``: a pixi platform name (a letter first, letters, digits and
    ``-``, at most 64 bytes: pixi_manifest/src/platform.rs)."""
    values = dict(keys)
    parts = [f"type{number}", subdir]
    if "__cuda" in values:
        parts.append("cuda" + values["__cuda"].replace(".", "-"))
    if "__cuda_arch" in values:
        parts.append("sm" + values["__cuda_arch"].replace(".", ""))
    return "-".join(parts)[:64].rstrip("-")


def _keys(group: NodeGroup, plan: Plan) -> Tuple[Tuple[str, str], ...]:
    keys = list(pixi_virtual_packages(plan, pixi_stack(plan)))
    glibc = group.machine.os.glibc
    if glibc and plan.platform.startswith("linux"):
        keys.append(("__glibc", glibc))  # the node's own C library: a build needing a newer one fails
    return tuple(keys)


def fleet_pixi_platforms(report: FleetReport, kb: KnowledgeBase
                         ) -> Tuple[List[FleetPlatform], List[str]]:
    """The node types pixi can express, one platform each (node types with the same platform
    definition share its entry), and why the others are left out."""
    formats = kb.document("formats")
    platforms: List[FleetPlatform] = []
    skipped: List[str] = []
    by_definition: Dict[Tuple[str, Tuple[Tuple[str, str], ...]], str] = {}
    for number, group in enumerate(report.groups, 1):
        plan = group.plan
        if plan is None or not plan.ok:
            skipped.append(f"type {number}: no working torch to lock")
            continue
        try:
            subdir = pixi_subdir(plan, formats)
            keys = _keys(group, plan)
        except TorchsmithError as exc:
            skipped.append(f"type {number}: {exc.message}")
            continue
        name = by_definition.setdefault((subdir, keys), _platform_name(number, subdir, keys))
        platforms.append(FleetPlatform(name, subdir, keys, f"type{number}", number))
    return platforms, skipped


def _feature_lines(feature: str, plan: Plan, platform_names: Sequence[str]) -> List[str]:
    stack = pixi_stack(plan)
    deps, pypi = pixi_dependency_lines(plan, stack)
    names = ", ".join(toml_str(n) for n in dict.fromkeys(platform_names))
    lines = ["", f"[feature.{feature}]", f"platforms = [{names}]", "",
             f"[feature.{feature}.dependencies]", *deps]
    if pypi:
        lines += ["", f"[feature.{feature}.pypi-dependencies]", *pypi]
    links = pixi_find_links(plan, stack)
    if links:
        lines += ["", f"[feature.{feature}.pypi-options]",
                  "find-links = [" + ", ".join(f"{{ url = {toml_str(u)} }}" for u in links) + "]"]
    if plan.environment:
        lines += ["", f"[feature.{feature}.activation.env]"]
        lines.extend(f"{name} = {toml_str(value)}" for name, value in plan.environment)
    return lines


def _shared_platforms(report: FleetReport, platforms: Sequence[FleetPlatform]) -> List[str]:
    """The node types the shared environment is locked for: those whose own plan uses the same
    kind of build (a CPU-only node has no __cuda, so a CUDA conda build does not install there)."""
    shared = report.shared
    if shared is None or not shared.ok:
        return []
    kinds = {n: g.plan.accelerator for n, g in enumerate(report.groups, 1) if g.plan is not None}
    return [p.name for p in platforms if kinds.get(p.number) == shared.accelerator]


def render_fleet_pixi(report: FleetReport, kb: KnowledgeBase) -> str:
    """The pixi.toml for the fleet (raises ``format-not-applicable`` when no node type fits)."""
    from torchsmith import __version__

    platforms, skipped = fleet_pixi_platforms(report, kb)
    if not platforms:
        raise TorchsmithError("no node type of this fleet can be expressed as a pixi platform",
                              code="format-not-applicable", context=skipped)
    first = report.groups[platforms[0].number - 1].plan
    assert first is not None
    stack = pixi_stack(first)
    channels = stack.channels if stack is not None else (kb.document("formats")["conda"]["channel"],)
    lines = ["# pixi.toml for a fleet: one named platform per node type (needs pixi >= 0.71); "
             "`pixi lock` solves every environment for its platforms into one pixi.lock.",
             f"# Generated by torchsmith {__version__} (kb {first.kb_version or 'unknown'}) for "
             f"{report.node_count} node(s) of {len(report.groups)} type(s).",
             "# Install on a node: pixi install --environment <its type> (see each platform's name)."]
    lines.extend(f"# left out: {why}" for why in skipped)
    entries = list(dict.fromkeys(pixi_platform_entry(p.subdir, p.keys, p.name) for p in platforms))
    lines += ["[workspace]", 'name = "torch-fleet"',
              f"channels = [{', '.join(toml_str(c) for c in channels)}]",
              "platforms = [", *(f"  {entry}," for entry in entries), "]"]
    environments = []
    for platform in platforms:
        plan = report.groups[platform.number - 1].plan
        assert plan is not None
        lines += _feature_lines(platform.feature, plan, [platform.name])
        environments.append(f"{platform.feature} = [{toml_str(platform.feature)}]")
    shared_on = _shared_platforms(report, platforms)
    if report.shared is not None and shared_on and len(report.groups) > 1:
        others = [f"type {p.number}" for p in platforms if p.name not in shared_on]
        if others:
            lines += ["", f"# the shared environment is not locked for {', '.join(others)}: their own plans "
                          "use another kind of build (a CPU-only node has no __cuda for a CUDA conda build)"]
        lines += _feature_lines(SHARED, report.shared, shared_on)
        environments.append(f"{SHARED} = [{toml_str(SHARED)}]")
    lines += ["", "[environments]", *environments]
    return "\n".join(lines) + "\n"
