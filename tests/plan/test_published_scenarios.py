"""Public reports planned from the packages' own published metadata.

Each scenario is a public thread (cited) whose facts the plan must match: what the package pins,
which torch it pairs with, or why nothing works. The packages in no hand-kept table get their
metadata from ``scenario_meta.json`` (the packages' PEP 691 pages and core metadata, read by
tools/package_snapshot.py; see its ``about``), handed to the planner as a live read would be;
the packages the tables name use the shipped snapshot. No rule was written for these threads:
the expectations are the threads' facts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from packaging.specifiers import SpecifierSet
from tests.plan.plan_hosts import host

from torchsmith.kb import load_kb
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, canonical
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.request import parse_requirements
from torchsmith.plan.resolve import resolve

KB = load_kb(packaged_only=True)
FIXTURE = json.loads((Path(__file__).resolve().parent / "scenario_meta.json").read_text("utf-8"))
RECORDS = {canonical(p["name"]): PackageRecord.from_json(p, live=True) for p in FIXTURE["packages"]}

A100 = ["8.0:NVIDIA A100-SXM4-80GB"]
H100 = ["9.0:NVIDIA H100 80GB HBM3"]
RTX3090 = ["8.6:NVIDIA GeForce RTX 3090"]
RTX4090 = ["8.9:NVIDIA GeForce RTX 4090"]


def _page(name: str, source: str, versions: List[str]) -> PackageRecord:
    """A wheel page with the files a thread names (its index is not reachable from here)."""
    releases = tuple(ReleaseRecord(v, (), ">=3.9", ("cp39-abi3-linux_x86_64",), False, "none")
                     for v in versions)
    return PackageRecord(name, source, "2026-11-26", releases, live=True)


FLASHINFER_1965 = _page("flashinfer-python", "https://github.com/flashinfer-ai/flashinfer/issues/1965",
                        ["0.2.11+cu126torch2.7"])
FLASHINFER_1002 = _page("flashinfer-python", "https://github.com/flashinfer-ai/flashinfer/issues/1002",
                        ["0.2.5+cu124torch2.5", "0.2.5+cu126torch2.6"])

# In no table today: planned from the package's own metadata.
UNTABLED: List[Dict[str, Any]] = [
    {"id": "torch-tensorrt-keeps-the-installed-torch-2.4.1",
     "source": "https://github.com/pytorch/TensorRT/issues/3351",
     "facts": "torch 2.4.1 installed; how to install torch_tensorrt without changing pytorch "
              "(2.4.0 was used)",
     "host": {"python": "3.10", "gpus": RTX3090, "driver": "550.54.14"},
     "request": ["torch==2.4.1", "torch-tensorrt"],
     "expect": {"status": "ok", "torch": "==2.4.1", "pins": {"torch-tensorrt": "2.4.0"}}},
    {"id": "sglang-srt-post3-pins-torch-2.7.1",
     "source": "https://github.com/bytedance-iaas/sglang/pull/222",
     "facts": "sglang[srt] 0.4.9.post3 depends on torch==2.7.1; extra == \"srt\"",
     "host": {"python": "3.11", "gpus": H100, "driver": "570.86.10"},
     "request": ["sglang[srt]==0.4.9.post3"],
     "expect": {"status": "ok", "torch": "==2.7.1", "pins": {"sglang": "0.4.9.post3"}}},
    {"id": "sglang-srt-post1-pins-torch-2.7.1",
     "source": "https://github.com/flashinfer-ai/flashinfer/issues/1408",
     "facts": "the sglang version (0.4.9.post1) I'm using depends on torch==2.7.1",
     "host": {"python": "3.10", "gpus": A100, "driver": "570.86.10"},
     "request": ["sglang[srt]==0.4.9.post1"],
     "expect": {"status": "ok", "torch": "==2.7.1"}},
    {"id": "sglang-without-srt-does-not-pin-torch",
     "source": "https://github.com/bytedance-iaas/sglang/pull/222",
     "facts": "the torch pin is under extra == \"srt\" only",
     "host": {"python": "3.11", "gpus": H100, "driver": "570.86.10"},
     "request": ["torch==2.8.0", "sglang==0.4.9.post3"],
     "expect": {"status": "ok", "torch": "==2.8.0", "pins": {"sglang": "0.4.9.post3"}}},
    {"id": "unsloth-zoo-needs-torch-2.4-over-a-torch-2.2-pin",
     "source": "https://github.com/unslothai/unsloth/issues/1136",
     "facts": "PyTorch 2.2.0 ... unsloth-zoo 2024.10.1 depends on torch>=2.4.0",
     "host": {"python": "3.10", "gpus": A100, "driver": "535.129.03"},
     "request": ["torch==2.2.0", "unsloth-zoo==2024.10.1"],
     "expect": {"status": "no-solution", "text": "torch>=2.4.0"}},
    {"id": "unsloth-2026.3.8-beside-torch-2.10",
     "source": "https://github.com/unslothai/unsloth/issues/4518",
     "facts": "unsloth 2026.3.8: Requirement already satisfied: torch>=2.4.0 ... (2.10.0)",
     "host": {"platform": "windows-x86_64", "python": "3.12", "gpus": RTX4090, "driver": "580.88"},
     "request": ["torch==2.10.0", "unsloth==2026.3.8"],
     "expect": {"status": "ok", "torch": "==2.10.0", "pins": {"unsloth": "2026.3.8"}}},
    {"id": "torchtext-for-torch-2.0.1-is-0.15.2",
     "source": "https://github.com/the-full-stack/fsdl-text-recognizer-2022/issues/80",
     "facts": "torch 2.0.1 and torchtext 0.16.0 are incompatible; downgrading torchtext to 0.15.2 solves it",
     "host": {"python": "3.10", "gpus": ["7.5:Tesla T4"], "driver": "525.105.17"},
     "request": ["torch==2.0.1", "torchtext"],
     "expect": {"status": "ok", "torch": "==2.0.1", "pins": {"torchtext": "0.15.2"}}},
    {"id": "torchtext-0.16.0-brings-torch-2.1.0",
     "source": "https://github.com/the-full-stack/fsdl-text-recognizer-2022/issues/80",
     "facts": "torchtext 0.16.0 does not go with torch 2.0.1 (it needs the next torch)",
     "host": {"python": "3.10", "gpus": ["7.5:Tesla T4"], "driver": "525.105.17"},
     "request": ["torchtext==0.16.0"],
     "expect": {"status": "ok", "torch": "==2.1.0"}},
    {"id": "speechlib-pins-torch-2.1.2",
     "source": "https://github.com/NavodPeiris/speechlib/issues/22",
     "facts": "pip resolves torch==2.1.2 from speechlib (torch==2.1.2->speechlib)",
     "host": {"python": "3.10", "gpus": ["7.5:Tesla T4"], "driver": "535.104.05"},
     "request": ["speechlib==1.1.0"],
     "expect": {"status": "ok", "torch": "==2.1.2", "pins": {"speechlib": "1.1.0"}}},
    {"id": "crosslingual-coreference-needs-torch-1.10",
     "source": "https://github.com/davidberenstein1957/crosslingual-coreference/issues/28",
     "facts": "crosslingual-coreference 0.2.0-0.2.5 depend on torch<1.11.0 and >=1.10.0",
     "host": {"python": "3.9", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["crosslingual-coreference>=0.2.0,<=0.2.5"],
     "expect": {"status": "ok", "torch": ">=1.10.0,<1.11.0"}},
    {"id": "crosslingual-coreference-on-python-3.12-has-no-torch",
     "source": "https://github.com/davidberenstein1957/crosslingual-coreference/issues/28",
     "facts": "its torch<1.11 pin cannot be met with a modern PyTorch (Support a modern PyTorch version)",
     "host": {"python": "3.12", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["crosslingual-coreference>=0.2.0,<=0.2.5"],
     "expect": {"status": "no-solution"}},
    {"id": "torchrl-0.4-with-tensordict-0.4-and-torch-2.3",
     "source": "https://github.com/pytorch/rl/issues/2124",
     "facts": "Successfully installed ... tensordict-0.4.0 torch-2.3.0 torchrl-0.4.0",
     "host": {"python": "3.10", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torchrl==0.4.0", "tensordict==0.4.0"],
     "expect": {"status": "ok", "torch": ">=2.3.0", "pins": {"torchrl": "0.4.0", "tensordict": "0.4.0"}}},
    {"id": "torchrl-before-0.4-with-torch-2.2",
     "source": "https://github.com/pytorch/rl/issues/2035",
     "facts": "torchrl from pip with tensordict; torchrl 0.3.x requires torch>=2.1",
     "host": {"python": "3.11", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torch==2.2.2", "torchrl<0.4"],
     "expect": {"status": "ok", "torch": "==2.2.2", "pins": {"torchrl": "0.3.1"}}},
    {"id": "torchdata-0.7.1-works",
     "source": "https://github.com/TencentARC/SEED-Story/issues/24",
     "facts": "I used torchdata=0.7.1, it works",
     "host": {"python": "3.10", "gpus": A100, "driver": "535.104.05"},
     "request": ["torchdata==0.7.1"],
     "expect": {"status": "ok", "torch": ">=2", "pins": {"torchdata": "0.7.1"}}},
    {"id": "torchdata-0.9.0-needs-python-3.9",
     "source": "https://github.com/LostXine/open_x_pytorch_dataloader/issues/1",
     "facts": "torchdata should be set to torchdata=0.9.0",
     "host": {"python": "3.8", "gpus": A100, "driver": "535.104.05"},
     "request": ["torchdata==0.9.0"],
     "expect": {"status": "no-solution", "text": "Requires-Python >=3.9"}},
    {"id": "flashinfer-cu126torch2.7-refuses-torch-2.8",
     "source": "https://github.com/flashinfer-ai/flashinfer/issues/1965",
     "facts": "flashinfer-python 0.2.11+cu126torch2.7 requires torch==2.7.*, but torch 2.8.0+cu126 "
              "is installed",
     "host": {"python": "3.11", "gpus": RTX4090, "driver": "570.86.10"},
     "request": ["torch==2.8.0", "flashinfer-python==0.2.11"], "records": [FLASHINFER_1965],
     "expect": {"status": "no-solution", "text": "torch 2.7 + CUDA 12.6"}},
    {"id": "flashinfer-cu126torch2.7-pairs-with-torch-2.7-cu126",
     "source": "https://github.com/flashinfer-ai/flashinfer/issues/1965",
     "facts": "the wheel is built for torch 2.7 + CUDA 12.6 (its local label)",
     "host": {"python": "3.11", "gpus": RTX4090, "driver": "570.86.10"},
     "request": ["flashinfer-python==0.2.11"], "records": [FLASHINFER_1965],
     "expect": {"status": "ok", "torch": "~=2.7.0", "variant": "cu126",
                "pins": {"flashinfer-python": "0.2.11+cu126torch2.7"}}},
    {"id": "flashinfer-torch-2.6-cu126-takes-the-cu126torch2.6-wheel",
     "source": "https://github.com/flashinfer-ai/flashinfer/issues/1002",
     "facts": "torch 2.6 + cu126: use the cu126/torch2.6 index, not cu124/torch2.5",
     "host": {"python": "3.10", "gpus": RTX4090, "driver": "560.35.03"},
     "request": ["torch==2.6.0", "flashinfer-python"], "records": [FLASHINFER_1002],
     "expect": {"status": "ok", "torch": "==2.6.0", "variant": "cu126",
                "pins": {"flashinfer-python": "0.2.5+cu126torch2.6"}}},
    {"id": "whisperx-3.8.5-pins-torch-2.8-on-windows",
     "source": "https://github.com/m-bain/whisperX/issues/1398",
     "facts": "pip install whisperx: whisperx-3.8.5 ... Collecting torch~=2.8.0 (cp311 win_amd64)",
     "host": {"platform": "windows-x86_64", "python": "3.11"},
     "request": ["whisperx==3.8.5"],
     "expect": {"status": "ok", "torch": "~=2.8.0", "pins": {"whisperx": "3.8.5"}}},
    {"id": "whisperx-3.8-refuses-torch-2.9.1",
     "source": "https://github.com/m-bain/whisperX/issues/1374",
     "facts": "Can whisperx 3.8 support torch==2.9.1? (it pins torch to the 2.8 series)",
     "host": {"python": "3.12", "gpus": RTX4090, "driver": "580.65.06"},
     "request": ["torch==2.9.1", "whisperx~=3.8.0"],
     "expect": {"status": "no-solution", "text": "torch~=2.8.0"}},
    {"id": "pytorch-lightning-2.5-needs-torch-2.1",
     "source": "https://github.com/m-bain/whisperX/issues/1051",
     "facts": "pytorch-lightning requires torch>=2.1.0, which forces torch above 2.0.0",
     "host": {"python": "3.10", "gpus": A100, "driver": "535.104.05"},
     "request": ["torch==2.0.0", "pytorch-lightning==2.5.0"],
     "expect": {"status": "no-solution", "text": "torch>=2.1.0"}},
    {"id": "kornia-peft-gliner-beside-torch-2.6",
     "source": "https://github.com/tenstorrent/tt-forge/pull/102",
     "facts": "kornia 0.8.0 depends on torch>=1.9.1; peft 0.15.1 on torch>=1.13.0; "
              "gliner 0.2.16 on torch>=2.0.0",
     "host": {"python": "3.10"},
     "request": ["torch==2.6.0", "kornia==0.8.0", "peft==0.15.1", "gliner==0.2.16"],
     "expect": {"status": "ok", "torch": "==2.6.0",
                "pins": {"kornia": "0.8.0", "peft": "0.15.1", "gliner": "0.2.16"}}},
    {"id": "liger-kernel-0.2.1-beside-torch-2.4.0-cu118",
     "source": "https://github.com/linkedin/Liger-Kernel/pull/226",
     "facts": "torch>=2.1.2 ... already satisfied (2.4.0+cu118); triton>=2.3.0 (3.0.0)",
     "host": {"python": "3.10", "gpus": A100, "driver": "520.61.05"},
     "request": ["torch==2.4.0", "liger-kernel==0.2.1"],
     "expect": {"status": "ok", "torch": "==2.4.0", "variant": "cu118", "pins": {"liger-kernel": "0.2.1"}}},
    {"id": "audio-separator-caps-torch-below-what-an-rtx-5060-needs",
     "source": "https://github.com/morettt/my-neuro/issues/215",
     "facts": "audio-separator 0.28.5 requires torch<2.5,>=2.3, but the RTX 5060 needs a newer torch",
     "host": {"python": "3.11", "gpus": ["12.0:NVIDIA GeForce RTX 5060"], "driver": "576.02"},
     "request": ["audio-separator==0.28.5"],
     "expect": {"status": "no-solution", "text": "torch<2.5,>=2.3"}},
    {"id": "accelerate-0.18-beside-torch-2.0-and-torchvision-0.15.1",
     "source": "https://github.com/showlab/Show-1/issues/18",
     "facts": "The user requested torch==2.0.0; accelerate 0.18.0 depends on torch>=1.4.0",
     "host": {"python": "3.10", "gpus": A100, "driver": "525.105.17"},
     "request": ["torch==2.0.0", "torchvision==0.15.1", "accelerate==0.18.0"],
     "expect": {"status": "ok", "torch": "==2.0.0", "pins": {"accelerate": "0.18.0"}}},
]

# In a table today; newer releases and exact versions come from the shipped snapshot.
TABLED: List[Dict[str, Any]] = [
    {"id": "vllm-0.7.3-pins-torch-2.5.1",
     "source": "https://github.com/hiyouga/EasyR1/issues/27",
     "facts": "vllm 0.7.3 requires torch==2.5.1, but you have torch 2.4.0+cu124",
     "host": {"python": "3.10", "gpus": A100, "driver": "550.54.14"},
     "request": ["vllm==0.7.3"],
     "expect": {"status": "ok", "torch": "==2.5.1", "pins": {"vllm": "0.7.3"}}},
    {"id": "vllm-0.7.3-against-a-torch-2.4-pin",
     "source": "https://github.com/hiyouga/EasyR1/issues/27",
     "facts": "vllm 0.7.3 requires torch==2.5.1, but you have torch 2.4.0+cu124 which is incompatible",
     "host": {"python": "3.10", "gpus": A100, "driver": "550.54.14"},
     "request": ["torch==2.4.0", "vllm==0.7.3"],
     "expect": {"status": "no-solution", "text": "torch==2.5.1"}},
    {"id": "vllm-0.10.0-uses-torch-2.7.1",
     "source": "https://github.com/nvidia-cosmos/cosmos-rl/pull/183",
     "facts": "vllm 0.10.0 uses torch 2.7.1",
     "host": {"python": "3.12", "gpus": H100, "driver": "570.86.10"},
     "request": ["vllm==0.10.0"],
     "expect": {"status": "ok", "torch": "==2.7.1", "pins": {"vllm": "0.10.0"}}},
    {"id": "vllm-0.8.4-requires-torch-2.6.0",
     "source": "https://github.com/LMCache/LMCache/pull/520",
     "facts": "latest vllm (April 2025) requires torch 2.6.0",
     "host": {"python": "3.11", "gpus": A100, "driver": "550.54.14"},
     "request": ["vllm==0.8.4"],
     "expect": {"status": "ok", "torch": "==2.6.0"}},
    {"id": "vllm-0.5.0.post1-pins-torch-2.3.0",
     "source": "https://github.com/vllm-project/vllm/issues/5576",
     "facts": "Installation issue with torch version conflict on vllm v0.5.0.post1 (it pins torch 2.3.0)",
     "host": {"python": "3.10", "gpus": A100, "driver": "535.104.05"},
     "request": ["torch==2.2.2", "vllm==0.5.0.post1"],
     "expect": {"status": "no-solution", "text": "torch==2.3.0"}},
    {"id": "xformers-0.0.27.post2-needs-torch-2.4.0",
     "source": "https://github.com/unslothai/unsloth/issues/1026",
     "facts": "xformers 0.0.27.post2 is too new for torch 2.3 ... xFormers was built for "
              "PyTorch 2.3.0 (you have 2.4.0)",
     "host": {"python": "3.10", "gpus": A100, "driver": "550.54.14"},
     "request": ["xformers==0.0.27.post2"],
     "expect": {"status": "ok", "torch": "==2.4.0"}},
    {"id": "xformers-0.0.24-needs-torch-2.2.0",
     "source": "https://github.com/unslothai/unsloth/issues/1136",
     "facts": "xformers 0.0.24 depends on torch==2.2.0",
     "host": {"python": "3.10", "gpus": A100, "driver": "535.104.05"},
     "request": ["xformers==0.0.24"],
     "expect": {"status": "ok", "torch": "==2.2.0"}},
    {"id": "xformers-0.0.26.post1-with-torch-2.3.0-cu118",
     "source": "https://github.com/unslothai/unsloth/issues/1150",
     "facts": "4x RTX 3090, CUDA 11.8: xformers-0.0.26.post1+cu118 with torch-2.3.0+cu118",
     "host": {"python": "3.10", "gpus": RTX3090 * 4, "driver": "520.61.05"},
     "request": ["xformers==0.0.26.post1"],
     "expect": {"status": "ok", "torch": "==2.3.0", "variant": "cu118"}},
    {"id": "xformers-0.0.26.post1-against-torch-2.0.0",
     "source": "https://github.com/bytedance/MVDream-threestudio/issues/29",
     "facts": "The user requested torch==2.0.0; xformers 0.0.26.post1 depends on torch==2.3.0",
     "host": {"python": "3.10", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torch==2.0.0", "xformers==0.0.26.post1"],
     "expect": {"status": "no-solution", "text": "torch==2.3.0"}},
    {"id": "torchvision-0.19.1-requires-torch-2.4.1",
     "source": "https://github.com/2kpr/ComfyUI-PMRF/issues/11",
     "facts": "torchvision 0.19.1 requires torch==2.4.1, but you have torch 2.5.1",
     "host": {"python": "3.11", "gpus": RTX4090, "driver": "550.54.14"},
     "request": ["torchvision==0.19.1"],
     "expect": {"status": "ok", "torch": "==2.4.1"}},
    {"id": "torchvision-0.18.0-against-torch-2.2.1",
     "source": "https://github.com/torch/torch7/issues/1249",
     "facts": "torchvision 0.18.0 requires torch==2.3.0, but you have torch 2.2.1 ... "
              "but i require torch 2.2.1",
     "host": {"python": "3.10", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torch==2.2.1", "torchvision==0.18.0"],
     "expect": {"status": "no-solution"}},
    {"id": "bitsandbytes-new-release-needs-torch-2.4",
     "source": "https://github.com/unslothai/unsloth/issues/4518",
     "facts": "bitsandbytes!=0.46.0,!=0.48.0,>=0.45.5 already satisfied (0.49.2) beside torch 2.10.0",
     "host": {"platform": "windows-x86_64", "python": "3.12", "gpus": RTX4090, "driver": "580.88"},
     "request": ["torch==2.10.0", "bitsandbytes==0.49.2"],
     "expect": {"status": "ok", "torch": "==2.10.0", "pins": {"bitsandbytes": "0.49.2"}}},
    {"id": "torchaudio-2.5.1-against-torch-2.1.2",
     "source": "https://github.com/C0untFloyd/roop-unleashed/issues/990",
     "facts": "torchaudio 2.5.1+cu121 requires torch==2.5.1, but you have torch 2.1.2+cu118",
     "host": {"platform": "windows-x86_64", "python": "3.10", "gpus": RTX3090, "driver": "560.94"},
     "request": ["torch==2.1.2", "torchaudio==2.5.1"],
     "expect": {"status": "no-solution"}},
    {"id": "torchaudio-for-torch-2.0.1-is-2.0.2",
     "source": "https://github.com/MyNiuuu/MOFA-Video/pull/20",
     "facts": "torchaudio 2.3.1 requires torch==2.3.1, but you have torch 2.0.1: add torchaudio==2.0.2",
     "host": {"python": "3.10", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torch==2.0.1", "torchaudio"],
     "expect": {"status": "ok", "torch": "==2.0.1", "pins": {"torchaudio": "2.0.2"}}},
    {"id": "torchaudio-2.0.1-requires-torch-2.0.0",
     "source": "https://github.com/pytorch/audio/issues/3176",
     "facts": "the torchaudio 2.0.1 wheel contains Requires-Dist: torch (==2.0.0)",
     "host": {"python": "3.11", "gpus": RTX3090, "driver": "535.104.05"},
     "request": ["torchaudio==2.0.1"],
     "expect": {"status": "ok", "torch": "==2.0.0"}},
]

SCENARIOS = UNTABLED + TABLED


def _plan(scenario: Dict[str, Any]) -> Plan:
    machine = host(**scenario["host"])
    names = {w.name for w in parse_requirements(scenario["request"])}
    records = tuple(scenario.get("records", ())) or tuple(RECORDS[n] for n in names if n in RECORDS)
    request = Request(requirements=tuple(scenario["request"]), explicit=True, published=records,
                      allow_prerelease=False)
    return resolve(machine, request, KB)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_scenario(scenario: Dict[str, Any]) -> None:
    plan = _plan(scenario)
    expect = scenario["expect"]
    said = "\n".join([*plan.reasons, *plan.warnings, str(plan.blocker), *(r.reason for r in plan.rejected)])
    assert plan.status == expect["status"], said
    pins = {p.name: p.version + (p.local_version or "") for p in plan.packages}
    if "torch" in expect:
        assert "torch" in pins and SpecifierSet(expect["torch"]).contains(pins["torch"].split("+")[0]), said
    if "variant" in expect:
        assert plan.variant == expect["variant"], said
    for name, version in expect.get("pins", {}).items():
        got = pins.get(name, "")
        assert (got if "+" in version else got.split("+")[0]) == version, (pins, said)
    if "text" in expect:
        assert expect["text"] in said, said


def test_the_corpus_is_big_enough_and_mostly_untabled() -> None:
    assert len(SCENARIOS) >= 40 and len(UNTABLED) * 2 >= len(SCENARIOS)
    assert len({s["id"] for s in SCENARIOS}) == len(SCENARIOS)
    tabled = {"vllm", "xformers", "flash-attn", "bitsandbytes", "mmcv", "mmdet", "torch-scatter",
              "detectron2"}
    family = {"torch", "torchvision", "torchaudio"}
    for scenario in UNTABLED:  # the package the thread is about is in no table (torch's family may be asked)
        names = {w.name for w in parse_requirements(scenario["request"])} - family
        assert not names & tabled, scenario["id"]
