"""The torch release a text shows installed, in the shapes tools print it (not a requirement, which
asks for one): an environment report's "PyTorch: X" line, `pip show torch`, pip's "Requirement
already satisfied" line, and the PyTorch conda channel's package in a `conda list` row, whose build
string names its CUDA (not a package file or a pkgs/ cache path: a download, which may have failed). Pure."""

from __future__ import annotations

import re

_VERSION = r"(?P<v>\d\.\d{1,2}\.\d+(?:\.?[a-z]+\d*)?(?:\+[\w.]+)?)"

_INSTALLED = (
    # an environment report's "name: value" line: OpenMMLab's collect_env prints "PyTorch: 1.8.0+cu111"
    # (open-mmlab/mmengine@65d52c53 mmengine/utils/dl_utils/collect_env.py), issue templates "pytorch: 1.5.1"
    # (not "torch::jit", a C++ namespace, nor a YAML requirement "- pytorch=1.12")
    re.compile(r"(?<![\w./-])(?:[Pp]y[Tt]orch|PYTORCH|[Tt]orch)[ \t]*:[ \t]*v?" + _VERSION + r"(?![\w.])"),
    # `pip show torch`: "Name: torch" then "Version: 2.1.0+cu118" (pip/_internal/commands/show.py)
    re.compile(r"^Name: torch[ \t]*\r?\nVersion: " + _VERSION, re.MULTILINE),
    # pip's "Requirement %s: %s (%s)" with the requirement and the installed version last
    # (pypa/pip@23.2.1 src/pip/_internal/operations/prepare.py, prepare_installed_requirement)
    # collect_env's library lines: pip's freeze listing "[pip3] torch==2.1.0+cu121", conda's row of a pip
    # install "[conda] torch  2.1.0+cu121  pypi_0  pypi" (pytorch/pytorch torch/utils/collect_env.py,
    # get_pip_packages / get_conda_packages prefix each listed line with its tool)
    re.compile(r"^\[pip\d?\] torch==" + _VERSION + r"[ \t]*$", re.MULTILINE),
    re.compile(r"^(?:\[conda\])?[ \t]*torch[ \t]+" + _VERSION + r"[ \t]+pypi_0[ \t]+pypi\b", re.MULTILINE),
    re.compile(r"^Requirement already satisfied: torch(?:\[[\w,-]*\])?(?:[<>=!~]=?[^\s;]*)?"
               r"(?:;[^\n]*?)? in [^\n]*\(" + _VERSION + r"\)[ \t]*$", re.MULTILINE),
)

# The PyTorch conda channel's build string: "py3.9_cuda11.3_cudnn8.3.2_0", "py3.8_cuda11.0.221_cudnn8.0.5_0"
# (pytorch/builder@5cc06408 conda/build_pytorch.sh: build_string="py${py_ver}_${build_string_suffix}", the
# suffix cuda<CUDA>_cudnn<cuDNN>_<build>); a conda-forge build ("cuda118py310h...") is another build, with
# its own arch list, so it is not read here.
_CHANNEL_BUILD = r"py\d\.\d{1,2}_cuda(?P<cuda>\d{1,2}\.\d)(?:\.\d+)?_cudnn[\d.]+_\d+"
_CONDA_ROW = re.compile(r"^(?:\[conda\])?[ \t]*pytorch[ \t]+(?P<v>\d\.\d{1,2}\.\d+)[ \t]+"
                        + _CHANNEL_BUILD + r"\b", re.MULTILINE)


def installed_torch(text: str) -> str | None:
    """The torch version the text shows installed in one of the shapes above, the first that does."""
    for pattern in _INSTALLED:
        match = pattern.search(text)
        if match:
            return match.group("v")
    return None


def conda_channel_torch(text: str) -> tuple[str, str] | None:
    """(version, CUDA) of the PyTorch conda channel's package the text shows, where it shows one."""
    versions = {(m.group("v"), m.group("cuda")) for m in _CONDA_ROW.finditer(text)}
    return next(iter(versions)) if len(versions) == 1 else None
