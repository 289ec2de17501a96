"""A ``pyproject.toml`` for uv's project mode: the PyTorch index declared ``explicit = true`` and
the torch packages bound to it in ``[tool.uv.sources]`` (uv's documented PyTorch integration), so
no other package is ever looked up there and torch is looked up nowhere else.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from torchsmith.plan.model import Plan
from torchsmith.render._common import (
    RenderInputs,
    download_argv,
    exact_pin,
    header_lines,
    host_of,
    index_name,
    is_source_build,
    quote,
    require_ok,
    shell_join,
    toml_str,
)

__all__ = ["render_pyproject"]

# PEP 508 markers for each platform token: the lock is solved for this host's platform only
# (a +cu126 build exists for Linux and Windows, never for macOS).
_MARKERS: Dict[str, str] = {
    "linux-x86_64": "sys_platform == 'linux' and platform_machine == 'x86_64'",
    "wsl-x86_64": "sys_platform == 'linux' and platform_machine == 'x86_64'",
    "linux-aarch64": "sys_platform == 'linux' and platform_machine == 'aarch64'",
    "macos-arm64": "sys_platform == 'darwin' and platform_machine == 'arm64'",
    "macos-x86_64": "sys_platform == 'darwin' and platform_machine == 'x86_64'",
    "windows-x86_64": "sys_platform == 'win32' and platform_machine == 'AMD64'",
}


def requires_python(python: str) -> Optional[str]:
    """``==3.11.*`` for ``3.11`` (and for a free-threaded ``3.13t``): the Python the plan is for."""
    version = python.rstrip("t")
    parts = version.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return f"=={parts[0]}.{parts[1]}.*"


def render_pyproject(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    require_ok(plan, "pyproject")
    lines = header_lines(plan, "pyproject.toml for uv (uv lock / uv sync)")
    lines.append("# see https://docs.astral.sh/uv/guides/integration/pytorch/")
    # Index names, unique per URL: PyTorch-style indexes and flat find-links pages.
    names: Dict[str, str] = {}
    for pin in plan.packages:
        url = pin.index_url or (pin.find_links if not pin.wheel_url else None)
        if url and url not in names:
            base = index_name(url) if pin.index_url else f"{pin.name}-links"
            name, n = base, 2
            while name in names.values():
                name, n = f"{base}-{n}", n + 1
            names[url] = name
    dependencies: List[str] = []
    built: List[str] = []
    for pin in plan.packages:
        if is_source_build(pin):
            built.append(f"# {pin.name} {pin.version}: no wheel for this host, build it from source "
                         "(torchsmith plan --format jetson); not listed here.")
        elif pin.wheel_url and pin.wheel_filename:  # a URL uv refuses: the saved file is the source
            dependencies.append(exact_pin(pin))
            built.append(f"# {pin.name}: download first: {shell_join(download_argv(pin))}")
        elif pin.wheel_url:
            dependencies.append(f"{pin.name} @ {pin.wheel_url}")
        else:
            dependencies.append(exact_pin(pin))
    dependencies.extend(plan.unplanned)  # no torch-specific build: from the default index
    lines += ["[project]", 'name = "torch-env"', 'version = "0.1.0"']
    spec = requires_python(plan.python)
    if spec:
        lines.append(f"requires-python = {toml_str(spec)}")
    lines.append("dependencies = [")
    lines.extend(f"    {toml_str(d)}," for d in dependencies)
    lines.append("]")
    lines.extend(built)
    marker = _MARKERS.get(plan.platform or host_of(plan).platform)
    if marker:
        lines += ["", "[tool.uv]", f"environments = [{toml_str(marker)}]"]
    for url, name in names.items():
        flat = not any(p.index_url == url for p in plan.packages)
        lines += ["", "[[tool.uv.index]]", f"name = {toml_str(name)}", f"url = {toml_str(url)}"]
        if flat:
            lines.append('format = "flat"')
        lines.append("explicit = true")
    bound = [p for p in plan.packages if not p.wheel_url and (p.index_url or p.find_links)]
    saved = [p for p in plan.packages if p.wheel_url and p.wheel_filename]
    if bound or saved:
        lines += ["", "[tool.uv.sources]"]
        lines.extend(f"{toml_str(p.name)} = {{ path = {toml_str(str(p.wheel_filename))} }}" for p in saved)
        for pin in bound:
            url = pin.index_url or pin.find_links
            assert url is not None
            lines.append(f"{toml_str(pin.name)} = {{ index = {toml_str(names[url])} }}")
    if plan.environment:
        lines += ["", "# Set before running torch:"]
        lines.extend(f"#   export {name}={quote(value)}" for name, value in plan.environment)
    return "\n".join(lines) + "\n"
