"""Hand-curated knowledge-base rows that the shared fact sheet does not cover.

Read by tools/build_kb_data.py. Every row names sources (ids below or in the fact sheet) and is
``uncertain`` unless it was checked against a primary source in this session. Keep this file
the only place these facts are typed in; the packaged JSON is generated from it.
"""

from __future__ import annotations

# id -> (url, title, retrieved, note)
SOURCES = {
    "FACTS": (
        "urn:torchsmith:shared-facts:2026-11-22",
        "torchsmith shared fact sheet (facts.json), compiled from the sources it names",
        "2026-11-22",
        "a row citing only FACTS was not traced to one primary source",
    ),
    "WIN_BAT": (
        "https://github.com/pytorch/pytorch/tree/main/.ci/pytorch/windows",
        "pytorch/pytorch .ci/pytorch/windows/cuda1xx.bat TORCH_CUDA_ARCH_LIST",
        "2026-11-22",
        "one stored commit per file; each variant row's note names it",
    ),
    "B_OLD": (
        "https://github.com/pytorch/builder/blob/main/manywheel/build_cuda.sh",
        "pytorch/builder manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST for CUDA 9.x-11.x",
        "2026-11-22",
        "arch lists of pre-1.12 builds, not re-read per release branch",
    ),
    "NV_RN_OLD": (
        "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
        "NVIDIA CUDA Toolkit release notes, Table 3 rows for CUDA 8.0-10.1",
        "2026-11-22",
        "read through verbatim copies of the table in public repositories (they agree)",
    ),
    "NV_COMPAT": (
        "https://docs.nvidia.com/deploy/cuda-compatibility/index.html",
        "NVIDIA CUDA Compatibility guide (minor-version compatibility, PTX JIT limits)",
        "2026-11-22",
        "",
    ),
    "PCI_IDS": (
        "https://pci-ids.ucw.cz/read/PC/10de",
        "The PCI ID Repository, vendor 10de (NVIDIA)",
        "2026-11-22",
        "device ids from memory",
    ),
    "NV_JETSON_DOC": (
        "https://docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform/index.html",
        "NVIDIA 'Installing PyTorch for Jetson Platform' (prerequisites, wheel locations)",
        "2026-11-22",
        "",
    ),
    "JETSON_AI_LAB": (
        "https://pypi.jetson-ai-lab.io/",
        "Jetson AI Lab pip index (jp6/cu126 and others)",
        "2026-11-22",
        "",
    ),
    "MMCV_USE": (
        "https://huggingface.co/spaces/HarborYuan/ovsam/blob/main/requirements.txt",
        "requirements files installing mmcv 2.1.0 with torch 2.1.2 from download.openmmlab.com "
        "cu121/torch2.1.0 (also LXT/OMG_Seg, shilinxu/rap-sam)",
        "2026-11-22",
        "",
    ),
    "MMCV_DOC": (
        "https://mmcv.readthedocs.io/en/latest/get_started/installation.html",
        "MMCV installation: prebuilt packages per CUDA and torch (download.openmmlab.com)",
        "2026-11-22",
        "",
    ),
    "PYG_DOC": (
        "https://pytorch-geometric.readthedocs.io/en/latest/install/installation.html",
        "PyG installation: additional libraries from data.pyg.org per torch+CUDA",
        "2026-11-22",
        "",
    ),
    "XFORMERS": (
        "https://pypi.org/simple/xformers/",
        "xformers wheels on PyPI: Requires-Dist torch in each manylinux wheel's METADATA",
        "2026-11-22",
        "",
    ),
    "FLASH_ATTN": (
        "https://github.com/Dao-AILab/flash-attention/releases",
        "flash-attention GitHub releases (prebuilt wheels per torch minor and CUDA major)",
        "2026-11-22",
        "",
    ),
    "CONDA_PYTORCH_END": (
        "https://github.com/pytorch/pytorch/issues/138506",
        "[Announcement] Deprecating PyTorch's official Anaconda channel",
        "2026-11-22",
        "2.5 was the last release on the pytorch channel",
    ),
    "CF_FEEDSTOCK": (
        "https://github.com/conda-forge/pytorch-cpu-feedstock",
        "conda-forge/pytorch-cpu-feedstock (builds pytorch and pytorch-gpu): recipe version and "
        ".ci_support/<platform>_..._cuda_compiler_version<X.Y>... variants per release, from the "
        "first-parent history of main (last read at 74dd3d46ff0c, 2026-08-13)",
        "2026-11-23",
        "releases built only on other branches are not listed",
    ),
    "CONDA_FORGE": (
        "https://anaconda.org/conda-forge/pytorch",
        "conda-forge pytorch / pytorch-gpu feedstock builds",
        "2026-11-22",
        "",
    ),
    "CONDA_VPKG": (
        "https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-virtual.html",
        "conda virtual packages (__cuda, CONDA_OVERRIDE_CUDA)",
        "2026-11-22",
        "",
    ),
    "TF_WINDOWS": (
        "https://www.tensorflow.org/install/pip#windows-native",
        "TensorFlow install, Windows native: 'TensorFlow 2.10 was the last TensorFlow release that "
        "supported GPU on native-Windows'; conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0, "
        "then pip install \"tensorflow<2.11\"; tested build configurations (Windows GPU): "
        "tensorflow_gpu-2.10.0, Python 3.7-3.10, cuDNN 8.1, CUDA 11.2",
        "2026-11-23",
        "",
    ),
    "TF_PYPI": (
        "https://pypi.org/simple/tensorflow/",
        "tensorflow wheels on PyPI: Requires-Dist of the and-cuda extra and wheel tags",
        "2026-11-22",
        "",
    ),
    "TF_BUILD": (
        "https://www.tensorflow.org/install/source#gpu",
        "TensorFlow tested build configurations (GPU)",
        "2026-11-22",
        "",
    ),
    "JAX_PYPI": (
        "https://pypi.org/simple/jax/",
        "jax and jaxlib wheels on PyPI: Provides-Extra, Requires-Python, wheel tags",
        "2026-11-22",
        "",
    ),
    "JAX_INSTALL": (
        "https://docs.jax.dev/en/latest/installation.html",
        "JAX installation: NVIDIA GPU (jax[cuda12], jax[cuda13], driver floors)",
        "2026-11-22",
        "",
    ),
}

# Torch releases before the fact sheet's range (1.12+): (version, python (all platforms),
# variants, pypi linux default, torchvision, torchaudio, mac_x86_64_only).
OLD_RELEASES = [
    # Variant lists and torchvision/torchaudio pairings as on the previous-versions page (PV_OLD);
    # 1.10.2 and 1.3.x are not on it. Python lists and PyPI defaults before 1.5 from memory.
    ("1.11.0", ["3.7", "3.8", "3.9", "3.10"], ["cu102", "cu113", "rocm4.5.2"], "cu102", "0.12.0", "0.11.0"),
    (
        "1.10.2",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"],
        "cu102",
        "0.11.3",
        "0.10.2",
    ),
    (
        "1.10.1",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"],
        "cu102",
        "0.11.2",
        "0.10.1",
    ),
    (
        "1.10.0",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"],
        "cu102",
        "0.11.0",
        "0.10.0",
    ),
    (
        "1.9.1",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"],
        "cu102",
        "0.10.1",
        "0.9.1",
    ),
    (
        "1.9.0",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu102", "cu111", "rocm4.0.1", "rocm4.1", "rocm4.2"],
        "cu102",
        "0.10.0",
        "0.9.0",
    ),
    (
        "1.8.1",
        ["3.6", "3.7", "3.8", "3.9"],
        ["cu101", "cu102", "cu111", "rocm3.10", "rocm4.0.1"],
        "cu102",
        "0.9.1",
        "0.8.1",
    ),
    ("1.8.0", ["3.6", "3.7", "3.8", "3.9"], ["cu102", "cu111", "rocm4.0.1"], "cu102", "0.9.0", "0.8.0"),
    ("1.7.1", ["3.6", "3.7", "3.8", "3.9"], ["cu92", "cu101", "cu102", "cu110"], "cu102", "0.8.2", "0.7.2"),
    ("1.7.0", ["3.6", "3.7", "3.8"], ["cu92", "cu101", "cu102", "cu110"], "cu102", "0.8.0", "0.7.0"),
    ("1.6.0", ["3.6", "3.7", "3.8"], ["cu92", "cu101", "cu102"], "cu102", "0.7.0", None),
    ("1.5.1", ["3.5", "3.6", "3.7", "3.8"], ["cu92", "cu101", "cu102"], "cu102", "0.6.1", None),
    ("1.5.0", ["3.5", "3.6", "3.7", "3.8"], ["cu92", "cu101", "cu102"], "cu102", "0.6.0", None),
    ("1.4.0", ["2.7", "3.5", "3.6", "3.7", "3.8"], ["cu92", "cu101"], "cu101", "0.5.0", None),
    ("1.3.1", ["2.7", "3.5", "3.6", "3.7"], ["cu92", "cu100", "cu101"], "cu101", "0.4.2", None),
    ("1.3.0", ["2.7", "3.5", "3.6", "3.7"], ["cu92", "cu100", "cu101"], "cu101", "0.4.1", None),
    ("1.2.0", ["2.7", "3.5", "3.6", "3.7"], ["cu92", "cu100"], "cu100", "0.4.0", None),
    ("1.1.0", ["2.7", "3.5", "3.6", "3.7"], ["cu90", "cu100"], "cu100", "0.3.0", None),
    ("1.0.1", ["2.7", "3.5", "3.6", "3.7"], ["cu90", "cu100"], "cu90", "0.2.2", None),
    ("1.0.0", ["2.7", "3.5", "3.6", "3.7"], ["cu80", "cu90", "cu100"], "cu90", "0.2.1", None),
]
# The 1.8 LTS release lives on its own index (download.pytorch.org/whl/lts/1.8/<variant>).
LTS_182 = ("1.8.2", ["3.6", "3.7", "3.8"], ["cu102", "cu111"], "0.9.2", "0.8.2")

# TORCH_CUDA_ARCH_LIST of the pre-1.12 builds: pytorch/builder manywheel/build_cuda.sh starts
# from "3.7;5.0;6.0;7.0" and appends per CUDA version; the case statement changed over time
# (copies of three of its versions agree). From 1.8 on, CUDA 10.x adds nothing; before, 10.x
# adds 7.5 and 11.0 adds 7.5;8.0. Releases before 1.5 are not covered by those copies.
OLD_ARCH_BASE = ["sm_37", "sm_50", "sm_60", "sm_70"]
OLD_ARCHS_FROM_1_8 = {"10": [], "11.0": ["sm_75", "sm_80"], "11": ["sm_75", "sm_80", "sm_86"]}
OLD_ARCHS_BEFORE_1_8 = {"8": [], "9": [], "10": ["sm_75"], "11": ["sm_75", "sm_80"]}

# gfx targets of the pre-1.12 ROCm builds (pytorch/builder build_docker.sh, uncertain).
OLD_GFX = ["gfx900", "gfx906", "gfx908"]
OLD_GFX_43 = ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"]

# CUDA toolkits older than the fact sheet's table: version -> (linux, windows, [(update, linux, windows)]).
OLD_TOOLKITS = {
    # Table 3 rows as in NVIDIA's release notes (read through several verbatim copies).
    "10.1": ("418.39", "418.96", []),
    "10.0": ("410.48", "411.31", []),
    "9.2": ("396.26", "397.44", [("9.2.148 Update 1", "396.37", "398.26")]),
    "9.1": ("390.46", "391.29", []),
    "9.0": ("384.81", "385.54", []),
    "8.0": ("367.48", "369.30", [("8.0.61 GA2", "375.26", "376.51")]),
}

# Architectures each CUDA toolkit line compiles for (from this version until the next row).
ARCH_SUPPORT = [
    # cuda, min, max, archs, deprecated, sources, uncertain, note
    (
        "13.0",
        "sm_75",
        "sm_121",
        [
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_87",
            "sm_88",
            "sm_89",
            "sm_90",
            "sm_100",
            "sm_103",
            "sm_110",
            "sm_120",
            "sm_121",
        ],
        [],
        ["FACTS", "I157517"],
        True,
        "CUDA 13.0 drops Maxwell, Pascal and Volta (offline compilation, libraries); Thor sm_101 is sm_110",
    ),
    (
        "12.9",
        "sm_50",
        "sm_121",
        [
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_87",
            "sm_89",
            "sm_90",
            "sm_100",
            "sm_101",
            "sm_103",
            "sm_120",
            "sm_121",
        ],
        ["sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72"],
        ["FACTS", "I157517"],
        False,
        "12.9 adds sm_103 and sm_121",
    ),
    (
        "12.8",
        "sm_50",
        "sm_120",
        [
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_87",
            "sm_89",
            "sm_90",
            "sm_100",
            "sm_101",
            "sm_120",
        ],
        ["sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72"],
        ["FACTS", "I157517"],
        False,
        "12.8 adds Blackwell (sm_100, sm_101, sm_120) and deprecates Maxwell, Pascal, Volta",
    ),
    (
        "12.0",
        "sm_50",
        "sm_90",
        [
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_87",
            "sm_89",
            "sm_90",
        ],
        [],
        ["FACTS"],
        False,
        "CUDA 12.0 drops Kepler (sm_35, sm_37)",
    ),
    (
        "11.8",
        "sm_35",
        "sm_90",
        [
            "sm_35",
            "sm_37",
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
            "sm_86",
            "sm_87",
            "sm_89",
            "sm_90",
        ],
        ["sm_35", "sm_37", "sm_50", "sm_52"],
        ["FACTS"],
        False,
        "11.8 adds sm_89 and sm_90",
    ),
    (
        "11.1",
        "sm_35",
        "sm_86",
        [
            "sm_35",
            "sm_37",
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
            "sm_86",
        ],
        ["sm_35", "sm_37", "sm_50", "sm_52"],
        ["FACTS"],
        False,
        "11.1 adds sm_86",
    ),
    (
        "11.0",
        "sm_35",
        "sm_80",
        [
            "sm_35",
            "sm_37",
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
            "sm_80",
        ],
        ["sm_35", "sm_37", "sm_50", "sm_52"],
        ["FACTS"],
        True,
        "CUDA 11.0 drops sm_30",
    ),
    (
        "10.0",
        "sm_30",
        "sm_75",
        [
            "sm_30",
            "sm_32",
            "sm_35",
            "sm_37",
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
            "sm_75",
        ],
        [],
        ["FACTS"],
        True,
        "10.x adds Turing sm_75",
    ),
    (
        "9.0",
        "sm_30",
        "sm_72",
        [
            "sm_30",
            "sm_32",
            "sm_35",
            "sm_37",
            "sm_50",
            "sm_52",
            "sm_53",
            "sm_60",
            "sm_61",
            "sm_62",
            "sm_70",
            "sm_72",
        ],
        [],
        ["NV_RN_OLD"],
        True,
        "9.0 adds Volta sm_70 and drops Fermi",
    ),
    (
        "8.0",
        "sm_20",
        "sm_62",
        ["sm_20", "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62"],
        ["sm_20"],
        ["NV_RN_OLD"],
        True,
        "8.0 adds Pascal",
    ),
]

MINOR_COMPAT = [
    ("13", "580", "580", None, ["NV_RN"], True),
    ("12", "525.60.13", "527.41", "580", ["NV_RN"], False),
    ("11", "450.80.02", "452.39", "525", ["NV_RN"], False),
]
MINOR_COMPAT_LIMITS = (
    "an application built with a newer CUDA minor runs on an older driver of the same major only without "
    "PTX JIT (SASS for the GPU must be in the binary) and without features that need the newer driver "
    "(cudaErrorCallRequiresNewerDriver)"
)

# Models the fact sheet lacks: name -> (compute capability, checked on developer.nvidia.com/cuda-gpus
# or cuda-legacy-gpus through the docs corpus). Unchecked rows are typed from memory (uncertain).
EXTRA_GPUS = {
    "Quadro P5000": ("6.1", True),
    "Quadro P2200": ("6.1", True),
    "Quadro P620": ("6.1", True),
    "Quadro P600": ("6.1", True),
    "Quadro P400": ("6.1", True),
    "NVIDIA RTX A3000": ("8.6", True),
    "NVIDIA RTX A2000": ("8.6", True),
    "NVIDIA RTX 5000 Ada": ("8.9", True),
    "NVIDIA RTX 4500 Ada": ("8.9", True),
    "NVIDIA RTX 4000 Ada": ("8.9", True),
    "NVIDIA RTX 4000 SFF Ada": ("8.9", True),
    "NVIDIA RTX 2000 Ada": ("8.9", True),
    "NVIDIA RTX PRO 5000 Blackwell": ("12.0", True),
    "NVIDIA RTX PRO 4500 Blackwell": ("12.0", True),
    "NVIDIA RTX PRO 4000 Blackwell": ("12.0", True),
    "NVIDIA RTX PRO 2000 Blackwell": ("12.0", True),
    "GeForce MX150": ("6.1", False),
    "GeForce MX250": ("6.1", False),
    "GeForce MX350": ("6.1", False),
    "GeForce MX450": ("7.5", False),
    "GeForce MX550": ("7.5", False),
    "Quadro RTX 3000": ("7.5", False),
    "T1200": ("7.5", False),
    "T2000": ("7.5", False),
    "NVIDIA RTX A4500": ("8.6", False),
    "NVIDIA RTX A5500": ("8.6", False),
    "NVIDIA L20": ("8.9", False),
    "Tesla M10": ("5.0", False),
}

# PCI device ids (10de:xxxx) of common models.
PCI_IDS = {
    "GeForce GTX 1080": ["10de:1b80"],
    "GeForce GTX 1080 Ti": ["10de:1b06"],
    "GeForce GTX 1070": ["10de:1b81"],
    "GeForce GTX 1060": ["10de:1c03"],
    "Tesla P100": ["10de:15f8", "10de:15f9"],
    "Tesla V100": ["10de:1db1", "10de:1db4", "10de:1db5", "10de:1db6"],
    "Tesla T4": ["10de:1eb8"],
    "GeForce RTX 2080 Ti": ["10de:1e04", "10de:1e07"],
    "GeForce RTX 3090": ["10de:2204"],
    "GeForce RTX 3080": ["10de:2206"],
    "NVIDIA A100": ["10de:20b0", "10de:20b2", "10de:20b5", "10de:20f1"],
    "NVIDIA A10": ["10de:2236"],
    "GeForce RTX 4090": ["10de:2684"],
    "NVIDIA L4": ["10de:27b8"],
    "NVIDIA H100": ["10de:2330", "10de:2331"],
    "GeForce RTX 5090": ["10de:2b85"],
}

# JetPack: cuDNN, Ubuntu (by L4T major) and apt prerequisites of the NVIDIA wheels.
# NVIDIA wheels the fact sheet does not list, seen in the jp/v51 directory listing that users quote.
EXTRA_JETSON_WHEELS = {
    "5.1": [
        "https://developer.download.nvidia.com/compute/redist/jp/v51/pytorch/"
        "torch-1.14.0a0+44dac51c.nv23.01-cp38-cp38-linux_aarch64.whl",
        "https://developer.download.nvidia.com/compute/redist/jp/v51/pytorch/"
        "torch-1.14.0a0+44dac51c.nv23.02-cp38-cp38-linux_aarch64.whl",
    ],
}

JETPACK_CUDNN = {
    "4.6": "8.2.1",
    "4.6.1": "8.2.1",
    "5.0.2": "8.4.1",
    "5.1": "8.6.0",
    "5.1.1": "8.6.0",
    "5.1.2": "8.6.0",
    "6.0": "8.9.4",
    "6.1": "9.3.0",
    "6.2": "9.3.0",
}
UBUNTU_BY_L4T = {"32": "18.04", "34": "20.04", "35": "20.04", "36": "22.04", "38": "24.04", "39": "24.04"}
PREREQUISITES = {
    "4": ["libopenblas-base", "libopenmpi-dev", "libomp-dev"],
    "5": ["python3-pip", "libopenblas-dev"],
    "6": ["python3-pip", "libopenblas-dev"],
}
JETSON_INDEX = {
    "6.1": "https://pypi.jetson-ai-lab.io/jp6/cu126",
    "6.1.1": "https://pypi.jetson-ai-lab.io/jp6/cu126",
    "6.2": "https://pypi.jetson-ai-lab.io/jp6/cu126",
    "6.2.1": "https://pypi.jetson-ai-lab.io/jp6/cu126",
}

# mmcv prebuilt wheels: (torch series, variant, mmcv versions).
MMCV = [
    ("2.4", "cu124", ["2.2.0"], True),
    ("2.4", "cu121", ["2.2.0"], True),
    ("2.4", "cu118", ["2.2.0"], True),
    ("2.3", "cu121", ["2.2.0"], True),
    ("2.3", "cu118", ["2.2.0"], True),
    ("2.2", "cu121", ["2.2.0"], True),
    ("2.2", "cu118", ["2.2.0"], True),
    ("2.1", "cu121", ["2.1.0"], False),
    ("2.1", "cu118", ["2.1.0"], True),
    ("2.1", "cpu", ["2.1.0"], True),
    ("2.0", "cu118", ["2.0.0", "2.0.1", "2.1.0", "2.2.0"], True),
    ("2.0", "cu117", ["2.0.0", "2.0.1", "2.1.0", "2.2.0"], True),
    ("1.13", "cu117", ["2.0.0", "2.0.1", "2.1.0"], True),
    ("1.13", "cu116", ["2.0.0", "2.0.1", "2.1.0"], True),
    ("1.12", "cu116", ["2.0.0", "2.0.1", "2.1.0"], True),
    ("1.12", "cu113", ["2.0.0", "2.0.1", "2.1.0"], True),
]
# mim and users use the torch{X.Y}.0 page names (e.g. cu121/torch2.1.0 with mmcv 2.1.0).
MMCV_PAGE = "https://download.openmmlab.com/mmcv/dist/{variant}/torch{torch}.0/index.html"

# PyG extension wheels: (torch release the page is named after, variants).
PYG = [
    ("2.8.0", ["cu126", "cu128", "cu129", "cpu"]),
    ("2.7.0", ["cu118", "cu126", "cu128", "cpu"]),
    ("2.6.0", ["cu118", "cu124", "cu126", "cpu"]),
    ("2.5.0", ["cu118", "cu121", "cu124", "cpu"]),
    ("2.4.0", ["cu118", "cu121", "cu124", "cpu"]),
    ("2.3.0", ["cu118", "cu121", "cpu"]),
    ("2.2.0", ["cu118", "cu121", "cpu"]),
    ("2.1.0", ["cu118", "cu121", "cpu"]),
    ("2.0.0", ["cu117", "cu118", "cpu"]),
    ("1.13.0", ["cu116", "cu117", "cpu"]),
    ("1.12.0", ["cu102", "cu113", "cu116", "cpu"]),
]
PYG_PAGE = "https://data.pyg.org/whl/torch-{torch}+{variant}.html"
PYG_PACKAGES = ["pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv"]

# xformers release -> the torch it pins (Requires-Dist torch==X), and the variants it ships.
# Windows TORCH_CUDA_ARCH_LIST from .ci/pytorch/windows/cuda1xx.bat (one stored commit each; the
# release branch each commit belongs to was not checked). Applied from the release that
# introduced the variant; other Windows lists are taken equal to Linux.
WINDOWS_ARCHS = {
    # cuda118.bat also adds compute_37 PTX ("3.7+PTX"); not listed, release stripping unverified.
    "cu118": ["sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu121": ["sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu124": ["sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu126": ["sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu128": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
    "cu129": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
    "cu130": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
}
WINDOWS_BAT_COMMITS = {
    "cu118": "74fabf1dca96c922660bad92676fc3169f15c14c",
    "cu121": "74fabf1dca96c922660bad92676fc3169f15c14c",
    "cu124": "475876a47c24b83254c1f167d11af42deff75ff5",
    "cu126": "18f79c00d6731a8fddb091ba93a3b4dfe1f1f944",
    "cu128": "07619f946d86f336adde89126077177c400e242c",
    "cu129": "1a1a3262afb8940a9784b265fbaec301fd9799ab",
    "cu130": "525a5e5db90540a5ca0dbf87e941cedbc29e2094",
}

# torchvision releases whose Requires-Dist is not an exact pin (fact sheet section 0, trap 12).
TORCHVISION_SPECS = {"0.29.1": ">=2.14.0", "0.29.2": ">=2.14.0"}

XFORMERS = [
    # Requires-Dist of the manylinux wheels on PyPI (METADATA read by HTTP range requests).
    ("0.0.35", ">=2.10"),
    ("0.0.34", "==2.10.0"),
    ("0.0.33.post2", "==2.9.1"),
    ("0.0.33.post1", "==2.9.0"),
    ("0.0.32.post2", "==2.8.0"),
    ("0.0.31", "==2.7.1"),
    ("0.0.30", "==2.7.0"),
    ("0.0.29.post3", "==2.6.0"),
    ("0.0.28.post3", "==2.5.1"),
    ("0.0.28.post1", "==2.4.1"),
    ("0.0.27.post2", "==2.4.0"),
    ("0.0.26.post1", "==2.3.0"),
    ("0.0.25.post1", "==2.2.2"),
    ("0.0.24", "==2.2.0"),
    ("0.0.23.post1", "==2.1.2"),
    ("0.0.22", "==2.0.1"),
]
# flash-attn: version -> torch range its release wheels cover.
FLASH_ATTN = [
    (
        "2.8.3",
        ">=2.4,<2.9",
        "prebuilt wheels on GitHub releases for torch 2.4-2.8 and CUDA 12; else builds from source",
    ),
    ("2.7.4.post1", ">=2.2,<2.7", "prebuilt wheels for torch 2.2-2.6 (cu12)"),
    ("2.6.3", ">=2.2,<2.6", "prebuilt wheels for torch 2.2-2.5 (cu118, cu12)"),
    ("2.5.8", ">=1.12,<2.4", "prebuilt wheels for torch 1.12-2.3 (cu118, cu122)"),
]

CONDA_CHANNELS = [
    (
        "pytorch",
        "pytorch",
        "2.5.1",
        "PyTorch stopped publishing to its own conda channel after 2.5; use "
        "conda-forge (pytorch, pytorch-gpu) or pip wheels",
        ["CONDA_PYTORCH_END"],
        False,
    ),
    (
        "conda-forge",
        "pytorch",
        None,
        "the maintained conda build; CUDA builds are selected by the cuda-version "
        "package and the __cuda virtual package",
        ["CONDA_FORGE"],
        False,
    ),
    (
        "conda-forge",
        "pytorch-gpu",
        None,
        "metapackage that forces a CUDA build of conda-forge pytorch",
        ["CONDA_FORGE"],
        False,
    ),
    (
        "virtual",
        "__cuda",
        None,
        "the highest CUDA the driver supports (from libcuda); override with "
        "CONDA_OVERRIDE_CUDA=12.4 (empty = no CUDA)",
        ["CONDA_VPKG"],
        False,
    ),
    (
        "virtual",
        "__cuda_arch",
        None,
        "compute capability of the GPU (newer conda); lets builds with SASS-only arch lists be excluded",
        ["CONDA_VPKG"],
        True,
    ),
    (
        "nvidia",
        "cuda-toolkit",
        None,
        "NVIDIA's channel of CUDA components; conda-forge carries cuda-version "
        "and the 12.x/13.x components itself",
        ["CONDA_FORGE"],
        True,
    ),
]
# conda-forge/pytorch-cpu-feedstock, read with `git log --first-parent` of main: for each
# release, the .ci_support/*.yaml variants of every commit building it (platform ->
# cuda_compiler_version; None = the CPU build). (series, releases, {platform: CUDA versions},
# newest commit of the series)
CONDA_FEEDSTOCK = [
    ("2.13", ["2.13.0"], {
        "linux-aarch64": ["12.9", "13.0"],
        "linux-x86_64": ["12.9", "13.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8", "13.0"],
    }, "74dd3d46ff0c3d05053197961386b5a2018cf3d1"),
    ("2.12", ["2.12.1", "2.12.0"], {
        "linux-aarch64": ["12.9", "13.0"],
        "linux-x86_64": ["12.9", "13.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8", "13.0"],
    }, "709fc4c6a01112a466d270336cdf338ab99a964c"),
    ("2.11", ["2.11.0"], {
        "linux-aarch64": ["12.9", "13.0"],
        "linux-x86_64": ["12.9", "13.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8", "13.0"],
    }, "ac1729329dfc3bb48ca457e7ee9b556fe557e846"),
    ("2.10", ["2.10.0"], {
        "linux-aarch64": ["12.9", "13.0"],
        "linux-x86_64": ["12.9", "13.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8", "13.0"],
    }, "b79ad3ff33df7d00462218a94af2007947d0abb8"),
    ("2.9", ["2.9.1"], {
        "linux-aarch64": ["12.9"],
        "linux-x86_64": ["12.9"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8"],
    }, "b77098ef2fc7481bd2ee627396ef7e7593dd59a7"),
    ("2.8", ["2.8.0"], {
        "linux-aarch64": ["12.9"],
        "linux-x86_64": ["12.9"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.8"],
    }, "f003394e48855b5474d2b4da23680620c93973b7"),
    ("2.7", ["2.7.1", "2.7.0"], {
        "linux-aarch64": ["12.6", "12.9"],
        "linux-x86_64": ["12.6", "12.9"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.6", "12.8"],
    }, "d21fc6dbb4db827872fc8cf05e70f6771bd4937b"),
    ("2.6", ["2.6.0"], {
        "linux-aarch64": ["12.6"],
        "linux-x86_64": ["12.6"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.6"],
    }, "71a445e6b5a73c4d0afd3ca1b235684bfcfa0bce"),
    ("2.5", ["2.5.1"], {
        "linux-aarch64": ["12.0", "12.6"],
        "linux-x86_64": ["11.8", "12.0", "12.6"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["12.6"],
    }, "be203905856551e5a4b50dd03c6be2e9ddef5fc4"),
    ("2.4", ["2.4.1", "2.4.0"], {
        "linux-aarch64": ["12.0"],
        "linux-x86_64": ["11.8", "12.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "44041eed72b926499cdd049c01525b46e4ff3365"),
    ("2.3", ["2.3.1", "2.3.0"], {
        "linux-aarch64": ["12.0"],
        "linux-x86_64": ["11.8", "12.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "b362c0334750a97027bf6574b3fb8c5f1a874916"),
    ("2.1", ["2.1.2", "2.1.0"], {
        "linux-aarch64": ["11.2", "12.0"],
        "linux-x86_64": ["11.2", "11.8", "12.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "e14cf83f8df957822030726c1d4239d184b06741"),
    ("2.0", ["2.0.0"], {
        "linux-aarch64": [],
        "linux-x86_64": ["11.2", "11.8", "12.0"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "86592106fc0e4731eb011ac763a4f0429326930b"),
    ("1.13", ["1.13.1", "1.13.0"], {
        "linux-aarch64": [],
        "linux-x86_64": ["11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "c48cd2b9035717ae0e14a4b34ea237380178df18"),
    ("1.12", ["1.12.1", "1.12.0"], {
        "linux-aarch64": [],
        "linux-x86_64": ["10.2", "11.0", "11.1", "11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "cb21779cc8fe8f1df81331a09df224e95698be1b"),
    ("1.11", ["1.11.0"], {
        "linux-x86_64": ["10.2", "11.0", "11.1", "11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "5b345dd9ee90d486c3439284af0ea79ada0841e3"),
    ("1.10", ["1.10.2", "1.10.1", "1.10.0"], {
        "linux-x86_64": ["10.2", "11.0", "11.1", "11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "550f9f91579b3807485efc9dff4a59541b5cc71e"),
    ("1.9", ["1.9.1", "1.9.0"], {
        "linux-x86_64": ["10.2", "11.0", "11.1", "11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
    }, "1e83a2ec6e4fe227d92f46dab5a6065748ceb349"),
    ("1.8", ["1.8.0"], {
        "linux-x86_64": ["10.2", "11.0", "11.1", "11.2"],
        "macos-arm64": [],
        "macos-x86_64": [],
        "windows-x86_64": ["11.1", "11.2"],
    }, "ec1566fa65ed9c3fa009c963883a07b7d2a2d2d1"),
    ("1.7", ["1.7.1"], {
        "linux-x86_64": ["9.2", "10.0", "10.1", "10.2", "11.0"],
        "macos-x86_64": [],
        "windows-x86_64": [],
    }, "578d52aec36e797468d213d929ec50f81abb7521"),
    ("1.6", ["1.6.0"], {
        "linux-x86_64": ["9.2", "10.0", "10.1", "10.2"],
        "macos-x86_64": [],
        "windows-x86_64": [],
    }, "43735edbb8c373e2cdca568da61d9f2a3fc5f434"),
]

# TensorFlow: version -> (cuda, cudnn, python) from the tested build configurations.
TENSORFLOW = [
    # tensorflow[and-cuda]: nvidia-cuda-runtime / nvidia-cudnn pins and wheel tags of the
    # manylinux x86_64 wheels on PyPI (2.20+ pin ranges: >=12.5.82,<13 and >=9.3.0.75,<10).
    ("2.21.0", "12.5", "9.3", ["3.10", "3.11", "3.12", "3.13"], False),
    ("2.20.0", "12.5", "9.3", ["3.9", "3.10", "3.11", "3.12", "3.13"], False),
    ("2.19.0", "12.5", "9.3", ["3.9", "3.10", "3.11", "3.12"], False),
    ("2.18.0", "12.5", "9.3", ["3.9", "3.10", "3.11", "3.12"], False),
    ("2.17.0", "12.3", "8.9", ["3.9", "3.10", "3.11", "3.12"], False),
    ("2.16.1", "12.3", "8.9", ["3.9", "3.10", "3.11", "3.12"], False),
    ("2.15.0", "12.2", "8.9", ["3.9", "3.10", "3.11"], False),
    ("2.14.0", "11.8", "8.7", ["3.9", "3.10", "3.11"], False),
]
# TensorFlow with GPU on native Windows: the plain package up to 2.10, with CUDA/cuDNN from
# conda-forge's cudatoolkit/cudnn (version, cuda, cudnn, python).
TENSORFLOW_WINDOWS_GPU = [
    ("2.10.1", "11.2", "8.1", ["3.7", "3.8", "3.9", "3.10"]),
]
# JAX: version, extra, python.
JAX = [
    # Extras and Requires-Python from the jax wheel METADATA, Python tags from the jaxlib wheels
    # (PyPI, read 2026-11-22). jax[cuda13] first appears in 0.7.0.
    ("0.9.0", "cuda13", ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t"], False),
    ("0.9.0", "cuda12", ["3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t"], False),
    ("0.7.0", "cuda13", ["3.11", "3.12", "3.13", "3.13t"], False),
    ("0.7.0", "cuda12", ["3.11", "3.12", "3.13", "3.13t"], False),
    ("0.6.0", "cuda12", ["3.10", "3.11", "3.12", "3.13", "3.13t"], False),
    ("0.5.0", "cuda12", ["3.10", "3.11", "3.12", "3.13"], False),
    ("0.4.30", "cuda12", ["3.9", "3.10", "3.11", "3.12"], False),
]
