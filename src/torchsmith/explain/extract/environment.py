"""The machine and the stack a text names: GPUs and their capability, the driver and the CUDA it
supports, the torch build, Python, platform, Jetson and ROCm facts. Pure."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from torchsmith.explain.extract import gpunames
from torchsmith.explain.extract.containers import docker_shm, image_build_kill, ran_after_build
from torchsmith.explain.extract.devices import gpu_count, visible_devices
from torchsmith.explain.extract.gpunames import GpuNames
from torchsmith.explain.extract.installedtorch import conda_channel_torch, installed_torch
from torchsmith.explain.extract.model import Environment, Frame, NamedGpu
from torchsmith.explain.extract.said import cpu_build_said
from torchsmith.explain.extract.services import services
from torchsmith.explain.literals import may_match

__all__ = ["environment"]

_GPU = re.compile(
    r"\b(?:NVIDIA |Nvidia )?(?:GeForce (?:RTX |GTX |GT |MX)?\d{2,4}[A-Za-z ]{0,12}?(?:Ti|SUPER|Super)?|"
    r"(?:Tesla|Quadro) [A-Z]{0,3}\d{1,4}[A-Za-z]{0,3}|RTX (?:PRO )?[A-Z]?\d{3,4}(?: Ada)?|TITAN [A-Z]{1,2}|"
    r"(?:A|H|B|L|T|V|P)\d{1,3}(?:[- ](?:SXM\d?|PCIe|NVL|\d+GB))*|A\d{4}|GH200|GB200|GB10|"
    r"Jetson (?:AGX |Orin |Xavier |Nano|TX\d)[A-Za-z ]{0,12}|"
    r"(?:AMD )?Radeon (?:RX |Pro |PRO )?[A-Z]?\d{3,4}[A-Z ]{0,4}|Instinct MI\d{2,3}[A-Z]?|MI\d{3}X?)\b"
)
_GPU_CONTEXT = re.compile(r"GPU|Device|device|NVIDIA|Radeon|Instinct|nvidia-smi|CUDA|cuda|gfx")
# A name with its brand ("RTX 3090", "GeForce GTX 1080", "Tesla V100") is a GPU wherever it stands.
_BRANDED = re.compile(r"(?:NVIDIA |Nvidia )?(?:GeForce|RTX|Quadro|Tesla|TITAN|Radeon|Instinct|Jetson)\b")
_CAPABILITY = (
    re.compile(r"CUDA capability sm_(?P<cc>\d{2,3})"),
    re.compile(r"[Cc]ompute [Cc]apability:?\s*\(?(?P<major>\d{1,2})[.,]\s*(?P<minor>\d)\)?"),
    re.compile(r"(?:cuda capability|capability)\s*(?P<major>\d{1,2})\.(?P<minor>\d)"),
    # the REPL's answer to torch.cuda.get_device_capability(): "(8, 6)" on the next line
    re.compile(r"get_device_capability\([^)\n]{0,12}\)\)?\s{0,4}\n?(?:Out\[\d+\]: )?"
               r"\((?P<major>\d{1,2}), (?P<minor>\d)\)"),
)
_ARCH_LIST = re.compile(
    r"(?:supports? CUDA capabilities|current PyTorch install supports[^\n]*?|arch list:?|"
    r"get_arch_list\(\)[^\n]*?)\s*\[?(?P<list>(?:'?(?:sm|compute)_\d+[a-z]?'?[ ,]*)+)"
)
# a version glued to the name, as a title or an environment line names the torch in use
# ("torch2.3.1 cuda11", "pytorch1.7.1"); a requirement or an upgrade target has a space or ==.
# Read only where the text glues one version so ("from torch2.6.0 to torch2.7.1" names two).
_GLUED_TORCH = re.compile(r"\b(?:[Pp]y)?[Tt]orch(?P<v>[12]\.\d{1,2}\.\d+"
                          r"(?:\+(?:cu\d{3,4}|cpu|rocm\d[\d.]*\d))?)(?![\w.+])")
# conda's override of the __cuda virtual package, as a shell, a Dockerfile or a YAML file sets it: a
# version, or "" for no CUDA (docs.conda.io, manage-virtual: "Overriding detected packages")
_CONDA_OVERRIDE_CUDA = re.compile(r"\bCONDA_OVERRIDE_CUDA[\"']?(?:\s*[=:]\s*|[ \t]+)"
                                  r"(?:[\"'](?P<q>\d{1,2}(?:\.\d{1,2})?)?[\"']|(?P<v>\d{1,2}(?:\.\d{1,2})?)\b)")


def _conda_cuda_override(text: str) -> Optional[str]:
    override = _CONDA_OVERRIDE_CUDA.search(text) if "CONDA_OVERRIDE_CUDA" in text else None
    return (override.group("q") or override.group("v") or "") if override else None


_VALUES: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    ("driver", re.compile(r"Driver Version:?\s*(?P<v>\d{3}\.\d+(?:\.\d+)?)")),
    ("driver", re.compile(r"NVIDIA driver(?: version)?:?\s*(?P<v>\d{3}\.\d+(?:\.\d+)?)", re.IGNORECASE)),
    ("driver", re.compile(r"Nvidia driver version:\s*(?P<v>\d{3}\.\d+(?:\.\d+)?)")),
    ("driver_cuda", re.compile(r"CUDA Version:\s*(?P<v>\d{1,2}\.\d)")),
    ("driver_cuda", re.compile(r"conflicting with __cuda[-=](?P<v>\d{1,2}\.\d)|__cuda=(?P<v2>\d{1,2}\.\d)=")),
    ("driver_cuda", re.compile(r"[Dd]river supports? (?:up to )?CUDA (?P<v>\d{1,2}\.\d)")),
    (
        "torch",
        re.compile(
            # xformers' "PyTorch 2.0.0+cu118 with CUDA 1108 (you have 2.0.0+cpu)": the torch installed
            r"(?:PyTorch [Vv]ersion|PyTorch [\w.+]{1,40} with CUDA \d{3,5} \(you have |"
            r"[Tt]orch [Vv]ersion|torch\.__version__\W{0,8}|you have torch |"
            r"Successfully installed [^\n]*?torch-|Requirement already satisfied: torch==?|"
            # torch's own capability warning (2.1x, torch/cuda/__init__.py): "Your installed torch==X+cuNNN"
            r"Your installed torch==)\s*:?\s*"
            r"(?P<v>\d\.\d{1,2}\.\d+"
            r"(?:\.?[a-z]+\d*)?(?:\+[\w.]+)?)"
        ),
    ),
    # in words, a GPU build with its local tag: "installed torch 2.11.0+cu128", "PyTorch 2.8.0+cu128"
    # (not a requirement "torch==...", which may name a build that was never installed; a +cpu
    # build in words is left to the lines above, whose rules read it as the build in use)
    ("torch", re.compile(r"\b(?:torch|[Pp]y[Tt]orch) (?:v|version )?(?P<v>\d\.\d{1,2}\.\d+(?:[a-z]+\d*)?"
                         r"\+(?:cu\d{3,4}|rocm\d[\d.]*\d))\b")),
    ("torch", _GLUED_TORCH),
    # pip list's row: "torch        2.13.0.dev20260607+xpu" (not a requirement's torch==, which asks)
    ("torch", re.compile(r"^torch[ \t]{2,}(?P<v>\d\.\d{1,2}\.\d+(?:\.?[a-z]+\d*)?(?:\+[\w.]+)?)[ \t]*$",
                         re.MULTILINE)),
    ("torch_cuda", re.compile(r"CUDA used to build PyTorch:\s*(?P<v>\d{1,2}\.\d)")),
    ("torch_cuda", re.compile(r"torch\.version\.cuda\W{0,8}(?P<v>\d{1,2}\.\d)")),
    (
        "cuda",
        re.compile(
            r"(?:CUDA runtime version|CUDA_VERSION|cuda_version|CUDA Toolkit|cudatoolkit[ =]+)\s*:?\s*"
            r"(?P<v>\d{1,2}\.\d)"
        ),
    ),
    ("cuda", re.compile(r"/usr/local/cuda-(?P<v>\d{1,2}\.\d)")),
    # nvidia-smi's compute mode: the table's "Compute M." cell, `-q`'s line, `-c` being set
    ("compute_mode", re.compile(r"(?P<v>E\. Process|E\. Thread|Prohibited) {0,4}\||Compute Mode\s{0,40}: "
                                r"(?P<v2>Exclusive_Process|Exclusive_Thread|Prohibited)|"
                                r"nvidia-smi [^\n]{0,40}-c (?P<v3>EXCLUSIVE_PROCESS|PROHIBITED)\b")),
    # "cuda12.1", "CUDA 11.8", "CUDA-12.4" in words (not nvidia-smi's "CUDA Version: 12.2")
    ("cuda", re.compile(r"\b(?:CUDA|[Cc]uda)[ -]?(?P<v>\d{1,2}\.\d)\b")),
    # ffmpeg's own banner (ffmpeg -version / any ffmpeg run): "ffmpeg version 7.1.1 Copyright (c) ...";
    # not torchcodec's "FFmpeg version 7:" entries, which name the builds it tried
    ("ffmpeg", re.compile(r"^\s*ffmpeg version n?(?P<v>\d+(?:\.\d+){0,2})\S*\s+Copyright", re.MULTILINE)),
    # the system's glibc: collect_env's "Libc version: glibc-2.35", ldd's "ldd (GNU libc) 2.35"
    ("glibc", re.compile(r"Libc version: glibc-(?P<v>2\.\d{1,2})\b")),
    ("glibc", re.compile(r"ldd \((?:[^()\n]{0,40}GLIBC[^()\n]{0,40}|GNU libc)\) (?P<v>2\.\d{1,2})\b")),
    ("python", re.compile(r"Python(?: version)?:?\s*(?P<v>3\.\d{1,2})(?:\.\d+)?")),
    ("python", re.compile(r"cp3(?P<v>\d{1,2})-cp3")),
    (
        "rocm",
        re.compile(r"(?:ROCm|HIP runtime|ROCM used to build PyTorch|rocm)[ :v-]*(?P<v>\d\.\d(?:\.\d)?)"),
    ),
    ("gfx", re.compile(r"(?P<v>gfx\d{3,4}[a-z]?)\b")),
    # the ROCm runtime's override of the GPU's ISA, as a shell, a container or Python sets it
    ("hsa_override", re.compile(r"HSA_OVERRIDE_GFX_VERSION[\"']?\s*(?:=|:|,)\s*[\"']?"
                                r"(?P<v>\d{1,2}\.\d{1,2}\.\d{1,2})\b")),
    # UEFI Secure Boot's state as mokutil --sb-state prints it, a line of its own (mokutil.c)
    ("secure_boot", re.compile(r"^[ \t]*SecureBoot (?P<v>enabled|disabled)[ \t]*$", re.MULTILINE)),
    # an Apple silicon chip: sysctl's machdep.cpu.brand_string and collect_env's CPU line ("Apple M3 Max"),
    # or a Mac named with its chip ("M2 MacBook Pro"): every Apple M chip is arm64
    ("chip", re.compile(r"\bApple (?P<v>M[1-9]\d?(?: (?:Pro|Max|Ultra))?)\b"
                        r"|\b(?P<v2>M[1-9]\d?(?: (?:Pro|Max|Ultra))?)"
                        r" (?=Mac(?:Book| ?mini| Studio|\b)|iMac\b)")),
    # the macOS release: sw_vers' ProductVersion, collect_env's "OS: macOS 12.2.1", "macOS 12.7.6" in words,
    # "my MacOs is `12.7.6`", "macOS Sonoma 14.5" (not a minimum: "supported on MacOS 12.3+", "macOS 13.0
    # or later")
    ("macos", re.compile(r"ProductVersion:\s*(?P<v>\d{2}\.\d+(?:\.\d+)?)"
                         r"|\b[Mm]ac ?O[Ss](?: X)?(?: version)?(?::| is)?"
                         r"(?: (?:Catalina|Big Sur|Monterey|Ventura|Sonoma|Sequoia|Tahoe))? `?"
                         r"(?P<v2>[12]\d\.\d+(?:\.\d+)?)\b(?![+.\d])"
                         r"(?! ?(?:or|and) (?:later|newer|above|higher))")),
    # (a Jetson's L4T kernel release, as uname -r and platform.platform() print it: 4.9-tegra in
    # L4T r32, 5.10-tegra in r35, 5.15-tegra in r36; r38's 6.8 kernel runs Thor's SBSA stack)
    (
        "jetson",
        re.compile(
            r"\b(?P<v>R3[2-9] \(release\), REVISION: \d+\.\d+|JetPack \d(?:\.\d)*|L4T R?\d{2}\.\d(?:\.\d)?"
            r"|nv\d{2}\.\d{2}|[45]\.\d{1,3}\.\d{1,3}-tegra)(?![\w.-]*-sbsa)"
        ),
    ),
)
# NVIDIA's container images that carry its torch build for a Jetson: NGC's l4t-pytorch and l4t-ml, and
# jetson-containers' (dustynv/) pytorch images (catalog.ngc.nvidia.com, github.com/dusty-nv/jetson-containers)
_JETSON_TORCH_IMAGE = re.compile(r"(?P<v>(?:nvcr\.io/nvidia/)?l4t-(?:pytorch|ml):[\w.-]+"
                                 r"|dustynv/(?:l4t-)?pytorch:[\w.-]+)")
# a wheel's file name, read where nothing names the torch installed: what was fetched, not
# necessarily what is installed (see _torch_cuda)
_TORCH_FILE = re.compile(r"torch-(?P<v>\d\.\d{1,2}\.\d+(?:\+[\w.]+)?)-cp\d+")
# Wheels for other machines: uv's hint of the platforms a version does have wheels for (uv-resolver's
# report: "Wheels are available for `torch` (v2.5.1) on the following platforms: `…`, `win_amd64`"),
# pip's link it skips ("none of the wheel's tags (cp310-cp310-win_amd64) are compatible",
# index/package_finder.py): none of their tags is this machine's
_ELSEWHERE = re.compile(r"Wheels are available for[^:]{0,200}?on the following platforms?:"
                        r"(?:\s*`[^`\n]{1,80}`,?(?:\s*and)?)+"
                        r"|none of the wheel's tags \([^)\n]{1,400}\) are compatible")
_PLATFORMS: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    # WSL mounts the Windows drives at /mnt/<drive>/ (wsl.conf automount root): a path into a Windows
    # profile from Linux is WSL, and its /Users/ is Windows', not a Mac's
    ("wsl", re.compile(r"microsoft-standard-WSL|\bWSL2?\b|/usr/lib/wsl/"
                       r"|/mnt/[a-z]/(?:Users|Program Files)/")),
    (
        "windows",
        re.compile(
            r"[A-Z]:\\\\?(?:Users|Program Files|ProgramData|Python|anaconda|miniconda|a\\\\|hostedtool)"
            r"|\.dll\b|win_amd64|OS: Microsoft Windows",
            re.IGNORECASE,
        ),
    ),
    ("macos", re.compile(r"(?<!/mnt/[a-z])/Users/\w+/|macosx_\d+|OS: macOS|Darwin Kernel|/opt/homebrew/"
                         r"|\bMPS\b")),
    (
        "linux",
        re.compile(
            r"/home/\w+|/usr/(?:local/)?lib|manylinux|linux_x86_64|linux_aarch64|OS: Ubuntu|/opt/conda"
        ),
    ),
)
# A Slurm job: its launch commands at a line's start (a prompt allowed), a batch script's directives,
# the step daemon, the job's environment (Slurm's srun/sbatch man pages)
_SLURM = re.compile(r"^[ \t]*(?:\$[ \t]*)?(?:srun|sbatch|salloc)[ \t]"
                    r"|#SBATCH\b|\bslurmstepd\b|\bSLURM_JOB_ID\b", re.MULTILINE)
_MACHINE = re.compile(r"(?P<m>x86_64|aarch64|arm64|amd64|ppc64le)\b")
# Machine words that are not this machine's: an environment marker's operand (platform_machine ==
# 'aarch64', PEP 508) and what a library file has where dyld names the process's need after it
# ("incompatible architecture (have 'arm64', need 'x86_64')": dyld's wording, the need is the process's)
_NOT_THIS_MACHINE = re.compile(r"platform_machine\s*(?:[=!]=|(?:not )?in)\s*['\"][^'\"]{0,40}['\"]"
                               r"|\bhave \(?'?\w+'?\)?(?=, need\b)")
# A 32-bit Python: Windows' "python38-32" folder, sys.version's "[MSC v.1916 32 bit (Intel)]",
# a win32 wheel tag; a 32-bit ARM board.
_MACHINE_32 = re.compile(r"(?P<x86>[Pp]ython3\d{1,2}-32\b|\bMSC v\.\d+ 32 bit|-cp3\d+m?-win32\b)"
                         r"|(?P<arm>\barmv[67]l\b)")


# A CPU-only torch: torch.version.cuda None, collect_env's "CUDA used to build PyTorch: None", a conda
# build string "py3.8_cpu_0", the cpuonly metapackage, a +cpu build (not a +cpu requirement).
# An Intel Mac named beside an Apple chip ("works on my M1, fails on my Intel MacBook Pro"); not
# "an Intel Python under Rosetta", which is the Apple silicon Mac's own case.
_INTEL_MAC = re.compile(r"\bIntel(?:-based|[- ]powered)? (?:Mac|iMac)\w*"
                        r"|\bMac\w*(?: (?:Pro|Air|mini))? \(Intel\b|\bIntel(?:\(R\))? Core(?:\(TM\))? i\d")
# A distributed job on one node: torchrun's --standalone or --nnodes=1 (not an elastic 1:2), a master
# or rendezvous at the loopback address, which only this host reaches (torch.distributed.run's options)
_ONE_NODE = re.compile(r"--standalone\b|--nnodes[= ]1\b(?!:)|\bMASTER_ADDR\W{1,3}(?:localhost|127\.0\.0\.1)\b"
                       r"|--(?:master[_-]addr|rdzv[_-]endpoint)[= ](?:localhost|127\.0\.0\.1)\b"
                       r"|tcp://(?:localhost|127\.0\.0\.1):"
                       # torchrun / torch.distributed.run|launch default to one node (--nnodes 1)
                       r"|\b(?:torchrun|torch\.distributed\.(?:run|launch))\b(?![^\n]*--(?:nnodes|rdzv|master))")
# any sign of a job over several nodes voids the above
_MANY_NODES = re.compile(r"--nnodes[= ](?:[2-9]|\d{2,}|1:)|--node[_-]rank[= ]?[1-9]|\bNODE_RANK\W{1,3}[1-9]"
                         r"|--num_machines[= ](?:[2-9]|\d{2,})|\bPET_NNODES\b")
_CPU_BUILD = re.compile(r"torch\.version\.cuda\W{0,8}None|CUDA used to build PyTorch: (?:None|N/A)\b"
                        # `conda list`: the pytorch channel's py3.X_cpu_N, conda-forge's cpu_mkl_/cpu_generic_
                        r"|^\s*pytorch\s+[\d.]+\s+(?:py[\d.]+_cpu_\d|cpu_(?:(?:mkl|generic|openblas)_)?py\d)"
                        r"|^\s*cpuonly\s+[\d.]+\s"
                        r"|PyTorch version: [\d.]+\+cpu\b", re.MULTILINE)


_COMPUTE_MODE_WORDS = ("E. ", "Prohibited", "PROHIBITED", "Exclusive_", "EXCLUSIVE_")
# the stack's versions, read only from what the text shows before a later state (_before_later_state)
_STACK_FIELDS = frozenset({"torch", "torch_cuda", "cuda"})


def _first(pattern: re.Pattern[str], text: str) -> Optional[str]:
    match = pattern.search(text) if may_match(pattern, text) else None
    if match is None:
        return None
    return next((v for k, v in match.groupdict().items() if k.startswith("v") and v), None)


def _capability(text: str) -> Optional[str]:
    for pattern in _CAPABILITY:
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        if groups.get("cc"):
            cc = groups["cc"]
            return f"{cc[:-1]}.{cc[-1]}"
        return f"{groups['major']}.{groups['minor']}"
    return None


# What precedes a GPU name on a line that declares the machine's GPU: "GPU: ", gpu="...", collect_env's
# "GPU models and configuration: GPU 0: ", nvidia-smi -L's "GPU 0: ", its table's "|   0  "; or a line
# that is the name alone
_BRANDS = r"(?:(?:NVIDIA|Nvidia|nvidia|AMD|GeForce|Radeon|Tesla|Quadro)\s+)*"
_DECLARES = re.compile(r"\b(?:[Gg][Pp][Uu]s?|[Dd]evice|[Gg]raphics|configuration)\b[^\n:=]{0,25}[:=]"
                       r"\s*['\"(\[]?\s*(?:GPU \d+:\s*)?" + _BRANDS
                       + r"$|^\|\s{1,4}\d{1,2}\s+" + _BRANDS + "$")
_ALONE = re.compile(r"^\s*" + _BRANDS + "$")
_ALONE_AFTER = re.compile(r"\s*(?:\([^)\n]*\))?[,.]?\s*")


def _declared_vendors(text: str, seen: Sequence[Tuple[NamedGpu, int, int]]) -> List[str]:
    """Vendors of the GPUs named where a line declares the machine's GPU, not in a sentence ("works
    on my friend's RTX 4090")."""
    found: List[str] = []
    for gpu, start, end in seen:
        before = text[text.rfind("\n", 0, start) + 1 : start]
        line_end = text.find("\n", end)
        rest = text[end : line_end if line_end >= 0 else None]
        alone = _ALONE.match(before) and _ALONE_AFTER.fullmatch(rest)
        if gpu.vendor not in found and (alone or _DECLARES.search(before)):
            found.append(gpu.vendor)
    return found


# A sentence about another machine or another time: a colleague's, a friend's, an old cluster, one
# it "used to" run on or "worked on" (not "our cluster", which may be this machine)
_ANOTHER_MACHINE = re.compile(r"\b(?:colleague|friend|coworker|co-worker"
                              r"|(?:an)?other (?:machine|server|node|computer|PC)|used to|worked (?:fine )?on"
                              r"|old (?:machine|server|cluster))\b", re.IGNORECASE)


def _another_machines(text: str, start: int, end: int) -> bool:
    """The GPU named at text[start:end] is named in a sentence about another machine (or another
    time), not on a line that declares this machine's GPU."""
    line_start = text.rfind("\n", 0, start) + 1
    if _DECLARES.search(text[line_start:start]):
        return False
    left = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start))
    right = min((i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0), default=len(text))
    return bool(_ANOTHER_MACHINE.search(text[left + 1:right]))


def _gpus(text: str, names: Optional[GpuNames]) -> Tuple[List[str], List[NamedGpu], List[str]]:
    """Every GPU name the text writes, and those the GPU data knows (extract.gpunames); the pattern
    only adds the names the data lacks ("GTX 680"), kept as written, with no capability; the vendors
    of the GPUs a line declares."""
    seen = [m for m in (gpunames.mentions(text, names) if names is not None else [])
            if not _another_machines(text, m[1], m[2])]
    models: Dict[Tuple[str, str], NamedGpu] = {}
    for gpu, _start, _end in seen:
        models.setdefault((gpu.vendor, gpu.model or gpu.name.lower()), gpu)
    at = [(start, gpu.name) for gpu, start, _end in seen if gpu in models.values()]
    spans = [(start, end) for _gpu, start, end in seen]
    for match in _GPU.finditer(text):
        if any(match.start() < end and start < match.end() for start, end in spans):
            continue
        if _another_machines(text, match.start(), match.end()):
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        # with the GPU data at hand, an unbranded code it does not know ("B70") is no GPU of ours
        if not _BRANDED.match(match.group()) and (names is not None or not _GPU_CONTEXT.search(line)):
            continue
        name = re.sub(r"\s+", " ", match.group()).strip()
        at.append((match.start(), name))
    written = list(dict.fromkeys(name for _start, name in sorted(at)))
    return written[:8], list(models.values())[:8], _declared_vendors(text, seen)


# the pytorch/pytorch image's tag names its build's CUDA: "pytorch:2.1.0-cuda11.8-cudnn8-runtime"
# (the build in use only where the text shows no other: a torch installed over the image's has its own)
_IMAGE_CUDA = re.compile(r"\b[Pp]y[Tt]orch[:/ ] ?v?\d\.\d{1,2}(?:\.\d+)?-cuda(?P<v>\d{1,2}\.\d)\b")


# a torch build's CUDA variant in words, where no version names it: "pytorch with cu117", "torch (cu118)",
# "torch+cu121" (PyTorch's local version tags); not "for cu118", which may name a build wanted
_TORCH_VARIANT_WORDS = re.compile(r"\b(?:[Pp]y)?[Tt]orch(?: with|\s?\(|\+) ?cu(?P<v>1[0-3]\d)\b")
# every CUDA variant tag the text names: where it names two ("with cu117, then reinstalled for cu121"),
# the words do not say which build is in use
_VARIANT_TAG = re.compile(r"\bcu1[0-3]\d\b")


def _torch_cuda(env: Environment, from_file: bool) -> None:
    """A +cuXYZ local version names the build's CUDA; +cpu (or CUDA None) a CPU-only build, unless
    the version is only a wheel's file name (``from_file``): a download that may have failed."""
    local = re.search(r"\+(cu\d{3,4}|cpu|rocm[\d.]+)", env.torch or "")
    if local is None:
        return
    tag = local.group(1)
    if tag == "cpu" and from_file:
        return
    if tag == "cpu":
        env.torch_cpu_only = True
    elif tag.startswith("cu") and env.torch_cuda is None:
        digits = tag[2:]
        env.torch_cuda = f"{digits[:-1]}.{digits[-1]}"
    elif tag.startswith("rocm") and env.rocm is None:
        env.rocm = tag[4:]


# A failure's line (a traceback, an exception, an installer's or a compiler's error), and what a text
# shows after its last one: an install that succeeded, or a note that the problem was solved. What
# follows them is the stack after the fix, not the one that failed.
_FAILURE_WORD = re.compile(r"Traceback \(most recent call last\)|[Ee]rror|ERROR|FAILED"
                           r"|[Ff]ail(?:s|ed|ing|ure)?\b|Exception\b")
# literal pieces of every _FAILURE_WORD, to find the last one from the end
_FAILURE_KEYS = ("rror", "ERROR", "FAILED", "ail", "Exception", "Traceback (most recent call last)")
_FIXED_WORD = r"(?:[Ss]olved|SOLVED|[Ss]olution|[Ff]ixed|FIXED|[Rr]esolved|[Ww]orkaround)\b"
_SOLVED = (r"^[ \t>*#_]*(?:(?:[Uu]pdate[ds]?|UPDATE|[Ee]dit(?:ed)?|EDIT)\b[ \t]*[:\-\u2014]?[ \t]*)?"
           + _FIXED_WORD + r"(?:[ \t]*[:!(\-\u2014]"
           r"|[ \t]+(?:it|by|with|this|the (?:issue|problem|error)|now|after)\b)")
_SOLVED_NOTE = re.compile(_SOLVED, re.MULTILINE)
_LATER_STATE = re.compile(r"^[ \t]*Successfully installed\b|" + _SOLVED, re.MULTILINE)


def _before_later_state(text: str) -> str:
    """The text up to a later state it shows after its last failure line (see _LATER_STATE): the
    versions it names there are the stack after a fix ("Successfully installed torch-2.7.0+cu128"
    below the error), not the one that failed."""
    match, end = None, len(text)
    for _ in range(8):  # from the end (a long log is not read whole): the last key that is a failure word
        last = max(text.rfind(word, 0, end) for word in _FAILURE_KEYS)
        match = _FAILURE_WORD.search(text, max(last - 12, 0), end + 40) if last >= 0 else None
        if match is not None or last < 0:
            break
        end = last
    if match is None:  # no failure named in words: a note after the text that it was solved starts one
        later = _SOLVED_NOTE.search(text)
        return text if later is None or not text[: later.start()].strip() else text[: later.start()]
    line_end = text.find("\n", match.end())
    later = _LATER_STATE.search(text, line_end) if line_end >= 0 else None
    return text if later is None else text[: later.start()]


def _installed_torch(env: Environment, failed_stack: str) -> None:
    """Where no line above named the torch: the shapes tools print the installed one in (installedtorch)."""
    env.torch = env.torch or installed_torch(failed_stack)
    channel = conda_channel_torch(failed_stack) if not env.torch and "_cudnn" in failed_stack else None
    if channel:
        env.torch, env.torch_cuda = channel[0], env.torch_cuda or channel[1]


def environment(text: str, frames: List[Frame], names: Optional[GpuNames] = None) -> Environment:
    """What the text names of the machine and the stack; ``names``: the GPU data's spellings."""
    failed_stack = _before_later_state(text)
    gpus, models, declared = _gpus(text, names)
    env = Environment(gpus=gpus, gpu_models=models, declared_vendors=declared, capability=_capability(text),
                      visible_devices=visible_devices(text), gpu_count=gpu_count(text),
                      conda_override_cuda=_conda_cuda_override(text))
    arch_list = _ARCH_LIST.search(text)
    if arch_list:
        env.arch_list = re.findall(r"(?:sm|compute)_\d+[a-z]?", arch_list.group("list"))
    for name, pattern in _VALUES:
        if name == "compute_mode" and not any(w in text for w in _COMPUTE_MODE_WORDS):
            continue  # a prefilter: the pattern starts with alternatives
        read = failed_stack if name in _STACK_FIELDS else text
        if pattern is _GLUED_TORCH and len({m.group("v") for m in pattern.finditer(read)}) > 1:
            continue
        if getattr(env, name) in (None, ""):
            value = _first(pattern, read)
            if value:  # each name is an Environment field; a wheel tag (cp38) gives the minor alone
                setattr(env, name, value if name != "python" or "." in value else f"3.{value}")
    if (may_match(_CPU_BUILD, text) and _CPU_BUILD.search(text)) or cpu_build_said(text):
        env.torch_cpu_only = True
    if env.chip and "Intel" in text and _INTEL_MAC.search(text):
        env.chip = None  # two Macs, an Apple silicon one and an Intel one: which one failed?
    one_node = may_match(_ONE_NODE, text) and _ONE_NODE.search(text)
    env.one_node = bool(one_node) and not _MANY_NODES.search(text)
    env.docker_shm = docker_shm(text)
    env.image_build_kill = image_build_kill(text)
    env.ran_after_build = ran_after_build(text)
    if "l4t-" in text or "dustynv/" in text:
        env.jetson_torch_image = _first(_JETSON_TORCH_IMAGE, text)
    env.services = services(text)
    _installed_torch(env, failed_stack)
    fetched = _first(_TORCH_FILE, failed_stack) if not env.torch else None
    env.torch = env.torch or fetched
    _torch_cuda(env, from_file=fetched is not None)
    if env.torch_cuda is None and not env.torch_cpu_only:
        env.torch_cuda = _first(_IMAGE_CUDA, text)
    in_words = env.torch_cuda is None and not env.torch_cpu_only
    variant = _first(_TORCH_VARIANT_WORDS, failed_stack) if in_words else None
    if variant and len(set(_VARIANT_TAG.findall(failed_stack))) > 1:
        variant = None
    if variant:
        env.torch_cuda = f"{variant[:-1]}.{variant[-1]}"
    if env.python is None:
        env.python = next((f.python for f in frames if f.python), None)
    elsewhere = "on the following platform" in text or "none of the wheel's tags" in text
    platforms = _ELSEWHERE.sub(" ", text) if elsewhere else text
    env.platform = next((name for name, pattern in _PLATFORMS
                         if may_match(pattern, platforms) and pattern.search(platforms)), None)
    if may_match(_SLURM, text) and _SLURM.search(text):
        env.scheduler = "slurm"
    machine = _MACHINE.search(_NOT_THIS_MACHINE.sub(" ", text) if "platform_machine" in text
                              or "have " in text else text)
    if machine:
        env.machine = {"amd64": "x86_64"}.get(machine.group("m"), machine.group("m"))
    bits32 = _MACHINE_32.search(text) if ("-32" in text or "32 bit" in text or "armv" in text) else None
    if bits32 and env.machine is None:
        env.machine = "x86" if bits32.group("x86") else "armv7l"
    return env
