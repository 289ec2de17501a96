"""conda ``environment.yml`` and ``pixi.toml`` from conda-forge builds.

conda-forge only (``nodefaults``): the ``pytorch`` channel published nothing after 2.5. The
conda-forge stack is the plan's (:mod:`torchsmith.plan.conda_env`, decided by the resolver).
A CUDA plan's solver needs the ``__cuda`` virtual package, which a machine without a GPU (a
login node) only has with ``CONDA_OVERRIDE_CUDA``; pixi (0.71 on) declares it on the platform
itself (``[workspace].platforms`` inline tables; ``[system-requirements]`` is deprecated), with the
CEP 46 ``__cuda_arch`` virtual package: the oldest compute capability among the machine's GPUs.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.plan.model import CondaStack, PackagePin, Plan
from torchsmith.render._common import (
    RenderInputs,
    conda_stack,
    exact_pin,
    header_lines,
    host_of,
    install_argvs,
    require_ok,
    source_urls,
    sources,
    toml_str,
)

__all__ = ["conda_argvs", "pixi_argvs", "pixi_dependency_lines", "pixi_find_links", "pixi_platform_entry",
           "pixi_stack", "pixi_subdir", "pixi_virtual_packages", "render_conda", "render_pixi"]


_RANGE = ("<", ">", "!", "~", "=")  # a version range (mkl<2024.1), written after the name as is


def _match_spec(name: str, version: str, sep: str) -> str:
    if version.startswith(_RANGE):
        return f"{name}{version}"
    return f"{name}{sep}{version}" if version else name


def conda_argvs(plan: Plan) -> List[List[str]]:
    """``conda install`` from conda-forge only, then pip for what conda-forge does not carry."""
    stack = conda_stack(plan, "conda")
    specs = [_match_spec(n, v, "=") for n, v in stack.packages]
    if stack.cuda:
        specs.insert(1, f"cuda-version={stack.cuda}")
    channels = [arg for channel in stack.channels for arg in ("--channel", channel)]
    return [["conda", "install", "--yes", "--override-channels", *channels, *specs],
            *install_argvs(Plan(status="ok", packages=stack.pip, unplanned=plan.unplanned), "pip",
                           hold=stack.keep)]


def _yaml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def render_conda(plan: Plan, inputs: RenderInputs) -> str:
    stack = conda_stack(plan, "conda")
    lines = header_lines(plan, "conda environment.yml (conda-forge builds)")
    if not stack.legacy:
        lines.append("# conda-forge only: the pytorch channel published no builds after 2.5.")
    if stack.derived:
        lines.append("# Derived from the pip plan (pytorch = the torch version, cuda-version = the "
                     "variant's CUDA): check conda-forge carries that build before relying on it.")
    lines.extend(f"# {note}" for note in (*stack.notes, *stack.data_notes))
    if stack.cuda:
        lines.append("# conda chooses CUDA builds only where it sees the driver (__cuda). To build "
                     "this environment on a machine without a GPU (a login node):")
        lines.append(f"#   CONDA_OVERRIDE_CUDA={stack.cuda} conda env create --file environment.yml")
    lines.extend(f"# see {url}" for url in source_urls(inputs.formats, "conda"))
    lines.append("name: torch")
    lines.append("channels:")
    lines.extend(f"  - {channel}" for channel in stack.channels)
    lines.append("  - nodefaults")
    lines.append("dependencies:")
    if plan.python:
        lines.append(f"  - {_yaml('python=' + plan.python)}")
    specs = [_match_spec(n, v, "=") for n, v in stack.packages]
    if stack.cuda:
        specs.insert(1, "cuda-version=" + stack.cuda)
    lines.extend(f"  - {_yaml(spec)}" for spec in specs)
    if stack.pip or plan.unplanned:
        lines.append("  - pip")
        lines.append("  - pip:")
        src = sources(Plan(status="ok", packages=stack.pip, unplanned=plan.unplanned))
        if src.indexes:
            raise TorchsmithError(
                "no conda environment.yml for this plan: "
                f"{', '.join(p.name for _, pins in src.indexes for p in pins)} must come from their own "
                "index, which a pip section cannot express safely",
                code="format-not-applicable", hint="use --format pixi or --format pip")
        lines.extend(f"      - {_yaml('--find-links ' + url)}" for url, _ in src.find_links)
        lines.extend(f"      - {_yaml(p)}" for p in stack.keep)
        lines.extend(f"      - {_yaml(exact_pin(p))}" for _, pins in src.find_links for p in pins)
        lines.extend(f"      - {_yaml(exact_pin(p))}" for p in src.default)
        lines.extend(f"      - {_yaml(p.name + ' @ ' + str(p.wheel_url))}" for p in src.wheels)
        lines.extend(f"      - {_yaml(text)}" for text in plan.unplanned)
    if plan.environment:
        lines.append("variables:")
        lines.extend(f"  {name}: {_yaml(value)}" for name, value in plan.environment)
    return "\n".join(lines) + "\n"


def pixi_subdir(plan: Plan, formats: Dict[str, Any]) -> str:
    platform = plan.platform or host_of(plan).platform
    mapped = formats["pixi"]["platforms"].get(platform)
    if mapped is None:
        raise TorchsmithError(f"no pixi platform for {platform or 'an unknown platform'!r}",
                              code="format-not-applicable", hint="use --format pip")
    return str(mapped)


def pixi_virtual_packages(plan: Plan, stack: Optional[CondaStack]) -> List[Tuple[str, str]]:
    """The platform's virtual packages: the driver's CUDA major (``__cuda``), and ``__cuda_arch``,
    the oldest compute capability among the described GPUs (CEP 46), so a lock made for this machine
    does not match a host whose GPU is older."""
    if stack is None or not stack.cuda:
        return []
    keys = [("__cuda", stack.cuda.split(".")[0])]
    arch = host_of(plan).arch_list
    if arch:
        keys.append(("__cuda_arch", arch[0].rstrip("af")))  # CEP 46: {major}.{minor}, no suffix
    return keys


def glibc_pin(plan: Plan) -> str:
    torch = next((p for p in plan.packages if p.name == "torch"), None)
    return f"{torch.version}+{torch.variant}" if torch is not None and torch.variant else (
        torch.version if torch is not None else "")


def pixi_glibc(plan: Plan, stack: Optional[CondaStack], inputs: RenderInputs) -> Optional[str]:
    """The glibc floor of the torch build pixi installs from PyPI (its manylinux tag, manylinux.json);
    None where torch comes from conda-forge (whose glibc floor the data does not record)."""
    from torchsmith.plan.constraints import wheel_glibc_floor

    torch = next((p for p in _pypi_pins(plan, stack) if p.name == "torch"), None)
    if torch is None or torch.wheel_url or not torch.version:
        return None
    return wheel_glibc_floor(inputs.kb, plan.platform, torch.version, torch.variant)


def pixi_platform_entry(subdir: str, keys: Sequence[Tuple[str, str]], name: Optional[str] = None) -> str:
    """One ``[workspace].platforms`` entry (pixi >= 0.71): a bare subdir, or an inline table with the
    virtual packages in pixi's own spelling: ``cuda = { driver, arch }`` for ``__cuda`` with
    ``__cuda_arch``, friendly ``glibc``, raw ``__name`` for the rest (prefix-dev/pixi v0.71.0
    crates/pixi_manifest/src/toml/platform.rs)."""
    if not keys and name is None:
        return toml_str(subdir)
    values = dict(keys)
    parts = [f"name = {toml_str(name)}"] if name is not None else []
    parts.append(f"platform = {toml_str(subdir)}")
    driver, arch = values.pop("__cuda", None), values.pop("__cuda_arch", None)
    if driver and arch:
        parts.append(f"cuda = {{ driver = {toml_str(driver)}, arch = {toml_str(arch)} }}")
    elif driver:
        parts.append(f"cuda = {toml_str(driver)}")
    friendly = {"__glibc": "glibc", "__archspec": "archspec", "__linux": "linux"}
    parts.extend(f"{friendly.get(k, k)} = {toml_str(v)}" for k, v in values.items())
    return "{ " + ", ".join(parts) + " }"


def render_pixi(plan: Plan, inputs: RenderInputs) -> str:
    """A pixi workspace: conda-forge builds where they exist, else PyPI pins with their own index."""
    require_ok(plan, "pixi")
    platform = pixi_subdir(plan, inputs.formats)
    lines = header_lines(plan, "pixi.toml")
    stack = pixi_stack(plan)
    lines.extend(f"# see {url}" for url in source_urls(inputs.formats, "pixi"))
    channels = stack.channels if stack is not None else (inputs.formats["conda"]["channel"],)
    keys = pixi_virtual_packages(plan, stack)
    if keys:
        lines.append("# The platform's virtual packages: the CUDA the driver provides (__cuda) and the "
                     "oldest GPU's compute capability (__cuda_arch); needs pixi >= 0.71.")
    glibc = pixi_glibc(plan, stack, inputs)
    if glibc is not None:
        keys.append(("__glibc", glibc))
        lines.append(f"# glibc: torch {glibc_pin(plan)}'s manylinux wheel needs glibc >= {glibc} "
                     "(declared so the lock holds where it does).")
    lines += ["[workspace]", 'name = "torch"', f"channels = [{', '.join(toml_str(c) for c in channels)}]",
              f"platforms = [{pixi_platform_entry(platform, keys)}]"]
    deps, pypi = pixi_dependency_lines(plan, stack)
    lines += ["", "[dependencies]", *deps]
    if pypi:
        lines += ["", "[pypi-dependencies]", *pypi]
    links = pixi_find_links(plan, stack)
    if links:
        lines += ["", "[pypi-options]",
                  "find-links = [" + ", ".join(f"{{ url = {toml_str(u)} }}" for u in links) + "]"]
    if plan.environment:
        lines += ["", "[activation.env]"]
        lines.extend(f"{name} = {toml_str(value)}" for name, value in plan.environment)
    return "\n".join(lines) + "\n"


def pixi_stack(plan: Plan) -> Optional[CondaStack]:
    """The conda-forge stack pixi installs; None where the PyTorch index serves it all (ROCm/XPU)."""
    try:
        return conda_stack(plan, "pixi")
    except TorchsmithError as exc:
        if plan.accelerator == "jetson" or exc.code != "format-not-applicable":
            raise
        return None


def _pypi_pins(plan: Plan, stack: Optional[CondaStack]) -> List[PackagePin]:
    return list(stack.pip) if stack is not None else list(plan.packages)


def pixi_dependency_lines(plan: Plan, stack: Optional[CondaStack]) -> Tuple[List[str], List[str]]:
    """The lines of ``[dependencies]`` and of ``[pypi-dependencies]`` (empty: no such table)."""
    deps = [f"python = {toml_str(plan.python + '.*')}"] if plan.python else []
    if stack is not None:
        deps.extend(f"{name} = {_pixi_toml_spec(version)}" for name, version in stack.packages)
        if stack.cuda:
            deps.append(f"cuda-version = {toml_str(stack.cuda + '.*')}")
        if stack.derived:
            deps.append("# Derived from the pip plan: check conda-forge carries these builds.")
        deps.extend(f"# {note}" for note in (*stack.notes, *stack.data_notes))
    pypi: List[str] = []
    for pin in _pypi_pins(plan, stack):
        if pin.wheel_url:
            value = f"{{ url = {toml_str(pin.wheel_url)} }}"
        elif pin.index_url:
            value = (f"{{ version = {toml_str(_pep440(pin))}, index = {toml_str(pin.index_url)} }}")
        else:
            value = toml_str(_pep440(pin))
        pypi.append(f"{toml_str(pin.name)} = {value}")
    pypi.extend(_pixi_pypi_line(text) for text in plan.unplanned)
    return deps, pypi


def pixi_find_links(plan: Plan, stack: Optional[CondaStack]) -> List[str]:
    return sorted({p.find_links for p in _pypi_pins(plan, stack)
                   if p.find_links and not p.index_url and not p.wheel_url})


def _pixi_pypi_line(text: str) -> str:
    """``"ftfy" = ">=6"`` (extras in a table) from a requirement as the user wrote it."""
    from packaging.requirements import Requirement

    req = Requirement(text)
    spec = toml_str(str(req.specifier) or "*")
    if req.extras:
        extras = ", ".join(toml_str(e) for e in sorted(req.extras))
        return f"{toml_str(req.name)} = {{ version = {spec}, extras = [{extras}] }}"
    return f"{toml_str(req.name)} = {spec}"


def _pep440(pin: PackagePin) -> str:
    return f"=={pin.version}{pin.local_version or ''}" if pin.version else "*"


def _split_build(version: str) -> Tuple[str, str]:
    """``("2.5.1", "cpu*")`` from ``2.5.1=cpu*``; ``("", "")`` for any version."""
    number, _, build = version.partition("=")
    return ("" if number == "*" else number), build


def _pixi_toml_spec(version: str) -> str:
    if version.startswith(_RANGE):
        return toml_str(version)
    number, build = _split_build(version)
    spec = f"=={number}" if number else "*"
    if build:
        return f"{{ version = {toml_str(spec)}, build = {toml_str(build)} }}"
    return toml_str(spec)


def _pixi_add_spec(name: str, version: str) -> str:
    if version.startswith(_RANGE):
        return f"{name}{version}"
    number, build = _split_build(version)
    if build:
        return f"{name}={number or '*'}={build}"
    return f"{name}=={number}" if number else name


def pixi_argvs(plan: Plan, formats: Dict[str, Any]) -> List[List[str]]:
    """``pixi add`` for a workspace; CUDA needs its platform's virtual packages declared first."""
    require_ok(plan, "pixi")
    try:
        stack = conda_stack(plan, "pixi")
    except TorchsmithError as exc:
        if exc.code == "format-not-applicable":
            return []
        raise
    steps: List[List[str]] = []
    keys = pixi_virtual_packages(plan, stack)
    if keys:
        flags = {"__cuda": "--cuda", "__cuda_arch": "--cuda-arch"}  # pixi_cli workspace/platform.rs
        args = [arg for key, value in keys for arg in (flags[key], value)]
        steps.append(["pixi", "workspace", "platform", "add", pixi_subdir(plan, formats), *args])
    specs = [_pixi_add_spec(n, v) for n, v in stack.packages]
    if stack.cuda:
        specs.insert(1, f"cuda-version=={stack.cuda}")
    steps.append(["pixi", "add", *specs])
    src = sources(Plan(status="ok", packages=stack.pip, unplanned=plan.unplanned))
    if src.indexes or src.find_links or src.wheels:
        return []  # `pixi add` cannot give a PyPI package its own index: use the pixi.toml format
    if src.default or src.unplanned:
        steps.append(["pixi", "add", "--pypi", *(exact_pin(p) for p in src.default), *src.unplanned])
    return steps
