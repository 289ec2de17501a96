"""Plans for containers and C++: ``dockerfile`` and ``libtorch`` formats (Slurm: render_slurm).

Each renderer is ``render_X(plan, machine=None) -> str`` like the others in
:mod:`torchsmith.plan.render`; :data:`RENDERERS` maps format names to them for the format table.
The base images come from ``containers.json`` (each row sourced), never from code.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from torchsmith.errors import KnowledgeBaseError, load_data_file
from torchsmith.kb.documents import DATA_DIR
from torchsmith.machine import Machine
from torchsmith.plan.model import Plan
from torchsmith.plan.render._common import header_lines, require_ok, shell_join, sources
from torchsmith.plan.render._data import formats_data, source_urls
from torchsmith.plan.render.pip import install_argvs
from torchsmith.versions import version_tuple

__all__ = [
    "RENDERERS",
    "BaseImage",
    "arch_list",
    "choose_base_image",
    "render_dockerfile",
    "render_libtorch",
    "require_check_lines",
    "variant_cuda",
]

_DATA = os.path.join(DATA_DIR, "containers.json")
_FAMILY = ("torch", "torchvision", "torchaudio")
_VENV = "/opt/venv"


def _check_containers(data: Dict[str, Any]) -> None:
    for table in ("cuda_runtime", "pytorch", "l4t_pytorch", "l4t_jetpack"):
        for row in data[table]:
            if not row.get("image") or row.get("source") not in data["sources"]:
                raise KeyError(f"{table} row without image or known source: {row}")


def _containers(path: str = _DATA) -> Dict[str, Any]:
    return load_data_file(path, "container image data", _check_containers)


def variant_cuda(variant: Optional[str]) -> Optional[str]:
    """``cu124`` -> ``12.4``; ``cu130`` -> ``13.0``; None for anything else."""
    match = re.match(r"^cu(\d{2,3})$", variant or "")
    if not match:
        return None
    digits = match.group(1)
    return f"{int(digits[:-1])}.{digits[-1]}"


def _older_or_equal(a: str, b: str) -> bool:
    return version_tuple(a) <= version_tuple(b)


@dataclass(frozen=True)
class BaseImage:
    image: str
    kind: str  # "pytorch" | "cuda" | "l4t-pytorch" | "l4t-jetpack" | "python"
    why: str
    source: str
    requires_cuda: Optional[str] = None  # the image's NVIDIA_REQUIRE_CUDA floor
    torch_preinstalled: bool = False
    problems: Tuple[str, ...] = ()  # the requirement check will fail: explanation and remedies
    notes: Tuple[str, ...] = ()  # a newer image would be refused here: why this one
    preinstalled: Tuple[str, ...] = ("torch",)  # packages the image already has


def require_check_lines(image: str, image_cuda: str, driver_cuda: Optional[str],
                        driver: Optional[str], older: Optional[str]) -> List[str]:
    """Why nvidia-container-runtime refuses an image, and the three ways out."""
    return [
        f"{image} sets NVIDIA_REQUIRE_CUDA=cuda>={image_cuda}; this host's driver "
        f"{driver or '?'} supports CUDA {driver_cuda}, so `docker run --gpus` stops with "
        f"'unsatisfied condition: cuda>={image_cuda}'.",
        "Remedies:",
        f"  1. an older image: {older}" if older
        else "  1. an older image (none in torchsmith's data is old enough)",
        "  2. NVIDIA_DISABLE_REQUIRE=1 (docker run -e NVIDIA_DISABLE_REQUIRE=1): skips the check; "
        "risk: CUDA code then fails at run time with 'CUDA driver version is insufficient' "
        "unless NVIDIA's minor-version compatibility covers it (same CUDA major, driver at or "
        "above that major's floor)",
        f"  3. upgrade the host driver to one that supports CUDA {image_cuda}",
    ]


def choose_base_image(plan: Plan, machine: Optional[Machine] = None,
                      data: Optional[Dict[str, Any]] = None) -> BaseImage:
    """The base image for ``plan``: matching its torch, and accepted by the host's driver."""
    rows = data or _containers()
    names = {p.name for p in plan.packages}
    torch = plan.package("torch")
    if plan.accelerator == "jetson" or (machine is not None and machine.jetson is not None):
        return _jetson_image(plan, machine, rows)
    cuda = variant_cuda(plan.variant)
    if cuda is None:
        python = plan.python or (machine.python.minor if machine else "") or "3.12"
        pattern = rows["python_slim"]["pattern"]
        why = "no CUDA in this plan: torch's wheels carry what they need"
        if plan.accelerator == "rocm":
            why = ("ROCm torch wheels carry the ROCm runtime; the host needs the amdgpu driver and "
                   "docker run --device=/dev/kfd --device=/dev/dri --group-add video")
        return BaseImage(pattern.format(python=python.rstrip("t")), "python", why,
                         rows["python_slim"]["source"])
    driver, driver_cuda = _driver_and_cuda(machine)

    def accepted(image_cuda: str) -> bool:
        return driver_cuda is None or _older_or_equal(image_cuda, driver_cuda)

    if torch is not None and names <= set(_FAMILY):
        for row in rows["pytorch"]:
            if row["torch"] == torch.version and row["cuda"] == cuda and accepted(row["cuda"]):
                return BaseImage(row["image"], "pytorch",
                                 f"PyTorch's own image with torch {torch.version} for CUDA {cuda}",
                                 row["source"], requires_cuda=cuda, torch_preinstalled=True)
    # A CUDA runtime image no newer than the wheel's CUDA (the wheel brings its own CUDA libraries)
    # and no newer than the driver, or the container runtime refuses to start it.
    cuda_rows = sorted(rows["cuda_runtime"], key=lambda r: version_tuple(r["cuda"]))
    fits = [r for r in cuda_rows if _older_or_equal(r["cuda"], cuda) and accepted(r["cuda"])]
    if fits:
        row = fits[-1]
        why = f"NVIDIA's CUDA {row['cuda']} runtime image for a {plan.variant} wheel"
        if driver_cuda is not None:
            why += f"; the driver (CUDA ≤ {driver_cuda}) accepts it"
        notes: Tuple[str, ...] = ()
        newest = [r for r in cuda_rows if _older_or_equal(r["cuda"], cuda)][-1]
        if newest is not row:
            notes = (f"The wheel's CUDA {cuda} runs on this driver through NVIDIA's minor-version "
                     f"compatibility; its libraries come with the wheel, not the image.",
                     *require_check_lines(newest["image"], newest["cuda"], driver_cuda, driver,
                                          row["image"]))
        return BaseImage(row["image"], "cuda", why, row["source"], requires_cuda=row["cuda"],
                         notes=notes)
    row = cuda_rows[0]
    problems = tuple(require_check_lines(row["image"], row["cuda"], driver_cuda, driver, None))
    return BaseImage(row["image"], "cuda", f"the oldest CUDA runtime image torchsmith knows "
                     f"(CUDA {row['cuda']})", row["source"], requires_cuda=row["cuda"],
                     problems=problems)


def _driver_and_cuda(machine: Optional[Machine]) -> Tuple[Optional[str], Optional[str]]:
    """The driver and the newest CUDA it supports; from ``--driver`` alone by plan's own rule."""
    nvidia = machine.nvidia if machine is not None else None
    if nvidia is None or machine is None:
        return None, None
    from torchsmith.kb import load_kb  # H3: the kb passed in
    from torchsmith.plan.hostview import driver_max_cuda

    return nvidia.driver_version, driver_max_cuda(machine, load_kb())


def _jetson_image(plan: Plan, machine: Optional[Machine], rows: Dict[str, Any]) -> BaseImage:
    l4t = machine.jetson.l4t if machine is not None and machine.jetson is not None else None
    if not l4t:
        raise KnowledgeBaseError("a Jetson plan needs the L4T release to pick an image",
                                 code="jetson-l4t-unknown", hint="pass --jetson L4T, e.g. 35.2.1")
    torch = plan.package("torch")
    names = {p.name for p in plan.packages}
    for row in rows["l4t_pytorch"]:
        inside = dict(row.get("packages") or {"torch": row["torch"]})
        if (row["l4t"] == l4t and torch is not None and names & set(_FAMILY) <= set(inside)
                and torch.version.startswith(row["torch"] + ".")):
            listed = ", ".join(f"{k} {v}" for k, v in inside.items())
            notes = (f"The image brings {listed}" + (" (versions as NGC lists them; not verified "
                     "by torchsmith)" if row.get("packages_uncertain") else "") + ".",)
            return BaseImage(row["image"], "l4t-pytorch",
                             f"NVIDIA's L4T PyTorch image for L4T {l4t} (torch {row['torch']})",
                             row["source"], torch_preinstalled=True, notes=notes,
                             preinstalled=tuple(inside))
    same_major = [r for r in rows["l4t_jetpack"]
                  if version_tuple(r["l4t"])[:1] == version_tuple(l4t)[:1]
                  and _older_or_equal(r["l4t"], l4t)]
    if not same_major:
        raise KnowledgeBaseError(f"torchsmith knows no L4T container image for L4T {l4t}",
                                 code="jetson-image-unknown",
                                 hint="use NVIDIA's NGC catalog (l4t-jetpack) for this release")
    row = max(same_major, key=lambda r: version_tuple(r["l4t"]))
    return BaseImage(row["image"], "l4t-jetpack",
                     f"NVIDIA's L4T JetPack image r{row['l4t']} for this L4T {l4t} "
                     "(containers must match the host's L4T major release)", row["source"])


def _comment(lines: List[str]) -> List[str]:
    return [f"# {line}" if line else "#" for line in lines]


def render_dockerfile(plan: Plan, machine: Optional[Machine] = None) -> str:
    require_ok(plan, "dockerfile")
    data = _containers()
    base = choose_base_image(plan, machine, data)
    out = header_lines(plan, machine, "Dockerfile for this plan")
    out.append(f"# Base image: {base.why}.")
    out.append(f"#   source: {data['sources'][base.source]}")
    if base.requires_cuda:
        out.extend(_comment([
            f"nvidia-container-runtime starts it only on hosts whose driver supports CUDA "
            f"{base.requires_cuda} or newer (NVIDIA_REQUIRE_CUDA); otherwise: 'unsatisfied "
            f"condition: cuda>={base.requires_cuda}'.",
        ]))
    if base.problems:
        out.append("# warning: this host's driver will fail that check.")
        out.extend(_comment(list(base.problems)))
    out.extend(_comment(list(base.notes)))
    if base.kind != "python":
        out.append("# Run with: docker run --gpus all IMAGE" if base.kind in ("cuda", "pytorch")
                   else "# Run with: docker run --runtime nvidia IMAGE")
    out.append(f"FROM {base.image}")
    out.append("")
    if base.kind == "pytorch":
        out.extend(_preinstalled_steps(plan, base))
    elif base.kind == "l4t-pytorch":
        out.extend(_l4t_pytorch_steps(plan, base))
    elif base.kind == "l4t-jetpack":
        out.extend(_jetpack_steps(plan, machine))
    elif base.kind == "python":
        out.append(f"RUN python -m venv {_VENV}")
        out.append(f'ENV PATH="{_VENV}/bin:$PATH"')
        prefix = ["python", "-m", "pip", "install", "--no-cache-dir"]
        out.extend(f"RUN {shell_join(argv)}" for argv in install_argvs(plan, "pip", prefix))
    else:
        uv = data["uv_image"]["image"]
        python = (plan.python or "3.12").rstrip("t")
        out.append("# uv installs the plan's Python; the CUDA image has none of its own.")
        out.append(f"COPY --from={uv} /uv /uvx /bin/")
        out.append(f"RUN uv venv --python {python} {_VENV}")
        out.append(f'ENV PATH="{_VENV}/bin:$PATH" VIRTUAL_ENV={_VENV}')
        prefix = ["uv", "pip", "install", "--no-cache", "--python", f"{_VENV}/bin/python"]
        out.extend(f"RUN {shell_join(argv)}" for argv in install_argvs(plan, "uv", prefix))
    env = [f"{k}={_env_value(v)}" for k, v in plan.environment]
    if env:
        out.append("ENV " + " ".join(env))
    out.append('CMD ["python", "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"]')
    return "\n".join(out) + "\n"


def _env_value(value: str) -> str:
    return value if re.match(r"^[A-Za-z0-9_.:/-]+$", value) else json.dumps(value)


def _preinstalled_steps(plan: Plan, base: BaseImage) -> List[str]:
    torch = plan.package("torch")
    version = torch.version if torch else ""
    lines = [f"# torch {version} comes with the image; the rest is pinned to match it."]
    others = [p for p in plan.packages if p.name != "torch"]
    if not others:
        return lines
    # torch stays in the pins, so pip keeps the image's torch instead of swapping it.
    pip = "pip3" if base.kind == "l4t-pytorch" else "pip"
    prefix = [pip, "install", "--no-cache-dir"]
    lines.extend(f"RUN {shell_join(argv)}" for argv in install_argvs(plan, "pip", prefix))
    return lines


def _l4t_pytorch_steps(plan: Plan, base: BaseImage) -> List[str]:
    kept = ", ".join(base.preinstalled)
    lines = [f"# {kept} come with the image; nothing here replaces them."]
    others = tuple(p for p in plan.packages if p.name not in base.preinstalled)
    if others:
        rest = dataclasses.replace(plan, packages=others)
        prefix = ["pip3", "install", "--no-cache-dir"]
        lines.extend(f"RUN {shell_join(argv)}" for argv in install_argvs(rest, "pip", prefix))
    return lines


def _jetpack_steps(plan: Plan, machine: Optional[Machine]) -> List[str]:
    src = sources(plan)
    lines = [
        "# The L4T JetPack image has CUDA and cuDNN for this L4T; torch comes from NVIDIA's wheel.",
        "# hadolint ignore=DL3008",
        "RUN apt-get update && apt-get install -y --no-install-recommends python3-pip libopenblas0 "
        "&& rm -rf /var/lib/apt/lists/*",
    ]
    prefix = ["python3", "-m", "pip", "install", "--no-cache-dir"]
    numpy = formats_data()["jetson_numpy"]
    torch = plan.package("torch")
    commands = [shell_join(argv) for argv in install_argvs(plan, "pip", prefix)]
    if torch and torch.version and version_tuple(torch.version) < version_tuple(numpy["before_torch"]):
        lines.append(f"# NumPy 1.x first: {numpy['why']}.")
        commands[0] = f"{shell_join([*prefix, numpy['requirement']])} && {commands[0]}"
    lines.extend(f"RUN {command}" for command in commands)
    for pin in src.source_builds:
        lines.extend(_source_build_steps(pin.name, pin.version, arch_list(machine)))
    return lines


def _source_build_steps(name: str, version: str, archs: List[str]) -> List[str]:
    """Build a torch companion (torchvision) against the image's torch; no GPU at build time."""
    build = formats_data()["jetson_torchvision_build"]
    folder = f"/tmp/{name}"
    env = [f"BUILD_VERSION={version}", "FORCE_CUDA=1"]  # FORCE_CUDA: docker build sees no GPU
    if archs:
        env.append(f"TORCH_CUDA_ARCH_LIST={shell_join([';'.join(archs)])}")
    return [
        f"# {name} {version}: no wheel for this JetPack, built here from its release tag.",
        *(f"#   see {url}" for url in source_urls("jetson_torchvision_build")),
        "# hadolint ignore=DL3008",
        "RUN apt-get update && apt-get install -y --no-install-recommends git build-essential "
        + " ".join(build["apt"]) + " && rm -rf /var/lib/apt/lists/*",
        f"RUN git clone --depth 1 --branch v{version} {build['repository']} {folder} && "
        f"{' '.join(env)} python3 -m pip install --no-cache-dir --no-build-isolation {folder} "
        f"&& rm -rf {folder}",
    ]


# --- LibTorch ---------------------------------------------------------------------------

def arch_list(machine: Optional[Machine]) -> List[str]:
    """``["8.0", "8.6"]``: the compute capabilities of the host's GPUs, oldest first."""
    if machine is None:
        return []
    ccs: Set[str] = set()
    if machine.nvidia is not None:
        ccs.update(g.compute_capability for g in machine.nvidia.visible_gpus if g.compute_capability)
    if machine.jetson is not None and machine.jetson.compute_capability:
        ccs.add(machine.jetson.compute_capability)
    return sorted(ccs, key=version_tuple)


def render_libtorch(plan: Plan, machine: Optional[Machine] = None) -> str:
    require_ok(plan, "libtorch")
    torch = plan.package("torch")
    label = f"torch {torch.version}{torch.local_version or ''}" if torch else "torch"
    archs = arch_list(machine)
    out = header_lines(plan, machine, f"CMake for a C++ program against {label}")
    out.extend([
        "# LibTorch is the C++ half of the planned wheel: install the plan, then configure with",
        '#   cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$(python -c \'import torch;'
        'print(torch.utils.cmake_prefix_path)\')"',
        "# TorchConfig.cmake sets the C++ ABI (_GLIBCXX_USE_CXX11_ABI) the wheel was built with;",
        "# do not set it yourself, or linking fails with undefined c10:: symbols.",
        "cmake_minimum_required(VERSION 3.18)",
        "project(torch_app LANGUAGES CXX)",
        "",
        "set(CMAKE_CXX_STANDARD 17)  # torch's headers need C++17",
        "set(CMAKE_CXX_STANDARD_REQUIRED ON)",
    ])
    if archs and plan.accelerator in ("cuda", "jetson"):
        out.append(f'set(TORCH_CUDA_ARCH_LIST "{";".join(archs)}" CACHE STRING '
                   '"GPUs this build targets (this host\'s)")')
    out.extend([
        "find_package(Torch REQUIRED)",
        'set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")',
        "",
        "add_executable(torch_app main.cpp)",
        'target_link_libraries(torch_app PRIVATE "${TORCH_LIBRARIES}")',
        "# Find libtorch*.so at run time without LD_LIBRARY_PATH.",
        "set_target_properties(torch_app PROPERTIES",
        '  BUILD_RPATH "${TORCH_INSTALL_PREFIX}/lib"',
        '  INSTALL_RPATH "${TORCH_INSTALL_PREFIX}/lib")',
    ])
    return "\n".join(out) + "\n"


RENDERERS: Dict[str, Callable[[Plan, Optional[Machine]], str]] = {
    "dockerfile": render_dockerfile,
    "libtorch": render_libtorch,
}
FILE_NAMES: Dict[str, str] = {"dockerfile": "Dockerfile", "libtorch": "CMakeLists.txt"}
