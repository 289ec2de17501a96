"""Plans for containers and C++: ``dockerfile`` and ``libtorch`` formats (Slurm: render.slurm).

Each renderer is ``render_X(plan, inputs) -> str`` like the others in :mod:`torchsmith.render`;
:data:`RENDERERS` maps format names to them for the format table. The base image is the plan's
(:mod:`torchsmith.plan.images`, chosen against the driver from ``containers.json``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Callable, Dict, List

from torchsmith.compat import variant_cuda
from torchsmith.plan.model import BaseImage, Plan
from torchsmith.render._common import (
    RenderInputs,
    base_image,
    header_lines,
    host_of,
    install_argvs,
    require_ok,
    shell_join,
    source_urls,
    sources,
)
from torchsmith.versions import version_tuple

__all__ = ["FILE_NAMES", "RENDERERS", "render_dockerfile", "render_libtorch"]

_VENV = "/opt/venv"


def _comment(lines: List[str]) -> List[str]:
    return [f"# {line}" if line else "#" for line in lines]


def _without_image_builds(plan: Plan, base: BaseImage) -> Plan:
    """The image ships some packages (l4t-pytorch: torchvision): the plan's warning to build them
    from source does not apply to this file."""
    shipped = [name for name in base.preinstalled if name != "torch"]
    kept = tuple(w for w in plan.warnings
                 if not any(w.startswith(f"{name} ") and "from source" in w for name in shipped))
    return plan if kept == plan.warnings else dataclasses.replace(plan, warnings=kept)


def _header(plan: Plan, base: BaseImage) -> List[str]:
    out = header_lines(_without_image_builds(plan, base), "Dockerfile for this plan")
    out.append(f"# Base image: {base.why}.")
    out.append(f"#   source: {base.source_url}")
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
    return out


def _install_steps(plan: Plan, base: BaseImage, formats: Dict[str, Any]) -> List[str]:
    if base.kind == "pytorch":
        return _preinstalled_steps(plan, base)
    if base.kind == "l4t-pytorch":
        return _l4t_pytorch_steps(plan, base)
    if base.kind == "l4t-jetpack":
        return _jetpack_steps(plan, formats)
    if base.kind == "python":
        prefix = ["python", "-m", "pip", "install", "--no-cache-dir"]
        return [f"RUN python -m venv {_VENV}", f'ENV PATH="{_VENV}/bin:$PATH"',
                *(f"RUN {shell_join(argv)}" for argv in install_argvs(plan, "pip", prefix))]
    python = (plan.python or "3.12").rstrip("t")
    prefix = ["uv", "pip", "install", "--no-cache", "--python", f"{_VENV}/bin/python"]
    return ["# uv installs the plan's Python; the CUDA image has none of its own.",
            f"COPY --from={base.uv_image} /uv /uvx /bin/",
            f"RUN uv venv --python {python} {_VENV}",
            f'ENV PATH="{_VENV}/bin:$PATH" VIRTUAL_ENV={_VENV}',
            *(f"RUN {shell_join(argv)}" for argv in install_argvs(plan, "uv", prefix))]


def render_dockerfile(plan: Plan, inputs: RenderInputs) -> str:
    base = base_image(plan, "dockerfile")
    out = _header(plan, base)
    out.append(f"FROM {base.image}")
    out.append("")
    out.extend(_install_steps(plan, base, inputs.formats))
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
    if not (others or plan.unplanned):
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
    if others or plan.unplanned:
        rest = dataclasses.replace(plan, packages=others)
        prefix = ["pip3", "install", "--no-cache-dir"]
        lines.extend(f"RUN {shell_join(argv)}" for argv in install_argvs(rest, "pip", prefix))
    return lines


def _jetpack_steps(plan: Plan, formats: Dict[str, Any]) -> List[str]:
    src = sources(plan)
    lines = [
        "# The L4T JetPack image has CUDA and cuDNN for this L4T; torch comes from NVIDIA's wheel.",
        "# hadolint ignore=DL3008",
        "RUN apt-get update && apt-get install -y --no-install-recommends python3-pip libopenblas0 "
        "&& rm -rf /var/lib/apt/lists/*",
    ]
    prefix = ["python3", "-m", "pip", "install", "--no-cache-dir"]
    numpy = formats["jetson_numpy"]
    torch = plan.package("torch")
    commands = [shell_join(argv) for argv in install_argvs(plan, "pip", prefix)]
    if torch and torch.version and version_tuple(torch.version) < version_tuple(numpy["before_torch"]):
        lines.append(f"# NumPy 1.x first: {numpy['why']}.")
        commands[0] = f"{shell_join([*prefix, numpy['requirement']])} && {commands[0]}"
    lines.extend(f"RUN {command}" for command in commands)
    for pin in src.source_builds:
        lines.extend(_source_build_steps(pin.name, pin.version, host_of(plan).arch_list, formats))
    return lines


def _source_build_steps(name: str, version: str, archs: List[str], formats: Dict[str, Any]) -> List[str]:
    """Build a torch companion (torchvision) against the image's torch; no GPU at build time."""
    build = formats["jetson_torchvision_build"]
    folder = f"/tmp/{name}"
    env = [f"BUILD_VERSION={version}", "FORCE_CUDA=1"]  # FORCE_CUDA: docker build sees no GPU
    if archs:
        env.append(f"TORCH_CUDA_ARCH_LIST={shell_join([';'.join(archs)])}")
    return [
        f"# {name} {version}: no wheel for this JetPack, built here from its release tag.",
        *(f"#   see {url}" for url in source_urls(formats, "jetson_torchvision_build")),
        "# hadolint ignore=DL3008",
        "RUN apt-get update && apt-get install -y --no-install-recommends git build-essential "
        + " ".join(build["apt"]) + " && rm -rf /var/lib/apt/lists/*",
        f"RUN git clone --depth 1 --branch v{version} {build['repository']} {folder} && "
        f"{' '.join(env)} python3 -m pip install --no-cache-dir --no-build-isolation {folder} "
        f"&& rm -rf {folder}",
    ]


# --- LibTorch ---------------------------------------------------------------------------

def render_libtorch(plan: Plan, inputs: RenderInputs) -> str:
    require_ok(plan, "libtorch")
    torch = plan.package("torch")
    label = f"torch {torch.version}{torch.local_version or ''}" if torch else "torch"
    archs = host_of(plan).arch_list
    out = header_lines(plan, f"CMake for a C++ program against {label}")
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
    out.extend(_cuda_toolkit_check(plan, label))
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


def _cuda_toolkit_check(plan: Plan, label: str) -> List[str]:
    """A CUDA wheel's TorchConfig.cmake calls find_package(CUDAToolkit): say which toolkit it needs
    before that fails with CMake's own message, which names neither the major nor the way out."""
    cuda = variant_cuda(plan.variant) if plan.accelerator == "cuda" else None
    if cuda is None:
        return []
    major = cuda.split(".")[0]
    way_out = (f"pass -DCUDAToolkit_ROOT=<a CUDA {major}.x toolkit, e.g. /usr/local/cuda-{cuda}> or load "
               f"the site's CUDA {major} module (module load cuda/{cuda})")
    return [
        f"# {label} is a CUDA {cuda} build: find_package(Torch) needs a CUDA {major}.x toolkit (nvcc,",
        f"# cudart headers); {way_out}.",
        "find_package(CUDAToolkit QUIET)",
        "if(NOT CUDAToolkit_FOUND)",
        f'  message(FATAL_ERROR "{label} is a CUDA {cuda} build and no CUDA toolkit was found: {way_out}")',
        f"elseif(NOT CUDAToolkit_VERSION_MAJOR EQUAL {major})",
        f'  message(FATAL_ERROR "{label} is a CUDA {cuda} build but CMake found CUDA '
        f'${{CUDAToolkit_VERSION}} in ${{CUDAToolkit_BIN_DIR}}: {way_out}")',
        "endif()",
    ]


RENDERERS: Dict[str, Callable[[Plan, RenderInputs], str]] = {
    "dockerfile": render_dockerfile,
    "libtorch": render_libtorch,
}
FILE_NAMES: Dict[str, str] = {"dockerfile": "Dockerfile", "libtorch": "CMakeLists.txt"}
