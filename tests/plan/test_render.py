"""Every renderer's output parsed back with real parsers: requirement lines with packaging,
TOML with tomllib/tomli, YAML with PyYAML, shell with shlex and ``bash -n``."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.version import Version
from tests.plan.plan_hosts import host
from tests.support.render import packaged_kb, render, render_commands

from torchsmith.errors import TorchsmithError
from torchsmith.machine import Machine, OsInfo, PythonInfo
from torchsmith.plan.model import PackagePin, Plan, Rejection
from torchsmith.render import (
    FORMATS,
    available_formats,
    install_argvs,
    load_format_module,
    register_format,
    requirement_files,
)


def formats_data() -> Dict[str, Any]:
    return packaged_kb().document("formats")


if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

CU126 = "https://download.pytorch.org/whl/cu126"
MMCV_LINKS = "https://download.openmmlab.com/mmcv/dist/cu126/torch2.7/index.html"
JP51_WHEEL = ("https://developer.download.nvidia.com/compute/redist/jp/v51/pytorch/"
              "torch-2.0.0a0+8aa34602.nv23.03-cp38-cp38-linux_aarch64.whl")


def cuda_plan(*extra: PackagePin, index: str = CU126) -> Plan:
    return Plan(
        status="ok",
        packages=(
            PackagePin("torch", "2.7.1", "cu126", index, local_version="+cu126"),
            PackagePin("torchvision", "0.22.1", "cu126", index, local_version="+cu126"),
            PackagePin("torchaudio", "2.7.1", "cu126", index, local_version="+cu126"),
            *extra,
        ),
        platform="linux-x86_64", python="3.11", accelerator="cuda", variant="cu126",
        kb_version="2026.11.22", warnings=("cu126 runs through minor-version compatibility",),
    )


def cpu_plan(platform: str = "linux-x86_64") -> Plan:
    index = "https://download.pytorch.org/whl/cpu"
    return Plan(status="ok", platform=platform, python="3.12", accelerator="cpu", variant="cpu",
                packages=(PackagePin("torch", "2.9.1", "cpu", index, local_version="+cpu"),),
                kb_version="2026.11.22")


def jetson_plan(vision_source: bool = True) -> Plan:
    vision_wheel = JP51_WHEEL.replace("torch-", "torchvision-")
    vision = (PackagePin("torchvision", "0.15.1", "source") if vision_source
              else PackagePin("torchvision", "0.15.1", "jetson-jp51", wheel_url=vision_wheel))
    return Plan(
        status="ok", platform="linux-aarch64", python="3.8", accelerator="jetson", variant="jetson-jp51",
        packages=(PackagePin("torch", "2.0.0a0+8aa34602.nv23.03", "jetson-jp51", wheel_url=JP51_WHEEL),
                  vision),
        system_prerequisites=("sudo apt-get install -y python3-pip libopenblas-dev",),
        kb_version="2026.11.22",
    )


def rocm_plan() -> Plan:
    index = "https://download.pytorch.org/whl/rocm6.2"
    return Plan(status="ok", platform="linux-x86_64", python="3.10", accelerator="rocm", variant="rocm6.2",
                packages=(PackagePin("torch", "2.5.1", "rocm6.2", index, local_version="+rocm6.2"),),
                environment=(("HSA_OVERRIDE_GFX_VERSION", "10.3.0"),), kb_version="2026.11.22")


def machine(platform: str = "linux-x86_64") -> Machine:
    system, arch = platform.split("-")
    return Machine(os=OsInfo(system="linux" if system == "wsl" else system, arch=arch, wsl=system == "wsl"),
                   python=PythonInfo(version="3.11.9", executable="/opt/py/bin/python3.11"))


def commands_in(text: str) -> List[List[str]]:
    return [shlex.split(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]


def requirements_of(argv: List[str]) -> List[Requirement]:
    """The requirement arguments of an install argv (options and their values skipped)."""
    out, skip = [], False
    for arg in argv[argv.index("install") + 1:]:
        if skip:
            skip = False
        elif arg in ("--index-url", "--default-index", "--index", "--find-links", "--python"):
            skip = True
        elif not arg.startswith("-"):
            out.append(Requirement(arg))
    return out


def index_of(argv: List[str]) -> str:
    """The one index an install step may use (pip --index-url, uv --default-index); "" = default."""
    for flag in ("--index-url", "--default-index"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    return ""


# ---- pip / uv ----

@pytest.mark.parametrize("fmt", ["pip", "uv"])
def test_torch_family_only_from_the_torch_index_and_never_an_extra_index(fmt: str) -> None:
    plan = cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS), PackagePin("ftfy", "6.2.0"))
    text = render(plan, fmt, machine())
    assert "--extra-index-url" not in text
    steps = commands_in(text)
    assert steps[0][:3] == (["uv", "pip", "install"] if fmt == "uv" else ["python", "-m", "pip"])
    first = steps[0]
    assert index_of(first) == CU126
    assert {str(r) for r in requirements_of(first)} == {
        "torch==2.7.1+cu126", "torchvision==0.22.1+cu126", "torchaudio==2.7.1+cu126"}
    # Later steps use the configured index and hold torch at the installed build (uv ranks the
    # torch index first with --index: it takes no installed package as a candidate).
    for argv in steps[1:]:
        assert index_of(argv) == ""
        assert (argv[argv.index("--index") + 1] == CU126) if fmt == "uv" else "--index" not in argv
        reqs = {r.name: r for r in requirements_of(argv)}
        assert str(reqs["torch"].specifier) == "==2.7.1+cu126"
    names = [r.name for argv in steps[1:] for r in requirements_of(argv) if r.name not in
             ("torch", "torchvision", "torchaudio")]
    assert names == ["mmcv", "ftfy"]
    mmcv_step = next(a for a in steps if any(r.name == "mmcv" for r in requirements_of(a)))
    assert mmcv_step[mmcv_step.index("--find-links") + 1] == MMCV_LINKS


def test_pip_header_names_torchsmith_kb_and_host_platform() -> None:
    text = render(cuda_plan(), "pip", machine("wsl-x86_64"))
    head = text.splitlines()[:3]
    assert any("torchsmith" in line and "kb 2026.11.22" in line and "wsl-x86_64" in line for line in head)
    assert "# warning: cu126 runs through minor-version compatibility" in text
    assert "/opt/py/bin/python3.11" in text


def test_requirements_are_shell_quoted() -> None:
    plan = cuda_plan(PackagePin("weird", "1.0", local_version="+a;b"))
    # A version with a shell metacharacter stays one argument.
    argvs = commands_in(render(plan, "pip"))
    assert "weird==1.0+a;b" in argvs[-1]


def test_render_commands_match_install_argvs_and_a_custom_prefix() -> None:
    plan = cuda_plan(PackagePin("ftfy", "6.2.0"))
    commands = render_commands(plan)
    assert set(commands) == {"pip", "uv", "conda", "pixi"}
    assert [shlex.split(c) for c in commands["pip"]] == install_argvs(plan, "pip")
    assert [shlex.split(c) for c in commands["uv"]] == install_argvs(plan, "uv")
    custom = install_argvs(plan, prefix=["/v/bin/python", "-m", "pip", "install"])
    assert [a[4:] for a in custom] == [a[4:] for a in install_argvs(plan)]
    assert all(a[0] == "/v/bin/python" for a in custom)


def test_environment_variables_are_exported() -> None:
    text = render(rocm_plan(), "pip")
    assert "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in text.splitlines()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("fmt,plan", [("pip", cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS))),
                                      ("uv", rocm_plan()), ("jetson", jetson_plan())])
def test_shell_output_is_valid_bash(fmt: str, plan: Plan) -> None:
    result = subprocess.run(["bash", "-n"], check=False, input=render(plan, fmt), text=True,
                            capture_output=True)
    assert result.returncode == 0, result.stderr


# ---- requirements ----

def parse_requirements(text: str) -> Tuple[List[str], List[Requirement]]:
    options, reqs = [], []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("--"):
            options.append(line)
        else:
            reqs.append(Requirement(line))
    return options, reqs


def test_requirements_single_index_is_one_file_with_index_url_on_top() -> None:
    files = requirement_files(cuda_plan())
    assert list(files) == ["requirements.txt"]
    options, reqs = parse_requirements(files["requirements.txt"])
    assert options == [f"--index-url {CU126}"]
    assert [str(r) for r in reqs] == ["torch==2.7.1+cu126", "torchvision==0.22.1+cu126",
                                      "torchaudio==2.7.1+cu126"]
    assert render(cuda_plan(), "requirements") == files["requirements.txt"]


def test_requirements_mixed_sources_split_into_files_and_never_mix_an_index() -> None:
    plan = cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS), PackagePin("ftfy", "6.2.0"))
    files = requirement_files(plan)
    assert list(files) == ["requirements-pytorch-cu126.txt", "requirements.txt"]
    torch_opts, torch_reqs = parse_requirements(files["requirements-pytorch-cu126.txt"])
    assert torch_opts == [f"--index-url {CU126}"]
    assert {r.name for r in torch_reqs} == {"torch", "torchvision", "torchaudio"}
    rest_opts, rest_reqs = parse_requirements(files["requirements.txt"])
    assert rest_opts == [f"--find-links {MMCV_LINKS}"]  # no --index-url: the user's default index
    by_name = {r.name: str(r.specifier) for r in rest_reqs}
    assert by_name == {"torch": "==2.7.1+cu126", "torchvision": "==0.22.1+cu126",
                       "torchaudio": "==2.7.1+cu126", "mmcv": "==2.2.0", "ftfy": "==6.2.0"}
    combined = render(plan, "requirements")
    assert "# ---- requirements-pytorch-cu126.txt ----" in combined
    assert "python -m pip install -r requirements-pytorch-cu126.txt" in combined
    assert "--extra-index-url" not in combined
    # The combined text still parses line by line.
    parse_requirements(combined)


def test_requirements_name_what_must_be_built_from_source() -> None:
    text = render(jetson_plan(), "requirements")
    options, reqs = parse_requirements(text)
    assert options == [] and [r.name for r in reqs] == ["torch"]
    assert "# torchvision 0.15.1: no wheel for this host; build it from source" in text


def test_requirements_with_a_wheel_url_use_a_direct_reference() -> None:
    options, reqs = parse_requirements(render(jetson_plan(vision_source=False), "requirements"))
    assert options == []
    assert [r.name for r in reqs] == ["torch", "torchvision"]
    assert reqs[0].url == JP51_WHEEL


# ---- pyproject (uv project) ----

def test_pyproject_binds_torch_to_an_explicit_index() -> None:
    plan = cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS), PackagePin("ftfy", "6.2.0"))
    doc = tomllib.loads(render(plan, "pyproject", machine()))
    project = doc["project"]
    assert project["requires-python"] == "==3.11.*"
    assert [Requirement(d).name for d in project["dependencies"]] == [
        "torch", "torchvision", "torchaudio", "mmcv", "ftfy"]
    indexes = {i["name"]: i for i in doc["tool"]["uv"]["index"]}
    assert indexes["pytorch-cu126"] == {"name": "pytorch-cu126", "url": CU126, "explicit": True}
    assert indexes["mmcv-links"]["format"] == "flat" and indexes["mmcv-links"]["explicit"] is True
    sources = doc["tool"]["uv"]["sources"]
    assert sources == {"torch": {"index": "pytorch-cu126"}, "torchvision": {"index": "pytorch-cu126"},
                       "torchaudio": {"index": "pytorch-cu126"}, "mmcv": {"index": "mmcv-links"}}
    assert doc["tool"]["uv"]["environments"] == ["sys_platform == 'linux' and platform_machine == 'x86_64'"]


def test_pyproject_requires_python_matches_the_plan_python_even_free_threaded() -> None:
    plan = Plan(**{**cpu_plan().__dict__, "python": "3.13t"})
    doc = tomllib.loads(render(plan, "pyproject"))
    from packaging.specifiers import SpecifierSet
    spec = SpecifierSet(doc["project"]["requires-python"])
    assert Version("3.13.1") in spec and Version("3.12.9") not in spec and Version("3.14.0") not in spec


def test_pyproject_index_names_stay_unique() -> None:
    other = "https://mirror.example/whl/cu126"
    plan = cuda_plan(PackagePin("xformers", "0.0.31", "cu126", other, local_version="+cu126"))
    doc = tomllib.loads(render(plan, "pyproject"))
    names = [i["name"] for i in doc["tool"]["uv"]["index"]]
    assert names == ["pytorch-cu126", "pytorch-cu126-2"]
    assert doc["tool"]["uv"]["sources"]["xformers"] == {"index": "pytorch-cu126-2"}


# ---- conda ----

def test_conda_environment_uses_conda_forge_pytorch_gpu_and_cuda_version() -> None:
    plan = cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS), PackagePin("ftfy", "6.2.0"))
    text = render(plan, "conda", machine())
    env = yaml.safe_load(text)
    assert env["channels"] == ["conda-forge", "nodefaults"]
    deps = env["dependencies"]
    assert "python=3.11" in deps and "pytorch-gpu=2.7.1" in deps and "cuda-version=12.6" in deps
    assert "torchvision=0.22.1" in deps and "torchaudio=2.7.1" in deps
    assert not any(isinstance(d, str) and d.startswith("pytorch=") for d in deps)
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    # mmcv's wheels are built against PyPI's torch (another C++ ABI): conda-forge's own mmcv instead.
    assert "mmcv" in deps and not any("openmmlab" in r or "mmcv" in r for r in pip)
    assert [str(Requirement(r)) for r in pip] == ["torch==2.7.1", "ftfy==6.2.0"]
    assert "CONDA_OVERRIDE_CUDA=12.6" in text
    assert "pytorch" not in env["channels"]  # the pytorch channel ended after 2.5
    assert "Derived from the pip plan" in text


def test_conda_prefers_the_resolvers_conda_forge_facts() -> None:
    plan = Plan(**{**cuda_plan().__dict__,
                   "conda": {"channel": "conda-forge", "pytorch": "2.7.0", "pytorch-gpu": "2.7.0",
                             "cuda-version": "12.8"}})
    env = yaml.safe_load(render(plan, "conda"))
    # conda-forge built 2.7.0 for CUDA 12.6 only (its feedstock): the resolver's 12.8 is corrected.
    assert "pytorch-gpu=2.7.0" in env["dependencies"] and "cuda-version=12.6" in env["dependencies"]
    assert "Derived" not in render(plan, "conda")


def test_conda_shows_the_resolvers_notes_and_refuses_an_unavailable_build() -> None:
    facts = {"pytorch-gpu": "2.7.1", "cuda-version": "12.6",
             "notes": ["conda-forge 2.7 builds: CUDA 12.6, 12.8"]}
    plan = Plan(**{**cuda_plan().__dict__, "conda": facts})
    assert "# conda-forge 2.7 builds: CUDA 12.6, 12.8" in render(plan, "conda").splitlines()
    assert "# conda-forge 2.7 builds: CUDA 12.6, 12.8" in render(plan, "pixi").splitlines()
    gone = Plan(**{**cuda_plan().__dict__, "conda": {"available": False, "reason": "no 2.7 build for cu126"}})
    with pytest.raises(TorchsmithError) as info:
        render(gone, "conda")
    assert info.value.code == "format-not-applicable" and "no 2.7 build for cu126" in info.value.message
    assert render_commands(gone)["conda"] == [] and render_commands(gone)["pixi"] == []


def test_conda_notes_what_the_data_says_about_conda_forge_builds() -> None:
    from types import SimpleNamespace

    from tests.support.render import stack as conda_stack

    from torchsmith.kb.model import CondaBuild, Source
    from torchsmith.plan.conda_env import kb_build_notes

    kb = SimpleNamespace(
        conda_builds=(CondaBuild("pytorch", "2.7", ("12.6", "12.8"), ("linux-x86_64",), ("CF",),
                                 uncertain=True),),
        sources={"CF": Source("CF", "https://example.org/conda-forge/pytorch", "builds", "2026-11-22")})
    fits = kb_build_notes(conda_stack(cuda_plan()), kb)
    assert fits == ["conda-forge's pytorch 2.7 CUDA builds: CUDA 12.6, 12.8; cuda-version=12.6 admits 12.6 "
                    "(source: https://example.org/conda-forge/pytorch; unverified)."]
    old = Plan(**{**cuda_plan().__dict__, "conda": {"pytorch-gpu": "2.7.1", "cuda-version": "12.4"}})
    # No 12.4 build of 2.7.1 (conda-forge's feedstock): the nearest 12.x build instead.
    assert conda_stack(old).cuda == "12.6"
    assert "cuda-version=12.6 admits 12.6" in kb_build_notes(conda_stack(old), kb)[0]
    newer = Plan(**{**cuda_plan().__dict__, "conda": {"pytorch-gpu": "2.99.0", "cuda-version": "12.6"}})
    # A release newer than the packaged data: the newest conda-forge build it knows instead, said so.
    stack = conda_stack(newer)
    assert stack.packages[0][0] == "pytorch-gpu" and stack.packages[0][1] != "2.99.0"
    assert any("knows no conda-forge build of pytorch 2.99.0" in n for n in stack.notes)
    assert kb_build_notes(stack, kb)[0].startswith("torchsmith's data lists no conda-forge pytorch ")
    assert kb_build_notes(conda_stack(cpu_plan()), kb) == [
        "torchsmith's data lists no conda-forge pytorch 2.9 build: check conda-forge has one."]


def test_conda_cpu_plan_asks_for_the_cpu_build_and_macos_plain_pytorch() -> None:
    linux = yaml.safe_load(render(cpu_plan(), "conda"))
    assert "pytorch=2.9.1=cpu*" in linux["dependencies"]
    assert not any("cuda-version" in str(d) for d in linux["dependencies"])
    mac = yaml.safe_load(render(Plan(**{**cpu_plan("macos-arm64").__dict__, "accelerator": "mps"}), "conda"))
    assert "pytorch=2.9.1" in mac["dependencies"]


def test_conda_environment_variables() -> None:
    plan = Plan(**{**cuda_plan().__dict__, "environment": (("CUDA_VISIBLE_DEVICES", "0"),)})
    assert yaml.safe_load(render(plan, "conda"))["variables"] == {"CUDA_VISIBLE_DEVICES": "0"}


@pytest.mark.parametrize("plan", [jetson_plan(), rocm_plan()])
def test_conda_refuses_plans_conda_forge_cannot_serve(plan: Plan) -> None:
    with pytest.raises(TorchsmithError) as info:
        render(plan, "conda")
    assert info.value.code == "format-not-applicable"
    assert render_commands(plan)["conda"] == []


def test_pixi_refuses_jetson_plans() -> None:
    with pytest.raises(TorchsmithError) as info:
        render(jetson_plan(), "pixi")
    assert info.value.code == "format-not-applicable" and "Jetson" in info.value.message
    assert render_commands(jetson_plan())["pixi"] == []


# ---- pixi ----

def test_pixi_declares_cuda_on_the_platform_and_conda_forge() -> None:
    plan = cuda_plan(PackagePin("mmcv", "2.2.0", find_links=MMCV_LINKS), PackagePin("ftfy", "6.2.0"))
    doc = tomllib.loads(render(plan, "pixi", machine()))
    assert doc["workspace"]["channels"] == ["conda-forge"]
    # pixi 0.71: the virtual packages go on the platform; [system-requirements] is deprecated
    assert doc["workspace"]["platforms"] == [{"platform": "linux-64", "cuda": "12"}]
    assert "system-requirements" not in doc
    deps = doc["dependencies"]
    assert deps["pytorch-gpu"] == "==2.7.1" and deps["cuda-version"] == "12.6.*"
    assert deps["python"] == "3.11.*" and deps["torchvision"] == "==0.22.1"
    assert doc["pypi-dependencies"] == {"ftfy": "==6.2.0"}
    assert doc["dependencies"]["mmcv"] == "*" and "pypi-options" not in doc


def test_pixi_platform_carries_the_oldest_gpus_cuda_arch() -> None:
    mixed = host(gpus=["7.0:Tesla V100", "10.0:B200"], driver="580.65.06")
    doc = tomllib.loads(render(cuda_plan(), "pixi", mixed))
    # pixi's own spelling of __cuda with __cuda_arch (pixi v0.71.0 toml/platform.rs; CLI --cuda-arch)
    entry = {"platform": "linux-64", "cuda": {"driver": "12", "arch": "7.0"}}
    assert doc["workspace"]["platforms"] == [entry]
    add = shlex.split(render_commands(cuda_plan(), mixed)["pixi"][0])
    assert add == ["pixi", "workspace", "platform", "add", "linux-64", "--cuda", "12", "--cuda-arch", "7.0"]


def test_pixi_rocm_uses_pypi_dependencies_pinned_to_their_index() -> None:
    doc = tomllib.loads(render(rocm_plan(), "pixi"))
    # the glibc floor of torch 2.5.1's manylinux wheels (manylinux.json), on the platform
    assert "system-requirements" not in doc
    assert doc["workspace"]["platforms"] == [{"platform": "linux-64", "glibc": "2.17"}]
    torch = doc["pypi-dependencies"]["torch"]
    assert torch == {"version": "==2.5.1+rocm6.2", "index": "https://download.pytorch.org/whl/rocm6.2"}
    assert doc["activation"]["env"] == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}


def test_pixi_cpu_build_spec_and_commands() -> None:
    doc = tomllib.loads(render(cpu_plan(), "pixi"))
    assert doc["dependencies"]["pytorch"] == {"version": "==2.9.1", "build": "cpu*"}
    assert render_commands(cpu_plan())["pixi"] == ["pixi add 'pytorch=2.9.1=cpu*'"]
    cuda = render_commands(cuda_plan(PackagePin("ftfy", "6.2.0")))["pixi"]
    assert cuda[0] == "pixi workspace platform add linux-64 --cuda 12"
    assert shlex.split(cuda[1])[:4] == ["pixi", "add", "pytorch-gpu==2.7.1", "cuda-version==12.6"]
    assert cuda[2] == "pixi add --pypi ftfy==6.2.0"


# ---- jetson ----

def test_jetson_steps_in_order_with_source_built_torchvision() -> None:
    text = render(jetson_plan(), "jetson")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    apt = next(i for i, line in enumerate(lines) if "libopenblas-dev" in line)
    wheel = next(i for i, line in enumerate(lines) if JP51_WHEEL in line)
    clone = next(i for i, line in enumerate(lines) if line.startswith("git clone"))
    verify = next(i for i, line in enumerate(lines) if "torch.cuda.is_available()" in line)
    assert apt < wheel < clone < verify
    repository = formats_data()["jetson_torchvision_build"]["repository"]
    assert shlex.split(lines[clone])[-3:] == ["v0.15.1", repository, "torchvision-0.15.1"]
    assert "BUILD_VERSION=0.15.1" in text
    install = shlex.split(lines[wheel])
    assert install[:4] == ["python3", "-m", "pip", "install"] and Requirement(install[4]).url == JP51_WHEEL
    # Never a PyPI torch or torchvision.
    for line in lines:
        argv = shlex.split(line)
        if "pip" in argv and "install" in argv:
            assert all(Requirement(r).url or "==" in r for r in argv[argv.index("install") + 1:]
                       if not r.startswith("-") and Requirement(r).name.startswith("torch"))


def test_jetson_pip_commands_use_python3() -> None:
    assert render_commands(jetson_plan())["pip"] == [f"python3 -m pip install 'torch @ {JP51_WHEEL}'"]


def test_jetson_torchvision_wheel_is_installed_not_built() -> None:
    text = render(jetson_plan(vision_source=False), "jetson")
    assert "git clone" not in text
    assert "torchvision-2.0.0a0" in text


def test_jetson_format_refuses_other_plans() -> None:
    with pytest.raises(TorchsmithError) as info:
        render(cuda_plan(), "jetson")
    assert info.value.code == "format-not-applicable"


def test_jetson_index_pin_without_version_is_unpinned_not_broken() -> None:
    index = "https://pypi.jetson-ai-lab.io/jp6/cu126"
    plan = Plan(status="ok", platform="linux-aarch64", python="3.10", accelerator="jetson",
                variant="jetson-jp62", packages=(PackagePin("torch", "", "jetson-jp62", index),
                                                 PackagePin("torchvision", "", "jetson-jp62", index)))
    steps = [a for a in commands_in(render(plan, "jetson")) if "install" in a and "pip" in a]
    assert steps[0][4:] == ["--index-url", index, "torch", "torchvision"]


# ---- every format: header, no-solution, registry ----

def every_applicable() -> List[Tuple[str, Plan]]:
    out = []
    for fmt in FORMATS:
        plan = jetson_plan() if fmt == "jetson" else cuda_plan(PackagePin("ftfy", "6.2.0"))
        out.append((fmt, plan))
    return out


@pytest.mark.parametrize("fmt,plan", every_applicable())
def test_every_format_starts_with_the_header(fmt: str, plan: Plan) -> None:
    text = render(plan, fmt, machine("linux-aarch64" if fmt == "jetson" else "linux-x86_64"))
    head = "\n".join([line for line in text.splitlines() if not line.startswith("#!")][:2])
    assert "torchsmith" in head and "kb 2026.11.22" in head
    assert ("linux-aarch64" if fmt == "jetson" else "linux-x86_64") in head
    assert "--extra-index-url" not in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_solution_is_a_clear_error_not_an_empty_file(fmt: str) -> None:
    plan = Plan(status="no-solution", rejected=(Rejection("torch 2.9.1 cu128", "sm_61 not compiled",
                                                          "arch-not-compiled"),))
    with pytest.raises(TorchsmithError) as info:
        render(plan, fmt)
    assert info.value.code == "no-solution"
    assert "sm_61 not compiled" in info.value.context[0]
    assert render_commands(plan) == {"pip": [], "uv": [], "conda": [], "pixi": []}


def test_unknown_format_lists_the_formats() -> None:
    with pytest.raises(TorchsmithError) as info:
        render(cuda_plan(), "nope")
    assert info.value.code == "unknown-format"
    assert "pyproject" in (info.value.hint or "")


def test_other_modules_register_formats_without_editing_the_table() -> None:
    def render_echo(plan: Plan, machine: object = None) -> str:
        return f"# echo {plan.variant}\n"

    register_format("echo-test", render_echo)
    assert render(cuda_plan(), "echo-test") == "# echo cu126\n"
    assert "echo-test" in available_formats()
    assert available_formats()[: len(FORMATS)] == FORMATS
    with pytest.raises(ValueError, match="built in"):
        register_format("pip", render_echo)


def test_a_module_with_a_renderers_table_is_registered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fmt_table_test.py").write_text(
        "RENDERERS = {'table-test': lambda plan, machine=None: '# table ' + str(plan.variant) + '\\n',"
        " 'pip': lambda plan, machine=None: 'never replaces a built-in'}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    load_format_module("fmt_table_test")
    assert render(cuda_plan(), "table-test") == "# table cu126\n"
    assert render(cuda_plan(), "pip").startswith("# pip install commands")


def test_corrupted_format_data_is_a_one_line_error(tmp_path: Path) -> None:
    from torchsmith.errors import KnowledgeBaseError
    from torchsmith.kb.documents import read_document

    def load(path: str) -> object:
        return read_document("formats", str(Path(path).parent), None)

    bad = tmp_path / "formats.json"
    bad.write_text('{"sources": {}, "conda": {"sources": ["nowhere"]}, "pixi": {}, '
                   '"jetson_torchvision_build": {}}')
    with pytest.raises(KnowledgeBaseError, match="unknown source id 'nowhere'"):
        load(str(bad))
    bad.write_text("{not json")
    with pytest.raises(KnowledgeBaseError):
        load(str(bad))


def test_format_data_sources_all_have_urls() -> None:
    data = formats_data()
    assert all(s["url"].startswith("https://") for s in data["sources"].values())


# ---- property: index pinning holds for any plan ----

names = st.sampled_from(["torch", "torchvision", "torchaudio", "xformers", "mmcv", "ftfy", "numpy"])
pins = st.builds(
    lambda name, v, where, local: PackagePin(
        name, v,
        index_url=where if where.startswith("https://idx") else None,
        find_links=where if where.startswith("https://links") else None,
        local_version=local),
    names, st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}(\.[0-9])?", fullmatch=True),
    st.sampled_from(["https://idx.example/cu126", "https://idx.example/cpu", "https://links.example/p.html",
                     ""]),
    st.sampled_from([None, "+cu126", "+cpu"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(pins, min_size=1, max_size=6, unique_by=lambda p: p.name))
def test_property_each_pin_installs_only_from_its_own_source(packages: List[PackagePin]) -> None:
    plan = Plan(status="ok", packages=tuple(packages), platform="linux-x86_64", python="3.11",
                accelerator="cuda", variant="cu126")
    argvs = install_argvs(plan)
    assert not any("--extra-index-url" in a for a in argvs)
    installed: Dict[str, str] = {}
    for argv in argvs:
        index = index_of(argv)
        for req in requirements_of(argv):
            pin = plan.package(req.name)
            assert pin is not None
            exact = f"=={pin.version}{pin.local_version or ''}"
            if req.name in installed:
                # Repeated only to hold what its own index installed, exactly.
                assert str(req.specifier) == installed[req.name]
                continue
            assert index == (pin.index_url or "")
            assert str(req.specifier) == exact
            installed[req.name] = exact
    assert set(installed) == {p.name for p in packages}
    # Every format that can express the plan parses back.
    json.dumps(render_commands(plan))
    tomllib.loads(render(plan, "pyproject"))
    parse_requirements(render(plan, "requirements"))


# ---- Windows shells and conda's pip step ----

def test_windows_commands_use_double_quotes_and_powershell_env() -> None:
    index = "https://download.pytorch.org/whl/cu126"
    plan = Plan(status="ok", platform="windows-x86_64", python="3.12", accelerator="cuda", variant="cu126",
                packages=(PackagePin("torch", "2.7.1", "cu126", index, local_version="+cu126"),
                          PackagePin("odd", "1.0", local_version="+a b")),
                environment=(("CUDA_VISIBLE_DEVICES", "0"),))
    commands = render_commands(plan)["pip"]
    assert commands[0] == f"python -m pip install --index-url {index} torch==2.7.1+cu126"
    assert commands[1] == 'python -m pip install "odd==1.0+a b" torch==2.7.1+cu126'
    assert "'" not in "".join(commands)
    assert '$env:CUDA_VISIBLE_DEVICES = "0"' in render(plan, "pip").splitlines()


def test_conda_commands_install_from_conda_forge_then_hold_its_torch_in_pip() -> None:
    plan = cuda_plan(PackagePin("xformers", "0.0.31", "cu126", CU126, local_version="+cu126"),
                     PackagePin("ftfy", "6.2.0"))
    conda, *pip = [shlex.split(c) for c in render_commands(plan)["conda"]]
    assert conda[:6] == ["conda", "install", "--yes", "--override-channels", "--channel", "conda-forge"]
    # xformers' PyTorch-index wheel is built against PyPI's torch: conda-forge's xformers instead.
    assert conda[6:] == ["pytorch-gpu=2.7.1", "cuda-version=12.6", "torchvision=0.22.1", "torchaudio=2.7.1",
                         "xformers"]
    # every pip step holds conda's torch.
    assert [p[4:] for p in pip] == [["ftfy==6.2.0", "torch==2.7.1"]]
    assert "xformers" in yaml.safe_load(render(plan, "conda"))["dependencies"]


def test_every_format_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
    headings = {line[3:].split(":")[0].strip() for line in doc.splitlines() if line.startswith("## ")}
    assert set(FORMATS) <= headings


def test_extras_survive_into_every_command() -> None:
    from torchsmith.plan.model import PackagePin, Plan

    plan = Plan(status="ok", platform="linux-x86_64", python="3.11", accelerator="cuda",
                packages=(PackagePin("jax", "0.9.0", extras=("cuda13",)),))
    commands = render_commands(plan)
    assert any("'jax[cuda13]==0.9.0'" in line for line in commands["pip"])
    assert any("'jax[cuda13]==0.9.0'" in line for line in commands["uv"])
