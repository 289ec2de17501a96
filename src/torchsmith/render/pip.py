"""pip and ``uv pip`` commands, and requirements files, that keep each package on its own index.

The commands are the plan's install steps (:mod:`torchsmith.plan.steps`), which say why the
PyTorch index is never an extra index.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from torchsmith.plan.model import Plan
from torchsmith.render._common import (
    RenderInputs,
    Sources,
    download_argv,
    environment_lines,
    exact_pin,
    header_lines,
    host_of,
    index_name,
    install_argvs,
    require_ok,
    requirement,
    shell_join,
    sources,
)

__all__ = [
    "install_argvs",
    "render_pip",
    "render_requirements",
    "render_uv",
    "requirement_files",
]

def _commands_text(plan: Plan, installer: str) -> str:
    require_ok(plan, installer)
    tool = "uv pip" if installer == "uv" else "pip"
    lines = header_lines(plan, f"{tool} install commands", local_installer=True)
    src = sources(plan)
    if src.indexes:
        flag = "--default-index" if installer == "uv" else "--index-url"
        lines.append(f"# The torch packages come only from the PyTorch index ({flag}, never as an "
                     "extra index: a same-named package elsewhere can never win).")
        lines.append(f"# Your own {tool} configuration still applies: if it sets extra indexes or "
                     "find-links, run the first command with them removed.")
    executable = host_of(plan).python_executable
    if executable:
        lines.append(f"# Run with the Python you install into (this host: {executable}).")
    steps = install_argvs(plan, installer)
    keep_note = bool(src.pinned_elsewhere) and bool(src.find_links or src.default or src.unplanned)
    for number, argv in enumerate(steps, 1):
        if keep_note and number == len(src.indexes) + (1 if src.wheels else 0) + 1:
            lines.append("# The rest from your configured index; the torch pins are repeated so nothing "
                         "replaces them.")
            if installer == "uv":
                lines.append("# uv needs their index to see them: --index ranks it first, and uv's "
                             "first-index strategy takes each name from the first index that has it.")
        lines.append(shell_join(argv, plan.platform))
    lines.extend(_source_build_notes(src, plan))
    lines.extend(environment_lines(plan))
    return "\n".join(lines) + "\n"


def _source_build_notes(src: Sources, plan: Optional[Plan] = None) -> List[str]:
    """Source builds: Jetson's have their own steps; the rest are built against the torch above."""
    if plan is not None and plan.accelerator != "jetson":
        return []  # the commands carry them (--no-build-isolation)
    notes = [f"# {p.name} {p.version}: no wheel for this host; build it from source "
             f"(steps: torchsmith plan --format jetson)" for p in src.source_builds]
    return notes + [f"# {p.name}: built from source against the torch above: "
                    f"pip install --no-build-isolation '{requirement(p)}'"
                    for p in src.wheels if p.variant == "source"]


def render_pip(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    return _commands_text(plan, "pip")


def render_uv(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    text = _commands_text(plan, "uv")
    return text + "# For a uv project (uv add / uv sync): torchsmith plan --format pyproject\n"


def requirement_files(plan: Plan, inputs: Optional[RenderInputs] = None) -> Dict[str, str]:
    """File name -> content, in install order.

    One file when every pin can share one: ``--index-url`` in a requirements file applies to
    every line, so pins from a PyTorch index get a file of their own, and ``requirements.txt``
    holds the rest with the torch pins repeated (already installed, so they only hold torch).
    """
    require_ok(plan, "requirements")
    src = sources(plan)
    rest = bool(src.wheels or src.find_links or src.default or src.unplanned)
    files: Dict[str, str] = {}
    if len(src.indexes) == 1 and not rest:
        url, pins = src.indexes[0]
        body = [f"--index-url {url}", *(exact_pin(p) for p in pins)]
        files["requirements.txt"] = _file(plan, "requirements.txt", body)
        return files
    names = []
    for url, pins in src.indexes:
        name = f"requirements-{index_name(url)}.txt"
        names.append(name)
        uv_note = (f"# uv: a configured UV_DEFAULT_INDEX wins over --index-url here, so: "
                   f"uv pip install --default-index {url} -r {name}")
        files[name] = _file(plan, name, [uv_note, f"--index-url {url}", *(exact_pin(p) for p in pins)])
    if rest or not files:
        body = [f"--find-links {url}" for url, _ in src.find_links]
        if src.pinned_elsewhere and files:
            body.append(f"# Installed from their own index by {', '.join(names)}; pinned here so "
                        "nothing replaces them:")
            uv_flags = " ".join(f"--index {url}" for url, _ in src.indexes)
            body.append(f"# uv: it resolves from indexes, not from what is installed, so: "
                        f"uv pip install {uv_flags} -r requirements.txt")
        body.extend(exact_pin(p) for p in src.pinned_elsewhere if not p.wheel_url)
        body.extend(f"# download first: {shell_join(download_argv(p))}"
                    for p in src.wheels if p.wheel_filename and p.variant != "source")
        body.extend(requirement(p) for p in src.wheels if p.variant != "source")
        body.extend(exact_pin(p) for _, pins in src.find_links for p in pins)
        body.extend(exact_pin(p) for p in src.default)
        body.extend(src.unplanned)
        body.extend(_source_build_notes(src))
        files["requirements.txt"] = _file(plan, "requirements.txt", body)
    return files


def _file(plan: Plan, name: str, body: Sequence[str]) -> str:
    lines = header_lines(plan, name, local_installer=True)
    lines.extend(body)
    return "\n".join(lines) + "\n"


def render_requirements(plan: Plan, inputs: Optional[RenderInputs] = None) -> str:
    """One requirements file, or several separated by ``# ---- name ----`` lines and how to use them.

    Concatenated as one file by mistake, the PyTorch ``--index-url`` would apply to everything:
    packages it lacks fail to install, none comes from elsewhere.
    """
    files = requirement_files(plan)
    if len(files) == 1:
        return next(iter(files.values()))
    lines = header_lines(plan, "requirements files", local_installer=True)
    lines.append("# A requirements file cannot give one package its own index (--index-url applies "
                 "to every line), so these pins are split into files. Save each part below under "
                 "its name and install them in this order:")
    lines.extend(f"#   python -m pip install -r {name}" for name in files)
    for name, content in files.items():
        lines.append(f"# ---- {name} ----")
        lines.extend(line for line in content.splitlines() if not line.startswith("# "))
    return "\n".join(lines) + "\n"
