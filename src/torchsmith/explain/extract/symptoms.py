"""What a report says happened when nothing raised an error: results that differ from another
device or from the expected value, NaN or inf values, values that overflowed, a reduced-precision
mode in use; and the out-of-memory killer's own log lines (what proves a SIGKILL was for memory). Pure.

These are statements, not causes: the rules (``explain.triggers``) pair them with facts the text
also states (the GPU's architecture, the data type) before any cause is named.
"""

from __future__ import annotations

import re
from typing import Dict, List, Set, Tuple

from torchsmith.explain.extract import said
from torchsmith.explain.extract.bare import bare_symptoms
from torchsmith.explain.negation import denied_in_clause

__all__ = ["symptoms"]

_RESULT = r"(?:results?|outputs?|values?|answers?|numbers?|products?)"
_SYMPTOMS: Tuple[Tuple[str, re.Pattern[str]], ...] = (
    # numbers that differ from another device or from the expected value
    ("discrepancy", re.compile(
        r"\b(?:wrong|incorrect|inaccurate|different|inconsistent|rounded)\s+" + _RESULT + r"\b"
        r"|\b" + _RESULT + r"\b[^\n.]{0,100}?\b(?:differ|differs|different|wrong|incorrect|inaccurate|"
        r"inconsistent|not (?:the same|equal|close|correct))\b"
        r"|\b(?:numerical|precision)\s+(?:errors?|issues?|problems?|differences?|discrepanc\w+|inconsistenc\w+)\b"
        r"|\b(?:absolute|relative|abs|rel)\s+(?:difference|diff|error)\b"
        r"|\b(?:can't|cannot|can not|doesn't|does not|don't) (?:get|give|produce|return) (?:the )?"
        r"(?:correct|right|expected|same) " + _RESULT,
        re.IGNORECASE)),
    # numbers that vary for another reason than the number format: the same run repeated
    # (nondeterminism), or a compiler generating other kernels (torch.compile, Inductor, Triton)
    ("other-variation", re.compile(
        r"\b(?:between|across|each|every)\s+runs?\b|\brun[- ]to[- ]run\b|non-?determinis\w+|reproducib\w+"
        r"|torch\.compile|\binductor\b|\btriton\b",
        re.IGNORECASE)),
    # (a lower-case "nan" only where it is a value: "nan loss", "loss is nan", "(nan)", as torch and
    # numpy print it in a tensor or array: "tensor([nan, nan])"); numpy's RuntimeWarning when an
    # array with NaN or inf is cast to integers (e.g. an image to uint8): "invalid value encountered
    # in cast" (numpy/numpy@50772f6423164179736a052af56fefba03be68e6 numpy/_core/src/umath/extobj.c:
    # "%s encountered in %s"; casts report floating-point errors as "cast" since NumPy 1.24)
    ("nan", re.compile(r"\b(?:NaNs?|nan values?|infs?|inf values?)\b|\bto (?:NaN|inf)\b|[(\[,] ?nan\b"
                       r"|invalid value encountered in cast\b"
                       r"|\b[Nn]an (?:loss(?:es)?|issues?|problems?|outputs?|results?|gradients?|grads?)\b"
                       r"|\bloss(?:es)? (?:is|are|was|were|becomes?|became|goes|went|turns?|turned)"
                       r"(?: to| into)? nan\b")),
    # values beyond the format's range: the word, or inf values (not "Stack Overflow", the site)
    ("overflow", re.compile(r"(?<!stack )(?<!stack)\boverflow(?:s|ed|ing)?\b"
                            r"|\b(?:infs|inf values?|infinity)\b|(?:^|[\s(\[,=:])-?inf\b",
                            re.IGNORECASE | re.MULTILINE)),
    # the kernel's (or a container runtime's, a job scheduler's) out-of-memory killer at work
    # (Linux mm/oom_kill.c, mm/memcontrol.c; Kubernetes OOMKilled; Slurm's oom-kill events)
    # (no leading \b: alternatives that start with a literal let the engine skip ahead)
    ("oom-killed", re.compile(r"Out of memory: Kill(?:ed)? process|invoked oom-killer|oom[-_]kill\b"
                              r"|OOMKilled\b|virtual memory exhausted|memory cgroup out of memory",
                              re.IGNORECASE)),
    # /dev/shm full: torch's shared-memory file (THMapAllocator's /torch_PID_N) or /dev/shm itself.
    # MapAllocator writes one byte into the shm object it has just sized (shm_open, ftruncate, then
    # write: pytorch/pytorch@0392872 aten/src/ATen/MapAllocator.cpp), the write that takes the tmpfs
    # page; it fails for want of space, and older torch prints no errno after the name
    ("shm-full", re.compile(r"unable to write to file </torch_\d+_\d+[^>\n]{0,40}>(?!: (?!No space left))"
                            r"|/dev/shm[^\n]{0,120}No space left|No space left on device[^\n]{0,120}/dev/shm"
                            r"|100%\s+/dev/shm\b")),
    # CUDA unavailable to torch, as the REPL prints it or a sentence says it (either order)
    ("cuda-unavailable", re.compile(
        r"cuda\.is_available\(\)\W{0,40}(?:(?:(?:is|was|keeps) )?(?:returns?|returning|returned|gives|gave|"
        r"giving|prints|printed|is|was|shows?|I get|I got)\W{1,3})?(?i:false)\b"
        r"|\b(?:returns?|returning|returned|gives|prints|is|was)\W{1,3}(?i:false)\W{1,60}"
        r"(?:torch\.)?cuda\.is_available|\b(?i:cuda) is not available\b"
        r"|\b(?:does|do|did)(?: not|n't) (?:support|have|use) CUDA\b(?![ -]?\d)"
        r"|\b(?:without|no) CUDA support\b")),
    # a CUDA (or ROCm) build that found no device: torch's check (c10/cuda/CUDAFunctions.cpp, hipified
    # for ROCm), cudaErrorNoDevice's message, a project's own words
    ("no-gpu-visible", re.compile(r"No (?:CUDA|HIP) GPUs are available|no CUDA-capable device is detected"
                                  r"|\bhas no (?:cuda|CUDA|GPU) devices?\b")),
    # the NVIDIA kernel driver has no GPU bound: nvidia-smi's own line when NVML enumerates none, and
    # the driver's kernel log when it failed to initialise one ("RmInitAdapter failed!":
    # NVIDIA/open-gpu-kernel-modules@448d5cc65624d3aa69015efa0d3fb50fd9729f41
    # src/nvidia/arch/nvalloc/unix/src/osinit.c)
    ("smi-no-devices", re.compile(r"^[ \t]*No devices were found\b", re.MULTILINE)),
    ("nvrm-init-failed", re.compile(r"NVRM: [^\n]{0,120}?(?:RmInitAdapter|rm_init_adapter) failed")),
    # a process being started by multiprocessing: a spawned child's first frames (spawn_main), the
    # parent's Process.start() frames, or a DataLoader starting its workers ("w.start()")
    ("worker-start", re.compile(r"multiprocessing[\\/]+(?:spawn|popen_spawn_\w+|process)\.py\", line \d+, "
                                r"in (?:spawn_main|_main|start|__init__)|^[ \t]+w\.start\(\)[ \t]*$",
                                re.MULTILINE)),
    # float16 in words: fp16, float16, half precision, 16-bit (mixed) precision
    # (bounded by ASCII letters and digits only: "FP16推理" next to a CJK word is still FP16)
    ("fp16", re.compile(r"(?<![A-Za-z0-9_])(?:fp16|float16|half[- ]precision|16[- ]?bit(?: mixed)?[- ]"
                        r"precision|precision\s*=\s*['\"]?16)(?![A-Za-z0-9_])", re.IGNORECASE)),
)


# Words one of which each kind's text must hold (lower-cased): a log without any is not scanned.
_WORDS = {
    "discrepancy": ("wrong", "incorrect", "inaccura", "differ", "inconsisten", "rounded", "not the same",
                    "not equal", "not close", "not correct", "numerical", "precision", "absolute",
                    "relative", " abs ", " rel ", "correct", "right", "expected", "same"),
    "other-variation": ("run", "determinis", "reproducib", "compile", "inductor", "triton"),
    "nan": ("nan", " inf", "inf ", "infs", "(inf", "-inf", "invalid value encountered in cast"),
    "overflow": ("overflow", "inf"),
    "oom-killed": ("out of memory", "oom", "memory exhausted"),
    "shm-full": ("no space left", "/dev/shm", "unable to write to file </torch_"),
    "fp16": ("fp16", "float16", "half", "16"),
    "cuda-unavailable": ("is_available", "not available", "support cuda", "cuda support", "have cuda",
                         "use cuda"),
    "no-gpu-visible": ("gpus are available", "cuda-capable", "devices"),
    "smi-no-devices": ("no devices were found",),
    "worker-start": ("spawn", "w.start()", "process.py"),
    "nvrm-init-failed": ("rminitadapter failed", "rm_init_adapter failed"),
}

# A multi-GPU / distributed run that stops making progress, in words: a hang, a deadlock or a freeze
# in the same sentence as what it waits in (NCCL, a collective, DDP, several GPUs or ranks).
_HANG = re.compile(r"\b(?:hangs?|hanging|hung|stuck|deadlock(?:s|ed)?|freez(?:e|es|ing)|frozen)\b",
                   re.IGNORECASE)
_WAITS_IN = re.compile(
    r"\b(?:NCCL|RCCL|all_?reduce|all_?gather|collectives?|barrier|DDP|FSDP|multi-?GPUs?"
    r"|multiple (?:\w+ )?GPUs|(?:more than|over) (?:1|one) GPUs?|[2-9] GPUs|distribut\w*|ranks?"
    r"|multi-?node)\b",
    re.IGNORECASE)
_HANG_WORDS = ("hang", "hung", "stuck", "deadlock", "freez", "frozen")
_SENTENCE_CHARS = 120  # either side of the hang word
_MAX_HANG_WORDS = 100  # hang words looked at (a log may repeat one)


def _distributed_hang(text: str) -> bool:
    """A hang word with what it waits in, in the same sentence (a window of a few words each side)."""
    for count, hang in enumerate(_HANG.finditer(text)):
        if count >= _MAX_HANG_WORDS:
            break
        left = max(0, hang.start() - _SENTENCE_CHARS)
        start = max(text.rfind("\n", left, hang.start()), text.rfind(".", left, hang.start())) + 1
        right = min(len(text), hang.end() + _SENTENCE_CHARS)
        ends = [at for at in (text.find("\n", hang.end(), right), text.find(".", hang.end(), right))
                if at >= 0]
        if _WAITS_IN.search(text, max(start, left), min(ends, default=right)) and not denied_in_clause(
                text, hang.start()):  # "DDP no longer hangs" is no hang
            return True
    return False


_MAX_DISCREPANCIES = 20  # matches looked at for one its clause states


def _discrepancy_stated(pattern: re.Pattern[str], text: str) -> bool:
    """A discrepancy in words that its clause states ("the results are wrong"), not one it denies
    or supposes ("I don't get wrong results on the CPU", "if the results differ")."""
    for count, found in enumerate(pattern.finditer(text)):
        if count >= _MAX_DISCREPANCIES:
            break
        if not denied_in_clause(text, found.start()):
            return True
    return False


# Results shown under headings that name where each ran ("RTX 3080, torch 1.10.0 OUTPUT:", "on a
# machine with 3090 or 3080:"), a printed tensor under each (a code fence between allowed): the
# numbers themselves show the discrepancy when two headings name other devices and other values.
_HEADED_TENSOR = re.compile(r"^(?P<heading>[^\n]{3,160}):[ \t]*\n(?:[ \t]*```[^\n]*\n)?[ \t]*"
                            r"tensor\((?P<value>\[*-?[\d.]+(?:e[-+]?\d+)?)", re.MULTILINE)
# (a device: a GPU's brand or model number, a data-centre model, or torch's device names; a bare
# number only where it is a GeForce model number, not a batch size)
_DEVICE_WORD = re.compile(r"\b(?:(?:rtx|gtx|titan|tesla|quadro)(?:[ \t]?[a-z]?\d{2,4})?"
                          r"|a(?:100|800|10g?|30|40|[2-6]000)|h(?:100|200|800|20)|[vp]100|p40|t4|l4|l40s?"
                          r"|(?:10[5-8]0|16[56]0|20[6-8]0|30[5-9]0|40[6-9]0|50[5-9]0)(?:[ \t]?ti)?"
                          r"|cpu|gpu|cuda(?::\d)?|mps)\b")
_MAX_HEADINGS = 40


def _headed_outputs_differ(text: str) -> bool:
    """Two headings that name other devices show other printed values (see _HEADED_TENSOR)."""
    values: Dict[Tuple[str, ...], Set[str]] = {}
    for count, match in enumerate(_HEADED_TENSOR.finditer(text)):
        if count >= _MAX_HEADINGS:
            break
        devices = tuple(sorted(set(_DEVICE_WORD.findall(match.group("heading").lower()))))
        if devices:
            values.setdefault(devices, set()).add(match.group("value").lstrip("["))
    shown = list(values.items())
    return any(one != other for at, (_devices, one) in enumerate(shown) for _others, other in shown[at + 1:])


# float32 matrix products only (no convolution), and TF32 switched on by the code: since torch 1.12
# matmuls default to full float32 (torch.backends.cuda.matmul.allow_tf32 False), convolutions to TF32
_MATMUL = re.compile(r"torch\.(?:mm|bmm|matmul|einsum)\(|\.(?:mm|bmm|matmul)\(|\bF\.linear\(|nn\.Linear\("
                     r"|\w[)\]]? @ \w")
_CONV = re.compile(r"[Cc]onv|cudnn|CNN|ResNet|resnet")
_TF32_ON = re.compile(r"allow_tf32\s*=\s*True|set_float32_matmul_precision\(\s*['\"](?:high|medium)"
                      r"|fp32_precision\s*=\s*['\"]tf32|NVIDIA_TF32_OVERRIDE=1")


def symptoms(text: str) -> List[str]:
    """The kinds of behaviour the text reports (see the module's docstring), once each."""
    lower = text.lower()
    found: List[str] = []
    for name, pattern in _SYMPTOMS:
        if name == "other-variation" and "discrepancy" not in found:
            continue  # it only qualifies a discrepancy
        if name == "discrepancy" and "tensor(" in text and _headed_outputs_differ(text):
            found.append(name)
            continue
        if not any(word in lower for word in _WORDS[name]):
            continue
        if _discrepancy_stated(pattern, text) if name == "discrepancy" else pattern.search(text):
            found.append(name)
    if any(word in lower for word in _HANG_WORDS) and _distributed_hang(text):
        found.append("distributed-hang")
    if said.mig_one_device_said(text):
        found.append("mig-one-device")
    if said.uvm_reload_fixed_said(text):
        found.append("uvm-reload-fixed")
    if said.interpreters_disagree_said(text):
        found.append("interpreters-disagree")
    if "discrepancy" in found and _MATMUL.search(text) and not _CONV.search(text):
        found.append("matmul-only")
    if "tf32" in lower and _TF32_ON.search(text):
        found.append("tf32-enabled")
    bare = bare_symptoms(text, found)
    if "torch-sees-no-gpu" in bare and "cuda-unavailable" not in found:
        found.append("cuda-unavailable")  # device_count() 0: the readers of an unavailable CUDA decide
    return found + bare
