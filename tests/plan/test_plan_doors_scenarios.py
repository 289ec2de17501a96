"""Plans that hold when followed (issue 13), against situations people reported in public threads.

Each scenario cites the thread and quotes its key facts. Expectations are the facts of the
packaged data: a no-solution names its blocker and its ways out (each with a command), a pin with
a local label picks the build it names, a capped release names the constraint that caps it,
downstream packages appear in the commands, and a failed GPU detection never plans CPU silently.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from typing import Any, Dict, List

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from tests.plan.plan_hosts import host
from tests.support.render import render_commands

from torchsmith.kb import load_kb
from torchsmith.machine import Machine, NvidiaInfo, ProbeNote
from torchsmith.overrides import apply_overrides, build_overrides, parse_gpu_spec
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import resolve

S: List[Dict[str, Any]] = [
    # --- pins with a local label ------------------------------------------------------------
    {"id": "label-cu128-2.7.1-on-rtx4090",
     "source": "https://github.com/OpenSQZ/MiniCPM-V-CookBook/issues/40",
     "facts": "pip: 'No matching distribution found for torch==2.7.1+cu128' from PyPI alone",
     "host": {"gpus": ["8.9:NVIDIA GeForce RTX 4090"], "driver": "570.133.07"},
     "request": ["torch==2.7.1+cu128"],
     "expect": {"status": "ok", "variant": "cu128", "torch": "==2.7.1",
                "command_has": "torch==2.7.1+cu128"}},
    {"id": "label-cu117-1.13.1-runs-on-a100",
     "source": "https://github.com/pytorch/pytorch/issues/96608",
     "facts": "wants torch==1.13.1+cu117 on Python 3.8/3.10; 'no matching distribution'",
     "host": {"python": "3.10", "gpus": ["8.0:NVIDIA A100-SXM4-40GB"], "driver": "515.65.01"},
     "request": ["torch==1.13.1+cu117"],
     "expect": {"status": "ok", "variant": "cu117", "torch": "==1.13.1"}},
    {"id": "label-cu117-2.0.1-from-its-index",
     "source": "https://github.com/pytorch/pytorch/issues/111716",
     "facts": "previous-versions page: torch==2.0.1+cu117 --index-url .../cu117",
     "host": {"python": "3.10", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "525.60.13"},
     "request": ["torch==2.0.1+cu117", "torchvision==0.15.2+cu117"],
     "expect": {"status": "ok", "variant": "cu117", "torch": "==2.0.1",
                "packages": {"torch", "torchvision"}}},
    {"id": "label-cu126-does-not-exist-for-2.2.0",
     "source": "https://github.com/huawei-bayerlab/GaVS/issues/6",
     "facts": "torch==2.2.0+cu126 is not on the cu126 index; pip fell back to 2.2.0+cu121",
     "host": {"gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "550.54.14"},
     "request": ["torch==2.2.0+cu126"],
     "expect": {"status": "no-solution", "blocker": "conflicts-with-requirement",
                "blocker_detail": "does not have", "door_kinds": {"release"},
                "door_command": "torch==2.2.0+cu121"}},
    {"id": "label-cu124-does-not-exist-for-2.7.0",
     "source": "https://github.com/deepbeepmeep/Wan2GP/issues/441",
     "facts": "cu124 index lists 2.4.0 … 2.6.0 only: 'No matching distribution found for torch==2.7.0'",
     "host": {"gpus": ["8.9:NVIDIA GeForce RTX 4090"], "driver": "570.133.07"},
     "request": ["torch==2.7.0+cu124"],
     "expect": {"status": "no-solution", "blocker_detail": "cu124",
                "door_command": "torch==2.7.0+cu12"}},
    {"id": "label-cu126-on-rtx5090-names-the-arch",
     "source": "https://github.com/pBFSLab/DeepPrep/issues/233",
     "facts": "RTX 5090 sm_120 'not compatible'; the install supports sm_37 … sm_90 (torch 2.0.1, CUDA 11.8)",
     "host": {"gpus": ["12.0:NVIDIA GeForce RTX 5090"], "driver": "575.57.08"},
     "request": ["torch==2.7.0+cu126"],
     "expect": {"status": "no-solution", "blocker": "arch-not-compiled",
                "blocker_constraint": "sm_120", "door_command": "torch==2.7.0+cu128"}},
    # --- Python is the blocker --------------------------------------------------------------
    {"id": "pin-1.12.0-on-python-3.12",
     "source": "https://github.com/memgraph/memgraph/issues/3687",
     "facts": "torch==1.12.0 not found 'from versions: 1.13.0 … 2.3.1'; Python 3.11.6 / 3.12",
     "host": {"python": "3.12", "gpus": ["8.6:NVIDIA GeForce RTX 3080"], "driver": "550.54.14"},
     "request": ["torch==1.12.0"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "blocker_constraint": "Python 3.12", "door_kinds": {"release", "python"},
                "door_command": "--python 3.10", "door_change": "torch==2.2.0"}},
    {"id": "python-3.12-before-2.2",
     "source": "https://github.com/pytorch/pytorch/issues/112478",
     "facts": "malfet: 'there are no binary builds for Python-3.12 yet' (torch 2.1)",
     "host": {"python": "3.12", "gpus": ["8.6:NVIDIA GeForce RTX 3060"], "driver": "535.104.05"},
     "request": ["torch<2.2"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_kinds": {"release", "python"}, "door_command": "--python 3.11"}},
    {"id": "python-3.11-and-torch-1.12",
     "source": "https://github.com/pytorch/pytorch/issues/91543",
     "facts": "Python 3.11.1: 'No matching distribution found for torch' before 1.13.1's 3.11 wheels",
     "host": {"python": "3.11", "gpus": ["7.5:NVIDIA GeForce RTX 2080"], "driver": "525.60.13"},
     "request": ["torch==1.12.1"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_change": "torch==1.13.0", "door_command": "--python 3.10"}},
    {"id": "label-cu121-2.1.0-on-python-3.12-windows",
     "source": "https://github.com/ogkalu2/comic-translate/issues/215",
     "facts": "torch==2.1.0+cu121 not found; versions start at 2.2.0 for this Python",
     "host": {"platform": "windows-x86_64", "python": "3.12", "gpus": ["8.6:NVIDIA GeForce RTX 3070"],
              "driver": "551.61"},
     "request": ["torch==2.1.0+cu121"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_command": "torch==2.2.0+cu121"}},
    {"id": "label-cu117-2.0.1-on-python-3.12",
     "source": "https://github.com/LibreTranslate/Locomotive/issues/32",
     "facts": "torch==2.0.1+cu117 'from versions: 2.2.0, 2.2.1 … 2.5.1'",
     "host": {"python": "3.12", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "535.104.05"},
     "request": ["torch==2.0.1+cu117"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_kinds": {"release", "python"}, "door_command": "--python 3.11"}},
    {"id": "label-cu118-2.1.2-python-door",
     "source": "https://github.com/Nerogar/OneTrainer/issues/138",
     "facts": "torch==2.1.2+cu118 not found on another Python; fixed by switching to Python 3.10",
     "host": {"python": "3.12", "gpus": ["8.6:NVIDIA GeForce RTX 3060"], "driver": "535.104.05"},
     "request": ["torch==2.1.2+cu118"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_kinds": {"python"}, "door_command": "torch==2.1.2+cu118"}},
    {"id": "label-cu128-2.7.0-on-python-3.14",
     "source": "https://github.com/Akegarasu/lora-scripts/issues/741",
     "facts": "cu128 index offers only 2.9.0+cu128, 2.9.1+cu128 after upgrading Python 3.10 to 3.14",
     "host": {"platform": "windows-x86_64", "python": "3.14", "gpus": ["8.9:NVIDIA GeForce RTX 4070"],
              "driver": "581.57"},
     "request": ["torch==2.7.0+cu128"],
     "expect": {"status": "no-solution", "blocker": "no-wheel-for-python",
                "door_command": "--python 3.13", "door_change": "+cu128"}},
    {"id": "label-cu113-on-macos",
     "source": "https://github.com/AILab-CVC/VideoCrafter/issues/10",
     "facts": "torch==1.12.1+cu113 not found on macOS 13.2.1",
     "host": {"platform": "macos-arm64", "python": "3.10"},
     "request": ["torch==1.12.1+cu113"],
     "expect": {"status": "no-solution", "blocker": "conflicts-with-requirement",
                "blocker_detail": "names the cu113 build", "reason": "blocked by torch==1.12.1+cu113",
                "door_change": "torch==1.12.1+cpu"}},
    # --- GPU architecture: the last binaries, a source build --------------------------------
    {"id": "k80-sm37-keeps-the-last-sm37-build",
     "source": "https://github.com/pytorch/pytorch/issues/24205",
     "facts": "soumith: builds switched 'from 3.5 to only 3.7, because K80 is the only GPU "
              "that's still being used'",
     "host": {"python": "3.10", "gpus": ["3.7:Tesla K80"], "driver": "470.82.01"},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "cuda", "variant": "cu118", "reason": "sm_37"}},
    {"id": "k80-pinned-1.6-names-the-pin-as-the-cap",
     "source": "https://github.com/pytorch/pytorch/issues/46647",
     "facts": "Tesla K80 (3.7), torch 1.6, driver 418.165.02 (CUDA 10.1)",
     "host": {"python": "3.8", "gpus": ["3.7:Tesla K80"], "driver": "418.165.02"},
     "request": ["torch==1.6.0"],
     "expect": {"status": "ok", "variant": "cu101", "reason": "torch==1.6.0 (command line) caps it"}},
    {"id": "gtx780-sm35-source-build-door",
     "source": "https://github.com/pytorch/pytorch/issues/31007",
     "facts": "GeForce GTX 780, driver 440.33.01: 'no kernel image is available for execution'",
     "host": {"python": "3.8", "gpus": ["3.5:GeForce GTX 780"], "driver": "440.33.01"},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "cpu", "door_kinds": {"build-from-source"},
                "door_change": "TORCH_CUDA_ARCH_LIST=3.5"}},
    {"id": "rtx5090-torch-2.0.1-pinned",
     "source": "https://github.com/deepseek-ai/DeepSeek-VL2/issues/59",
     "facts": "repo requires torch 2.0.1; RTX 5090 sm_120 needs a newer build",
     "host": {"gpus": ["12.0:NVIDIA GeForce RTX 5090"], "driver": "575.57.08"},
     "request": ["torch==2.0.1"],
     "expect": {"status": "no-solution", "blocker": "arch-not-compiled",
                "door_kinds": {"release", "build-from-source", "cpu"}, "door_change": "torch==2.7"}},
    {"id": "rtx50xx-torch-below-2.7",
     "source": "https://github.com/Hellod035/LeggedLab/issues/26",
     "facts": "RTX 50xx sm_120: install supports sm_50 … sm_90 only",
     "host": {"gpus": ["12.0:NVIDIA GeForce RTX 5080"], "driver": "575.57.08"},
     "request": ["torch<2.7", "torchvision"],
     "expect": {"status": "no-solution", "blocker": "arch-not-compiled",
                "door_command": "torch==2.7.0"}},
    # --- glibc --------------------------------------------------------------------------------
    {"id": "centos7-aarch64-glibc-2.17",
     "source": "https://github.com/pytorch/pytorch/issues/142043",
     "facts": "aarch64 wheels tested on CentOS 7 (glibc 2.17) before the move to manylinux 2.28",
     "host": {"platform": "linux-aarch64", "python": "3.12", "glibc": "2.17"},
     "request": ["torch"],
     "expect": {"status": "ok", "torch": "==2.5.1", "reason": "glibc 2.17"}},
    {"id": "amazon-linux-2-glibc-2.26",
     "source": "https://github.com/pytorch/pytorch/issues/126551",
     "facts": "RFC: raising the minimum glibc to 2.28 drops Amazon Linux 2 (glibc 2.26)",
     "host": {"python": "3.11", "glibc": "2.26", "gpus": ["8.6:NVIDIA A10G"], "driver": "535.104.05"},
     "request": ["torch"],
     "expect": {"status": "ok", "torch": "==2.6.0", "reason": "manylinux_2_28"}},
    {"id": "pinned-2.7-on-glibc-2.17",
     "source": "https://github.com/pytorch/pytorch/issues/123649",
     "facts": "'GLIBC_2.28' not found (required by libtorch_python.so) after the manylinux-2.28 move",
     "host": {"python": "3.10", "glibc": "2.17", "gpus": ["8.0:NVIDIA A100"], "driver": "535.104.05"},
     "request": ["torch==2.7.0"],
     "expect": {"status": "no-solution", "blocker": "glibc-too-old", "door_kinds": {"release"},
                "door_change": "torch==2.6.0"}},
    # --- Intel GPUs ----------------------------------------------------------------------------
    {"id": "arc-a770-gets-xpu",
     "source": "https://github.com/Comfy-Org/ComfyUI/pull/7767",
     "facts": "PyTorch xpu is officially supported for Intel Arc: --index-url .../whl/xpu",
     "host": {"intel": ["Intel(R) Arc(TM) A770 Graphics"]},
     "request": ["torch", "torchvision"],
     "expect": {"status": "ok", "accelerator": "xpu", "variant": "xpu", "reason": "Arc A-Series"}},
    {"id": "arc-pro-b70-pins-2.11-xpu",
     "source": "https://github.com/Physical-Intelligence/openpi/pull/1009",
     "facts": "two Intel Arc B70 GPUs, torch==2.11.0+xpu from the PyTorch XPU index",
     "host": {"intel": ["Intel Arc Pro B70"]},
     "request": ["torch==2.11.0+xpu", "torchvision==0.26.0+xpu"],
     "expect": {"status": "ok", "variant": "xpu", "torch": "==2.11.0"}},
    {"id": "arc-a770-python-3.13",
     "source": "https://github.com/talmolab/sleap-nn/issues/206",
     "facts": "Arc A770 (DG2, 8086:56A0), Python 3.13, torch 2.12.0+xpu",
     "host": {"python": "3.13", "intel": ["Intel Corporation DG2 [Arc A770]"]},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "xpu", "torch": ">=2.12"}},
    {"id": "lunar-lake-140v-windows",
     "source": "https://github.com/pytorch/pytorch/issues/138986",
     "facts": "Arc 140V on Core Ultra 9 288V (Lunar Lake), Windows, torch xpu wheels",
     "host": {"platform": "windows-x86_64", "python": "3.12", "intel": ["Intel(R) Arc(TM) 140V GPU (16GB)"]},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "xpu", "torch": ">=2.7"}},
    {"id": "alder-lake-gt1-is-not-xpu",
     "source": "https://github.com/intel/intel-extension-for-pytorch/issues/244",
     "facts": "ADL GT1 integrated GPU: 'XPU is not supported yet'",
     "host": {"intel": ["Intel(R) UHD Graphics 730 (ADL-S GT1)"]},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "cpu", "reason": "no xpu build"}},
    # --- WSL2 -----------------------------------------------------------------------------------
    {"id": "wsl2-libcuda-missing-is-said",
     "source": "https://github.com/tensorflow/tensorflow/issues/45882",
     "facts": "Ubuntu 18.04 on WSL2: 'libcuda.so.1 does not exist'",
     "host": {"platform": "wsl-x86_64", "gpus": ["8.6:NVIDIA GeForce RTX 3070"], "driver": "560.94",
              "wsl_libcuda": False},
     "request": ["torch"],
     "expect": {"status": "ok", "prerequisite": "/usr/lib/wsl/lib/libcuda.so is missing"}},
    {"id": "wsl2-old-windows-driver",
     "source": "https://github.com/microsoft/WSL/issues/7056",
     "facts": "WSL 2, 'cuda on wsl driver (geforce, driver version 470.76)'; nvidia-smi errors",
     "host": {"platform": "wsl-x86_64", "python": "3.8", "gpus": ["7.5:NVIDIA GeForce RTX 2060"],
              "driver": "465.89", "wsl_libcuda": True},
     "request": ["torch"],
     "expect": {"prerequisite": "predates CUDA on WSL"}},
    # --- downstream packages ----------------------------------------------------------------------
    {"id": "mmseg-caps-mmcv-below-2.2",
     "source": "https://github.com/open-mmlab/mmsegmentation/issues/3729",
     "facts": "'MMCV==2.2.0 is used but incompatible'; RTX 3050 Laptop, Python 3.8, torch 2.3.0+cu121",
     "host": {"python": "3.8", "gpus": ["8.6:NVIDIA GeForce RTX 3050 Laptop GPU"], "driver": "550.54.14"},
     "request": ["torch", "mmsegmentation"],
     "expect": {"status": "ok", "packages": {"mmsegmentation", "mmcv"}, "mmcv": "<2.2",
                "reason": "mmcv>=2.0.0rc4,<2.2.0", "command_has": "mmsegmentation==1.2.2"}},
    {"id": "mmseg-and-mmdet-share-mmcv",
     "source": "https://github.com/open-mmlab/mmsegmentation/issues/3763",
     "facts": "Mask2Former configs need mmdet and mmseg; Tesla T4, PyTorch 2.4.0; mmcv versions clash",
     "host": {"python": "3.10", "gpus": ["7.5:Tesla T4"], "driver": "535.104.05"},
     "request": ["torch", "mmsegmentation", "mmdet"],
     "expect": {"status": "ok", "packages": {"mmsegmentation", "mmdet", "mmcv"}, "mmcv": "<2.2"}},
    {"id": "mmseg-with-mmcv-2.2-is-refused",
     "source": "https://github.com/open-mmlab/mmsegmentation/issues/3785",
     "facts": "'Why not use MMCV==2.2.0?' — mmseg's __init__ caps it",
     "host": {"python": "3.10", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "550.54.14"},
     "request": ["mmsegmentation", "mmcv==2.2.0"],
     "expect": {"status": "no-solution", "blocker": "conflicts-with-requirement",
                "blocker_constraint": "mmcv==2.2.0", "blocker_detail": "mmsegmentation 1.2.2 needs mmcv",
                "door_kinds": {"requirement"}, "door_command": "torchsmith plan mmsegmentation"}},
    {"id": "vllm-0.7.3-pins-torch-2.5.1",
     "source": "https://github.com/hiyouga/EasyR1/issues/27",
     "facts": "'vllm 0.7.3 requires torch==2.5.1, but you have torch 2.4.0+cu124'",
     "host": {"python": "3.11", "gpus": ["9.0:NVIDIA H100 80GB HBM3"], "driver": "550.54.14"},
     "request": ["torch", "vllm==0.7.3"],
     "expect": {"status": "ok", "torch": "==2.5.1", "packages": {"vllm"}, "reason": "vllm==0.7.3",
                "command_has": "vllm==0.7.3"}},
    {"id": "vllm-0.7.3-with-torch-2.6-no-solution",
     "source": "https://github.com/vllm-project/vllm/issues/12719",
     "facts": "'vllm deps seems to hardcode pytorch version 2.5.1' while 2.6 is released",
     "host": {"python": "3.11", "gpus": ["8.9:NVIDIA L40S"], "driver": "550.54.14"},
     "request": ["torch==2.6.0", "vllm==0.7.3"],
     "expect": {"status": "no-solution", "blocker": "conflicts-with-requirement",
                "blocker_constraint": "vllm", "door_kinds": {"release", "requirement"},
                "door_change": "torch==2.5.1"}},
    {"id": "vllm-0.8.5-pins-torch-2.6.0",
     "source": "https://github.com/LMCache/LMCache/pull/583",
     "facts": "'latest vLLM is v0.8.5.post1. This requires torch v2.6.0'",
     "host": {"python": "3.12", "gpus": ["8.0:NVIDIA A100-SXM4-80GB"], "driver": "550.54.14"},
     "request": ["vllm==0.8.5"],
     "expect": {"status": "ok", "torch": "==2.6.0", "packages": {"vllm"}}},
    {"id": "vllm-past-the-table-planned-from-its-metadata",
     "source": "https://github.com/vllm-project/vllm/issues/35462",
     "facts": "vllm v0.16.0 still relies on torch 2.9.1 (its Requires-Dist: torch==2.9.1)",
     "host": {"python": "3.12", "gpus": ["9.0:NVIDIA H100"], "driver": "580.65.06"},
     "request": ["vllm==0.16.0"],
     "expect": {"status": "ok", "torch": "==2.9.1", "packages": {"vllm"}}},
    {"id": "flash-attn-after-torch-no-build-isolation",
     "source": "https://github.com/Dao-AILab/flash-attention/issues/1421",
     "facts": "'pip install flash_attn does not work … even if I install torch first' "
              "(torch 2.5.1, Python 3.10)",
     "host": {"python": "3.10", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "550.54.14"},
     "request": ["torch==2.5.1", "flash-attn"],
     "expect": {"status": "ok", "packages": {"flash-attn"}, "command_has": "--no-build-isolation"}},
    {"id": "flash-attn-2.8.3-sdist-only",
     "source": "https://github.com/Dao-AILab/flash-attention/issues/1920",
     "facts": "'Using cached flash_attn-2.8.3.tar.gz' then 'No module named torch' at build",
     "host": {"python": "3.12", "gpus": ["8.9:NVIDIA GeForce RTX 4090"], "driver": "570.133.07"},
     "request": ["torch", "flash-attn"],
     "expect": {"status": "ok", "command_has": "--no-build-isolation", "torch": "<2.9"}},
    {"id": "flash-attn-never-on-cpu-torch",
     "source": "https://github.com/whyNLP/LCKV/issues/17",
     "facts": "uv: 'flash-attn@2.8.1 depends on torch … re-run with --no-build-isolation'",
     "host": {"python": "3.11"},
     "request": ["torch", "flash-attn"],
     "expect": {"status": "no-solution", "blocker": "no-gpu-support", "door_kinds": {"flag"}}},
    {"id": "detectron2-built-after-torch",
     "source": "https://github.com/facebookresearch/detectron2/issues/5228",
     "facts": "'Detectron doesn't include torch as a formal dependency': fresh installs crash in setup.py",
     "host": {"python": "3.10", "gpus": ["8.6:NVIDIA GeForce RTX 3090"], "driver": "550.54.14"},
     "request": ["torch", "detectron2"],
     "expect": {"status": "ok", "packages": {"detectron2"}, "command_has": "--no-build-isolation",
                "last_command_has": "detectron2"}},
    {"id": "detectron2-on-rtx5060",
     "source": "https://github.com/facebookresearch/detectron2/issues/5501",
     "facts": "torch 2.9.0+cu130 works; pip install git+…detectron2 fails: No module named 'torch'",
     "host": {"python": "3.10", "gpus": ["12.0:NVIDIA GeForce RTX 5060"], "driver": "580.65.06"},
     "request": ["torch", "detectron2"],
     "expect": {"status": "ok", "variant_prefix": "cu1", "command_has": "--no-build-isolation"}},
    # --- Jetson --------------------------------------------------------------------------------------
    {"id": "jetpack-5.1.2-python-3.10",
     "source": "https://github.com/dusty-nv/jetson-inference/issues/1932",
     "facts": "JetPack 5.1.2: the install script 'only offers pytorch for python 3.8'; needs Python 3.10",
     "host": {"platform": "linux-aarch64", "python": "3.10", "jetson": "35.4.1", "jetson_cc": "8.7"},
     "request": ["torch"],
     "expect": {"status": "no-solution", "blocker": "no-jetpack-wheel", "door_kinds": {"python"},
                "door_command": "--python 3.8"}},
    {"id": "jetpack-6.1-torch-2.6-needed",
     "source": "https://github.com/huggingface/lerobot/issues/819",
     "facts": "lerobot needs torchvision>0.21 (torch>2.6); 'Latest nvidia torch version is 2.5 "
              "(for jetpack 6.1)'",
     "host": {"platform": "linux-aarch64", "python": "3.10", "jetson": "36.4.0", "jetson_cc": "8.7"},
     "request": ["torch>=2.6"],
     "expect": {"status": "no-solution", "blocker": "no-jetpack-wheel", "blocker_detail": "torch>=2.6",
                "door_kinds": {"container", "build-from-source"}}},
    # --- requested packages never dropped ---------------------------------------------------------
    {"id": "explicit-torchaudio-is-kept",
     "source": "https://github.com/Comfy-Org/ComfyUI/issues/14232",
     "facts": "'for the latest cuda version cu132 there's no stable torchaudio wheel available'",
     "host": {"python": "3.12", "gpus": ["8.9:NVIDIA GeForce RTX 4090"], "driver": "580.65.06"},
     "request": ["torch", "torchvision", "torchaudio"], "explicit": True,
     "expect": {"status": "ok", "packages": {"torch", "torchvision", "torchaudio"},
                "not_variant": "cu132", "reason": "torchaudio"}},
    # --- describing another machine; failed detection -----------------------------------------
    {"id": "driver-alone-implies-a-gpu",
     "source": "https://github.com/ci-for-research/self-hosted-runners/issues/40",
     "facts": "'Nvidia driver (version 440) is already installed' but nvidia-smi fails",
     "host": {"python": "3.8", "driver": "440.33.01"},
     "request": ["torch"],
     "expect": {"status": "ok", "accelerator": "cuda", "assumption": "unknown model"}},
    {"id": "nvidia-smi-failed-is-not-no-gpu",
     "source": "https://github.com/pytorch/pytorch/issues/67991",
     "facts": "'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver'",
     "host": {"python": "3.9", "smi_failed": "NVIDIA-SMI has failed because it couldn't communicate "
                                               "with the NVIDIA driver"},
     "request": ["torch"],
     "expect": {"status": "no-solution", "blocker": "gpu-detection-failed",
                "door_kinds": {"flag", "cpu"}, "reason": "--no-gpu"}},
    {"id": "driver-loaded-no-gpu-listed",
     "source": "https://github.com/mattshma/bigdata/issues/133",
     "facts": "dmesg 'NVRM: No NVIDIA graphics adapter probed!' while lspci lists NVIDIA devices",
     "host": {"python": "3.10", "loaded_driver_no_gpu": "384.81"},
     "request": ["torch"],
     "expect": {"status": "no-solution", "blocker": "gpu-detection-failed"}},
]


def machine_for(spec: Dict[str, Any]) -> Machine:
    spec = dict(spec)
    glibc = spec.pop("glibc", None)
    wsl_libcuda = spec.pop("wsl_libcuda", None)
    smi_failed = spec.pop("smi_failed", None)
    loaded = spec.pop("loaded_driver_no_gpu", None)
    machine = host(**spec)
    if glibc or wsl_libcuda is not None:
        machine = dataclasses.replace(machine, os=dataclasses.replace(
            machine.os, glibc=glibc or machine.os.glibc, wsl_libcuda=wsl_libcuda))
    if smi_failed:  # as the probe leaves it: no GPU, and a note saying why
        machine = machine.with_note("nvidia-smi", smi_failed)
    if loaded:
        machine = dataclasses.replace(machine, nvidia=NvidiaInfo(
            driver_version=loaded, driver_version_source="/proc/driver/nvidia/version"))
        machine = machine.with_note("nvidia", f"driver {loaded} is loaded but no GPU could be listed")
    return machine


@pytest.fixture(scope="module")
def kb() -> Any:
    return load_kb()


def _commands(plan: Plan) -> List[str]:
    return render_commands(plan).get("pip", []) if plan.ok else []


def check(plan: Plan, expect: Dict[str, Any]) -> None:
    doors = plan.alternatives
    text = "\n".join([f"status {plan.status} {plan.variant} {plan.blocker}", *plan.reasons,
                      *(f"door {d}" for d in doors), *plan.warnings, *plan.assumptions])
    if "status" in expect:
        assert plan.status == expect["status"], text
    if plan.status == "no-solution":  # every dead end names its blocker
        assert plan.blocker is not None, text
    if "variant" in expect:
        assert plan.variant == expect["variant"], text
    if "variant_prefix" in expect:
        assert (plan.variant or "").startswith(expect["variant_prefix"]), text
    if "not_variant" in expect:
        assert plan.variant != expect["not_variant"], text
    if "accelerator" in expect:
        assert plan.accelerator == expect["accelerator"], text
    if "torch" in expect:
        torch = plan.package("torch")
        assert torch is not None and Version(torch.version) in SpecifierSet(expect["torch"]), text
    if "mmcv" in expect:
        mmcv = plan.package("mmcv")
        assert mmcv is not None and Version(mmcv.version) in SpecifierSet(expect["mmcv"]), text
    if "packages" in expect:
        assert expect["packages"] <= {p.name for p in plan.packages}, text
    if "not_package" in expect:
        assert expect["not_package"] not in [p.requirement for p in plan.packages], text
    if "blocker" in expect:
        assert plan.blocker is not None and plan.blocker.code == expect["blocker"], text
    if "blocker_in" in expect:
        assert plan.blocker is not None and plan.blocker.code in expect["blocker_in"], text
    if "blocker_constraint" in expect:
        assert plan.blocker is not None and expect["blocker_constraint"] in plan.blocker.constraint, text
    if "blocker_detail" in expect:
        assert plan.blocker is not None and expect["blocker_detail"] in plan.blocker.detail, text
    if "door_kinds" in expect:
        assert expect["door_kinds"] <= {d.kind for d in doors}, text
    if "door_command" in expect:
        assert any(expect["door_command"] in d.command for d in doors), text
    if "door_change" in expect:
        assert any(expect["door_change"] in d.change for d in doors), text
    if doors:  # every way out carries something to do
        assert all(d.command and d.change for d in doors), text
    if "reason" in expect:
        assert any(expect["reason"] in r for r in plan.reasons), text
    if "prerequisite" in expect:
        assert any(expect["prerequisite"] in p for p in plan.system_prerequisites), text
    if "assumption" in expect:
        assert any(expect["assumption"] in a for a in plan.assumptions), text
    commands = _commands(plan)
    if "command_has" in expect:
        assert any(expect["command_has"] in c for c in commands), "\n".join(commands) + text
    if "last_command_has" in expect:
        assert commands and expect["last_command_has"] in commands[-1], "\n".join(commands)


@pytest.mark.parametrize("scenario", S, ids=[s["id"] for s in S])
def test_scenario(scenario: Dict[str, Any], kb: Any) -> None:
    assert scenario["source"].startswith("https://github.com/") and scenario["facts"]
    request = Request(requirements=tuple(scenario["request"]), explicit=scenario.get("explicit", True))
    check(resolve(machine_for(scenario["host"]), request, kb), scenario["expect"])


def test_scenarios_are_new_and_distinct() -> None:
    """None is copied from the other scenario tables, and no thread is cited twice here."""
    from tests.plan import test_resolve_scenarios as older

    sources = [s["source"] for s in S]
    assert len(S) >= 40 and len(set(sources)) == len(sources)
    assert not set(sources) & {s["source"] for s in older.S}


def test_describing_another_platform_never_carries_this_machines_gpu(kb: Any) -> None:
    """--platform for another machine: the local GPU/driver are dropped and the plan says so."""
    here = host(gpus=["8.6:NVIDIA GeForce RTX 3090"], driver="550.54.14")
    there = apply_overrides(here, build_overrides(platform="windows-x86_64"))
    assert there.nvidia is None
    plan = resolve(there, Request(), kb)
    assert plan.accelerator == "cpu"
    assert any("GPUs: none stated" in a for a in plan.assumptions)
    assert any("Python: not stated" in a for a in plan.assumptions)


def test_gpu_nvidia_unknown_model_covers_the_drivers_era(kb: Any) -> None:
    machine = apply_overrides(host(), build_overrides(gpus=(parse_gpu_spec("nvidia"),),
                                                      driver="575.57.08"))
    plan = resolve(machine, Request(), kb)
    assert plan.ok and plan.accelerator == "cuda"
    assert any("every architecture of the driver's era" in a for a in plan.assumptions)
    assert any("sm_120" in r for r in plan.reasons)  # Blackwell is of this driver's era


def test_unknown_driver_prefers_the_widest_driver_range(kb: Any) -> None:
    request = Request(requirements=("torch<2.15",), explicit=True)
    plan = resolve(host(gpus=["8.6:NVIDIA GeForce RTX 3090"]), request, kb)
    assert plan.ok and plan.variant == "cu126"  # not cu130/cu132, which need a newer driver
    assert any("needs driver ≥" in w and "cu130" in w for w in plan.warnings)


@pytest.mark.parametrize("package", ["vllm", "flash-attn"])
def test_a_cuda_only_package_is_never_planned_on_the_cpu_fallback(package: str, kb: Any) -> None:
    """An NVIDIA GPU no CUDA build can use with this driver: the CPU torch planned instead cannot
    load a CUDA-only package, so the plan is a dead end that names the driver, not a CPU stack."""
    request = Request(requirements=("torch", package), explicit=True)
    old_driver = resolve(host(gpus=["12.0:NVIDIA GeForce RTX 5090"], driver="535.104.05"), request, kb)
    assert not old_driver.ok and old_driver.blocker is not None
    assert old_driver.blocker.code == "no-gpu-support" and "570" in old_driver.blocker.detail
    assert not any(p.name == package for p in old_driver.packages)
    new_driver = resolve(host(gpus=["12.0:NVIDIA GeForce RTX 5090"], driver="580.65.06"), request, kb)
    assert new_driver.ok and new_driver.accelerator == "cuda"


def test_failed_detection_is_refused_by_doctor_too() -> None:
    from torchsmith.doctor.checks import check_gpu_build_on_cpu_host, check_gpu_detection_failed

    machine = Machine().with_note("nvidia-smi", "timed out after 10 s")
    finding = check_gpu_detection_failed({}, machine, None)
    assert finding is not None and "timed out" in finding.facts[0].text
    report = {"torch": {"version": "2.5.1+cu124", "cuda": "12.4"}}
    assert check_gpu_build_on_cpu_host(report, machine, None) is None  # not "no GPU"
    assert check_gpu_detection_failed({}, Machine().with_note("nvidia-smi", "nvidia-smi not found on "
                                                                            "PATH"), None) is None
    stated = dataclasses.replace(machine, overridden=("no-gpu",))
    assert check_gpu_detection_failed({}, stated, None) is None


def test_plan_json_carries_blocker_and_alternatives(kb: Any) -> None:
    machine = host(python="3.12", gpus=["8.6:NVIDIA GeForce RTX 3080"], driver="550.54.14")
    plan = resolve(machine, Request(requirements=("torch==1.12.0",), explicit=True), kb)
    data = plan.to_json({})
    assert data["blocker"]["code"] == "no-wheel-for-python"
    assert {"kind", "summary", "change", "command"} <= set(data["alternatives"][0])
    assert data["assumptions"] == []


def test_probe_note_sources_other_than_nvidia_are_not_detection_failures() -> None:
    from torchsmith.plan.detection import detection_failure

    assert detection_failure(Machine(notes=(ProbeNote("rocminfo", "timed out"),))) is None


def test_cli_glibc_flag_and_environment_block_a_manylinux_2_28_pin(tmp_path, capsys,
                                                                   monkeypatch) -> None:
    """--glibc 2.17 (a CentOS 7 node) refuses torch 2.7's manylinux_2_28 wheels, with the door."""
    import json

    from torchsmith.cli import main

    path = tmp_path / "node.json"
    path.write_text(json.dumps(host(python="3.10", gpus=["8.0:NVIDIA A100"],
                                    driver="535.104.05").to_json()), encoding="utf-8")
    code = main(["plan", "--host", str(path), "--glibc", "2.17", "--json", "torch==2.7.0"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 3 and data["blocker"]["code"] == "glibc-too-old"
    assert any("torch==2.6.0" in d["command"] for d in data["alternatives"])
    monkeypatch.setenv("TORCHSMITH_GLIBC", "2.17")
    code = main(["plan", "--host", str(path), "--json", "torch"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and data["packages"][0]["version"] == "2.6.0"


def test_cli_gpu_nvidia_and_bad_glibc(tmp_path, capsys) -> None:
    import json

    from torchsmith.cli import main

    path = tmp_path / "box.json"
    path.write_text(json.dumps(host(python="3.11").to_json()), encoding="utf-8")
    code = main(["plan", "--host", str(path), "--gpu", "nvidia", "--driver", "570.133.07", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and data["accelerator"] == "cuda" and data["assumptions"]
    assert main(["plan", "--host", str(path), "--glibc", "two", "--json"]) == 2
    capsys.readouterr()


def test_matrix_says_detection_failed_not_no_gpu(kb: Any) -> None:
    from torchsmith.plan.resolve import matrix

    machine = host().with_note("nvidia-smi", "Failed to initialize NVML: Driver/library version mismatch")
    rows = [r for r in matrix(machine, kb, releases=1) if r.kind == "cuda"]
    assert rows and all(r.code == "gpu-detection-failed" and "mismatch" in r.reason for r in rows)


def test_cli_jetson_described_from_a_workstation_assumes_the_jetpack_python(capsys, monkeypatch) -> None:
    """`plan --jetson L4T` on another machine: not this machine's Python, and said so."""
    import json

    from torchsmith.cli import main

    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX", "TORCHSMITH_PYTHON_VERSION"):
        monkeypatch.delenv(variable, raising=False)
    code = main(["plan", "--fresh", "--jetson", "35.2.1", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 0 and data["accelerator"] == "jetson"
    assert any("JetPack's own system Python" in a for a in data["assumptions"])


def test_gpu_facts_given_by_hand_say_which_local_facts_were_kept(kb: Any) -> None:
    # --gpu/--driver may describe another machine of this platform: this machine's Python and
    # glibc are kept, but said, never silently used.
    local = Machine(os=dataclasses.replace(Machine().os, system="linux", arch="x86_64", glibc="2.36"),
                    python=dataclasses.replace(Machine().python, version="3.11.7"))
    gpu = (parse_gpu_spec("8.6", 0),)
    described = apply_overrides(local, build_overrides(gpus=gpu, driver="550.54.14"))
    notes = [n.problem for n in described.notes if n.source == "assumed"]
    assert any(n.startswith("Python: not stated (--python X.Y): assumed 3.11, this machine's") for n in notes)
    assert any(n.startswith("glibc: not stated (--glibc X.Y): assumed 2.36, this machine's") for n in notes)
    plan = resolve(described, Request(), kb)
    assert any(a.startswith("glibc: not stated") for a in plan.assumptions)
    stated = apply_overrides(local, build_overrides(gpus=gpu, driver="550.54.14", python_version="3.12",
                                                    glibc="2.28"))
    assert not [n for n in stated.notes if n.source == "assumed"]
    assert not [n for n in apply_overrides(local, build_overrides()).notes if n.source == "assumed"]


def test_every_way_out_is_a_command_that_works_for_the_described_machine(
        capsys: pytest.CaptureFixture[str]) -> None:
    from torchsmith.cli import main

    described = ["--python", "3.12", "--gpu", "8.6:RTX 3090", "--driver", "550.54.14",
                 "--platform", "linux-x86_64", "--glibc", "2.35"]
    assert main(["plan", "--json", "torch==1.12.0", *described]) == 3
    doors = json.loads(capsys.readouterr().out)["data"]["alternatives"]
    assert doors
    for door in doors:
        argv = shlex.split(door["command"])
        assert argv[:2] == ["torchsmith", "plan"]
        assert {"--gpu", "--driver", "--platform", "--glibc"} <= set(argv), door
        # Run as written: each way out really plans for the machine described.
        assert main([*argv[1:], "--json"]) == 0, door
        data = json.loads(capsys.readouterr().out)["data"]
        assert data["host"]["platform"] == "linux-x86_64" and data["packages"][0]["name"] == "torch"
