"""conda ``environment.yml`` and ``pixi.toml`` from conda-forge builds.

conda-forge only (``nodefaults``): the ``pytorch`` channel published nothing after 2.5. A CUDA
plan asks for ``pytorch-gpu`` with ``cuda-version`` pinned to the variant's CUDA; the solver
needs the ``__cuda`` virtual package, which a machine without a GPU (a login node) only has
with ``CONDA_OVERRIDE_CUDA``; pixi declares it in ``[system-requirements]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.machine import Machine
from torchsmith.plan.model import PackagePin, Plan
from torchsmith.render._common import (
    exact_pin,
    header_lines,
    require_ok,
    sources,
    toml_str,
)
from torchsmith.render._data import formats_data, source_urls
from torchsmith.render.conda_forge import (
    compiled_on_conda_forge,
    forge_release,
    legacy_specs,
    tensorflow_windows_gpu,
)
from torchsmith.render.pip import install_argvs
from torchsmith.versions import minor_version, version_tuple

__all__ = ["CondaStack", "conda_argvs", "conda_stack", "pixi_argvs", "render_conda", "render_pixi"]


@dataclass(frozen=True)
class CondaStack:
    """The conda-forge side of a plan."""

    packages: Tuple[Tuple[str, str], ...]  # (conda-forge name, version or "version=build")
    cuda: Optional[str]  # "12.6" for cuda-version; None for CPU/MPS
    pip: Tuple[PackagePin, ...]  # everything not from conda-forge, installed by pip afterwards
    keep: Tuple[str, ...]  # pip pins that hold conda's torch in place during the pip step
    derived: bool  # True when the resolver gave no conda-forge facts and names were derived
    notes: Tuple[str, ...] = ()  # the resolver's remarks on the conda-forge build (plan.conda["notes"])
    channels: Tuple[str, ...] = ("conda-forge",)  # the legacy pytorch channel for releases before it
    platform: str = ""  # the plan's: conda-forge's CUDA builds differ per platform
    legacy: bool = False  # packages are complete specs ("cudatoolkit=11.3"), no cuda-version


_NOT_CONDA = {
    "jetson": "conda-forge's pytorch-gpu is built for desktop/server CUDA, not for Jetson's L4T "
              "(the JetPack's own NVIDIA wheel is the one that runs there)",
    "rocm": "torchsmith's data has no conda-forge ROCm build of pytorch",
    "xpu": "torchsmith's data has no conda-forge Intel XPU build of pytorch",
}


def _variant_cuda(plan: Plan) -> Optional[str]:
    """``12.6`` from ``cu126``/``cu130`` (the last digit is the minor)."""
    variant = plan.variant or ""
    if not (variant.startswith("cu") and variant[2:].isdigit() and len(variant) >= 4):
        return None
    digits = variant[2:]
    return f"{int(digits[:-1])}.{digits[-1]}"


def conda_stack(plan: Plan, fmt: str = "conda") -> CondaStack:
    """What to take from conda-forge, from ``plan.conda`` (the resolver's data) or derived."""
    require_ok(plan, fmt)
    kind = plan.accelerator
    if (plan.variant or "").startswith("rocm"):
        kind = "rocm"
    if kind in _NOT_CONDA:
        raise TorchsmithError(
            f"no {fmt} environment for this plan: {_NOT_CONDA[kind]}",
            code="format-not-applicable",
            hint="use --format pip" + (" or --format jetson" if kind == "jetson" else " or --format uv"),
        )
    data = formats_data()["conda"]
    specs = plan.conda or {}
    torch = plan.package("torch")
    wanted = str(specs.get(data["gpu_package"]) or specs.get("pytorch") or (torch.version if torch else ""))
    forge = forge_release(wanted, plan.platform) if torch is not None else None
    if torch is not None and (forge is None or specs.get("available") is False):
        try:
            return _legacy_stack(plan, kind, torch)
        except TorchsmithError:
            if specs.get("available") is not False:
                raise
    if specs.get("available") is False:
        raise TorchsmithError(f"no {fmt} environment for this plan: "
                              f"{specs.get('reason') or 'conda-forge has no matching build'}",
                              code="format-not-applicable", hint="use --format pip or --format uv")
    derived = not specs
    version = forge.version if forge is not None else str(specs.get("pytorch") or "")
    notes: List[str] = [forge.note] if forge is not None and forge.note else []
    cuda: Optional[str] = None
    packages: List[Tuple[str, str]] = []
    if torch is None:
        pass  # no torch in the plan (a TensorFlow environment): nothing of pytorch's
    elif kind == "cuda":
        cuda = str(specs.get("cuda-version") or _variant_cuda(plan) or "") or None
        if cuda is None:
            raise TorchsmithError(f"no {fmt} environment: the plan's variant {plan.variant!r} names no "
                                  "CUDA version", code="format-not-applicable", hint="use --format pip")
        if forge is not None:
            cuda, why = forge.cuda_for(cuda)
            notes.extend([why] if why else [])
        packages.append((data["gpu_package"], version))
    elif plan.platform.startswith("macos"):
        packages.append(("pytorch", version))
    else:
        # A bare "pytorch" on a machine with a GPU would pull the CUDA build: ask for the CPU one.
        packages.append(("pytorch", f"{version or '*'}={data['cpu_build']}"))
    family: Dict[str, str] = data["family"]
    pip: List[PackagePin] = []
    moved = torch is not None and forge is not None and forge.version != torch.version.split("+")[0]
    for pin in plan.packages:
        if pin.name == "torch":
            continue
        if pin.name in family:  # another pytorch than planned: the solver pairs the rest with it
            packages.append((family[pin.name], "" if moved else pin.version))
        else:
            pip.append(pin)
    compiled, pip, compiled_notes = compiled_on_conda_forge(pip)
    packages.extend((name, "") for name in compiled)
    tf_packages, tf_notes = tensorflow_windows_gpu(plan.platform, pip)
    packages.extend(tf_packages)
    compiled_notes.extend(tf_notes)
    keep = (f"torch=={version}",) if pip and version else ()
    raw_notes = specs.get("notes") or ()
    notes.extend((raw_notes,) if isinstance(raw_notes, str) else (str(n) for n in raw_notes))
    return CondaStack(tuple(packages), cuda, tuple(pip), keep, derived, (*notes, *compiled_notes),
                      platform=plan.platform)


def _legacy_stack(plan: Plan, kind: str, torch: PackagePin) -> CondaStack:
    """A release conda-forge never built here: the pytorch channel's build, with its CUDA package."""
    cuda = _variant_cuda(plan) if kind == "cuda" else None
    channels, specs, comments = legacy_specs(torch.version, cuda)
    packages: List[Tuple[str, str]] = [(s.partition("=")[0], s.partition("=")[2]) for s in specs]
    family: Dict[str, str] = formats_data()["conda"]["family"]
    pip = [p for p in plan.packages if p.name not in family]
    packages.extend((family[p.name], p.version) for p in plan.packages
                    if p.name in family and p.name != "torch")
    keep = (f"torch=={torch.version.split('+')[0]}",) if pip else ()
    return CondaStack(tuple(packages), None, tuple(pip), keep, False, tuple(comments),
                      channels=tuple(channels), legacy=True)


def kb_build_notes(stack: CondaStack, kb: Any = None) -> List[str]:
    """What torchsmith's data says about conda-forge's builds of this pytorch series, as comments.

    The conda-forge rows are sparse and partly unverified, so they only inform, never refuse.
    ``kb``: a :class:`~torchsmith.kb.KnowledgeBase` (default: the packaged one).
    """
    try:
        if kb is None:
            from torchsmith.kb import load_kb

            kb = load_kb()
        rows = kb.conda_builds
    except TorchsmithError:
        return []  # a broken KB is reported by the commands that need it
    if stack.legacy or not stack.packages or stack.packages[0][0] not in ("pytorch", "pytorch-gpu"):
        return []
    version = stack.packages[0][1].split("=")[0]
    series = minor_version(version)
    row = next((b for b in rows if b.version == series and b.package in ("pytorch", "pytorch-gpu")), None)
    if row is None:
        return [f"torchsmith's data lists no conda-forge pytorch {series} build: check conda-forge has one."]
    urls = [kb.sources[s].url for s in row.sources if s in kb.sources]
    cite = f" (source: {', '.join(urls)}{'; unverified' if row.uncertain else ''})"
    if stack.cuda is None:
        return []
    major = stack.cuda.split(".")[0]
    built = row.cudas_for(stack.platform)
    fits = [c for c in built
            if c.split(".")[0] == major and version_tuple(c) <= version_tuple(stack.cuda)]
    listed = ", ".join(built) or "none"
    if not fits:
        return [f"conda-forge's pytorch {series} CUDA builds are for CUDA {listed}: none of them fits "
                f"cuda-version={stack.cuda}{cite}."]
    return [f"conda-forge's pytorch {series} CUDA builds: CUDA {listed}; cuda-version={stack.cuda} "
            f"admits {', '.join(fits)}{cite}."]


def _match_spec(name: str, version: str, sep: str) -> str:
    return f"{name}{sep}{version}" if version else name


def conda_argvs(plan: Plan) -> List[List[str]]:
    """``conda install`` from conda-forge only, then pip for what conda-forge does not carry."""
    stack = conda_stack(plan)
    specs = [_match_spec(n, v, "=") for n, v in stack.packages]
    if stack.cuda:
        specs.insert(1, f"cuda-version={stack.cuda}")
    channels = [arg for channel in stack.channels for arg in ("--channel", channel)]
    return [["conda", "install", "--yes", "--override-channels", *channels, *specs],
            *install_argvs(Plan(status="ok", packages=stack.pip), "pip", hold=stack.keep)]


def _yaml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def render_conda(plan: Plan, machine: Optional[Machine] = None) -> str:
    stack = conda_stack(plan)
    lines = header_lines(plan, machine, "conda environment.yml (conda-forge builds)")
    if not stack.legacy:
        lines.append("# conda-forge only: the pytorch channel published no builds after 2.5.")
    if stack.derived:
        lines.append("# Derived from the pip plan (pytorch = the torch version, cuda-version = the "
                     "variant's CUDA): check conda-forge carries that build before relying on it.")
    lines.extend(f"# {note}" for note in (*stack.notes, *kb_build_notes(stack)))
    if stack.cuda:
        lines.append("# conda chooses CUDA builds only where it sees the driver (__cuda). To build "
                     "this environment on a machine without a GPU (a login node):")
        lines.append(f"#   CONDA_OVERRIDE_CUDA={stack.cuda} conda env create --file environment.yml")
    lines.extend(f"# see {url}" for url in source_urls("conda"))
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
    if stack.pip:
        lines.append("  - pip")
        lines.append("  - pip:")
        src = sources(Plan(status="ok", packages=stack.pip))
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
    if plan.environment:
        lines.append("variables:")
        lines.extend(f"  {name}: {_yaml(value)}" for name, value in plan.environment)
    return "\n".join(lines) + "\n"


def _pixi_platform(plan: Plan, machine: Optional[Machine]) -> str:
    platform = plan.platform or (machine.platform if machine is not None else "")
    mapped = formats_data()["pixi"]["platforms"].get(platform)
    if mapped is None:
        raise TorchsmithError(f"no pixi platform for {platform or 'an unknown platform'!r}",
                              code="format-not-applicable", hint="use --format pip")
    return str(mapped)


def render_pixi(plan: Plan, machine: Optional[Machine] = None) -> str:
    """A pixi workspace: conda-forge builds where they exist, else PyPI pins with their own index."""
    require_ok(plan, "pixi")
    platform = _pixi_platform(plan, machine)
    lines = header_lines(plan, machine, "pixi.toml")
    try:
        stack: Optional[CondaStack] = conda_stack(plan, "pixi")
    except TorchsmithError as exc:
        if plan.accelerator == "jetson" or exc.code != "format-not-applicable":
            raise
        stack = None  # ROCm/XPU: the PyTorch index, pinned per package
    lines.extend(f"# see {url}" for url in source_urls("pixi"))
    channels = stack.channels if stack is not None else (formats_data()["conda"]["channel"],)
    lines += ["[workspace]", 'name = "torch"', f"channels = [{', '.join(toml_str(c) for c in channels)}]",
              f"platforms = [{toml_str(platform)}]"]
    if stack is not None and stack.cuda:
        lines += ["", "# The CUDA the host's driver provides (the __cuda virtual package).",
                  "[system-requirements]", f"cuda = {toml_str(stack.cuda.split('.')[0])}"]
    lines += ["", "[dependencies]"]
    if plan.python:
        lines.append(f"python = {toml_str(plan.python + '.*')}")
    pypi = list(plan.packages)
    if stack is not None:
        for name, version in stack.packages:
            lines.append(f"{name} = {_pixi_toml_spec(version)}")
        if stack.cuda:
            lines.append(f"cuda-version = {toml_str(stack.cuda + '.*')}")
        if stack.derived:
            lines.append("# Derived from the pip plan: check conda-forge carries these builds.")
        lines.extend(f"# {note}" for note in (*stack.notes, *kb_build_notes(stack)))
        pypi = list(stack.pip)
    links = sorted({p.find_links for p in pypi if p.find_links and not p.index_url and not p.wheel_url})
    if pypi:
        lines += ["", "[pypi-dependencies]"]
        for pin in pypi:
            if pin.wheel_url:
                value = f"{{ url = {toml_str(pin.wheel_url)} }}"
            elif pin.index_url:
                value = (f"{{ version = {toml_str(_pep440(pin))}, index = {toml_str(pin.index_url)} }}")
            else:
                value = toml_str(_pep440(pin))
            lines.append(f"{toml_str(pin.name)} = {value}")
    if links:
        lines += ["", "[pypi-options]",
                  "find-links = [" + ", ".join(f"{{ url = {toml_str(u)} }}" for u in links) + "]"]
    if plan.environment:
        lines += ["", "[activation.env]"]
        lines.extend(f"{name} = {toml_str(value)}" for name, value in plan.environment)
    return "\n".join(lines) + "\n"


def _pep440(pin: PackagePin) -> str:
    return f"=={pin.version}{pin.local_version or ''}" if pin.version else "*"


def _split_build(version: str) -> Tuple[str, str]:
    """``("2.5.1", "cpu*")`` from ``2.5.1=cpu*``; ``("", "")`` for any version."""
    number, _, build = version.partition("=")
    return ("" if number == "*" else number), build


def _pixi_toml_spec(version: str) -> str:
    number, build = _split_build(version)
    spec = f"=={number}" if number else "*"
    if build:
        return f"{{ version = {toml_str(spec)}, build = {toml_str(build)} }}"
    return toml_str(spec)


def _pixi_add_spec(name: str, version: str) -> str:
    number, build = _split_build(version)
    if build:
        return f"{name}={number or '*'}={build}"
    return f"{name}=={number}" if number else name


def pixi_argvs(plan: Plan) -> List[List[str]]:
    """``pixi add`` for a workspace; CUDA needs its system requirement declared first."""
    require_ok(plan, "pixi")
    try:
        stack = conda_stack(plan, "pixi")
    except TorchsmithError as exc:
        if exc.code == "format-not-applicable":
            return []
        raise
    steps: List[List[str]] = []
    if stack.cuda:
        steps.append(["pixi", "workspace", "system-requirements", "add", "cuda", stack.cuda.split(".")[0]])
    specs = [_pixi_add_spec(n, v) for n, v in stack.packages]
    if stack.cuda:
        specs.insert(1, f"cuda-version=={stack.cuda}")
    steps.append(["pixi", "add", *specs])
    src = sources(Plan(status="ok", packages=stack.pip))
    if src.indexes or src.find_links or src.wheels:
        return []  # `pixi add` cannot give a PyPI package its own index: use the pixi.toml format
    if src.default:
        steps.append(["pixi", "add", "--pypi", *(exact_pin(p) for p in src.default)])
    return steps
