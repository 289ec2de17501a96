"""The NVIDIA Jetson steps, in order: system packages, NVIDIA's torch wheel for the JetPack, the
torchvision that pairs (built from source when no wheel exists), and a check that CUDA works.

Never a plain ``pip install torch``/``torchvision`` here: PyPI's aarch64 wheels are built for
SBSA servers and would replace NVIDIA's build.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.plan.model import Plan
from torchsmith.render._common import (
    RenderInputs,
    environment_lines,
    header_lines,
    install_argvs,
    quote,
    require_ok,
    shell_join,
    source_urls,
    sources,
)
from torchsmith.versions import version_tuple

__all__ = ["render_jetson"]

_PYTHON = "python3"  # the JetPack's system Python, which NVIDIA's wheels are built for
_VERIFY = (
    'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda); '
    'assert torch.cuda.is_available(), "CUDA is not available"; '
    "print(torch.cuda.get_device_name(0)); "
    'x = torch.ones(2, 2, device="cuda"); print((x @ x).sum().item())'
)


def _is_jetson(plan: Plan) -> bool:
    return plan.accelerator == "jetson" or (plan.variant or "").startswith("jetson")


# Root in a container has no sudo: every privileged command goes through $SUDO.
_SUDO = 'SUDO=""; if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi'


def _as_root(command: str) -> str:
    return "$SUDO " + command[len("sudo "):] if command.startswith("sudo ") else command


def _prerequisite_lines(items: Tuple[str, ...]) -> List[str]:
    """Plan prerequisites are shell commands; bare package names become one apt-get line."""
    commands = [_as_root(p.strip()) for p in items if " " in p.strip()]
    packages = [p.strip() for p in items if p.strip() and " " not in p.strip()]
    lines = ["$SUDO apt-get update"] if items else []
    if packages:
        lines.append("$SUDO " + shell_join(["apt-get", "install", "-y", *packages]))
    lines.extend(commands)
    return lines


def _numpy_lines(plan: Plan, formats: Dict[str, Any]) -> List[str]:
    """NVIDIA's older wheels need NumPy 1.x: install it first so pip does not bring NumPy 2."""
    rule = formats["jetson_numpy"]
    torch = plan.package("torch")
    if not (torch and torch.version) or version_tuple(torch.version) >= version_tuple(rule["before_torch"]):
        return []
    lines = [f"# NumPy first: {rule['why']}."]
    if rule.get("uncertain"):
        lines.append(f"# (the {rule['before_torch']} boundary is torchsmith's reading of the sources, "
                     "not stated by NVIDIA)")
    lines.extend(f"# see {url}" for url in source_urls(formats, "jetson_numpy"))
    cython = formats["jetson_cython"]
    if plan.python in cython["pythons"]:
        lines.append(f"# {cython['why']}.")
        lines.extend(f"# see {url}" for url in source_urls(formats, "jetson_cython"))
        lines.append(shell_join([_PYTHON, "-m", "pip", "install", cython["requirement"]]))
    lines.append(shell_join([_PYTHON, "-m", "pip", "install", rule["requirement"]]))
    return lines


def _source_build_lines(plan: Plan, formats: Dict[str, Any], step: int) -> Tuple[List[str], int]:
    """Build each torch companion without a wheel (torchvision) from its release tag."""
    build = formats["jetson_torchvision_build"]
    lines: List[str] = []
    for pin in sources(plan).source_builds:
        lines += ["", f"# {step}. {pin.name} {pin.version}: no wheel for this JetPack, so build the "
                      "release that pairs with this torch from source"]
        lines.extend(f"# see {url}" for url in source_urls(formats, "jetson_torchvision_build"))
        lines.append("$SUDO " + shell_join(["apt-get", "install", "-y", *build["apt"]]))
        checkout = f"{pin.name}-{pin.version}"
        lines.append(shell_join(["git", "clone", "--depth", "1", "--branch", f"v{pin.version}",
                                 build["repository"], checkout]))
        lines.append(f"(cd {quote(checkout)} && BUILD_VERSION={quote(pin.version)} "
                     f"{_PYTHON} setup.py install --user)")
        step += 1
    return lines, step


def render_jetson(plan: Plan, inputs: RenderInputs) -> str:
    require_ok(plan, "jetson")
    if not _is_jetson(plan):
        raise TorchsmithError(
            f"the jetson format is for NVIDIA Jetson plans; this plan is for {plan.platform or '?'} "
            f"({plan.accelerator})",
            code="format-not-applicable",
            hint="use --format pip, or plan for a Jetson with --jetson L4T_RELEASE",
        )
    formats = inputs.formats
    lines = ["#!/usr/bin/env bash", *header_lines(plan, "NVIDIA Jetson install steps (bash)",
                                                    local_installer=True)]
    lines.append("set -euo pipefail")
    step = 1
    if plan.system_prerequisites:
        lines += ["", f"# {step}. System packages the NVIDIA wheel needs"]
        lines += _prerequisite_lines(plan.system_prerequisites)
        step += 1
    lines += ["", f"# {step}. PyTorch built by NVIDIA for this JetPack (not PyPI's aarch64 wheel)"]
    lines.extend(_numpy_lines(plan, formats))
    lines.extend(shell_join(a) for a in install_argvs(plan, "pip", prefix=[_PYTHON, "-m", "pip", "install"]))
    built, step = _source_build_lines(plan, formats, step + 1)
    lines += built
    if plan.environment:
        lines += ["", *environment_lines(plan)]
    lines += ["", f"# {step}. Check that torch sees the GPU",
              shell_join([_PYTHON, "-c", _VERIFY])]
    if any(line.startswith("$SUDO ") for line in lines):
        lines.insert(lines.index("set -euo pipefail") + 1, _SUDO)
    return "\n".join(lines) + "\n"
