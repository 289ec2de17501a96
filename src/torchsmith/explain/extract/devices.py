"""Which GPUs a process may see: the value CUDA_VISIBLE_DEVICES is set to in the text (a shell
line, ``export``, ``os.environ[...] = ...``) and how many GPUs the machine has (nvidia-smi's own
list, or a sentence that says so). Pure.

CUDA reads CUDA_VISIBLE_DEVICES as a comma-separated list of device indexes and makes visible only
the devices listed before its first invalid entry (CUDA C Programming Guide, "CUDA Environment
Variables"): an index the machine does not have, ``-1`` or an empty value hides every GPU.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["gpu_count", "hides_every_gpu", "visible_devices"]

# CUDA_VISIBLE_DEVICES=1, export CUDA_VISIBLE_DEVICES="0,1", os.environ["CUDA_VISIBLE_DEVICES"] = '1';
# not a variable's expansion ($GPU) nor a value that continues into one ("0$X")
_SET = re.compile(r"CUDA_VISIBLE_DEVICES['\"]?\]?\s*=\s*"
                  r"(?:(?P<q>['\"])(?P<quoted>[-\w,. ]*)(?P=q)|(?P<bare>[-\w,.]+)(?![\w$]))")
# nvidia-smi -L: "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)"; its table: "|   0  NVIDIA GeForce ..."
_SMI_LIST = re.compile(r"^\s*GPU (?P<index>\d{1,2}): [^\n]{1,80}\(UUID: ", re.MULTILINE)
_SMI_ROW = re.compile(r"^\|\s{1,4}(?P<index>\d{1,2})\s{1,3}"
                      r"(?:NVIDIA|GeForce|Tesla|Quadro|TITAN|RTX|[AHLBTV]\d)", re.MULTILINE)
# "systems with 1 GPU", "a machine that has only one GPU", "I only have a single GPU", "single-GPU
# server" (not "train with one GPU": a choice among several)
_ONE = r"(?:a single|one|1|only one|just one|only a single)"
_SAID_ONE = re.compile(
    r"\b(?:system|machine|server|node|computer|laptop|PC|workstation|box|host|instance)s? "
    r"(?:with|that has|having|has) (?:only )?" + _ONE + r" (?:NVIDIA |CUDA )?GPU\b(?!s)"
    r"|\b(?:I|we) (?:only )?(?:have|got) (?:only )?" + _ONE + r" (?:NVIDIA |CUDA )?GPU\b(?!s)"
    r"|\b(?:single|one|1)[- ]GPU (?:system|machine|server|node|computer|laptop|PC|workstation|box|host)",
    re.IGNORECASE)


def visible_devices(text: str) -> Optional[str]:
    """The value CUDA_VISIBLE_DEVICES is set to, where the text sets it to one value only."""
    if "CUDA_VISIBLE_DEVICES" not in text:
        return None
    values = {(m.group("quoted") if m.group("q") else m.group("bare")).replace(" ", "")
              for m in _SET.finditer(text)}
    return values.pop() if len(values) == 1 else None


def gpu_count(text: str) -> Optional[int]:
    """How many GPUs the machine has: nvidia-smi's highest index plus one, else one where a sentence
    says the machine has a single GPU."""
    indexes = [int(m.group("index")) for pattern in (_SMI_LIST, _SMI_ROW) for m in pattern.finditer(text)]
    if indexes:
        return max(indexes) + 1
    return 1 if "GPU" in text.upper() and _SAID_ONE.search(text) else None


def hides_every_gpu(value: str, count: Optional[int]) -> Optional[str]:
    """Why CUDA_VISIBLE_DEVICES=``value`` leaves no GPU visible on a machine of ``count`` GPUs
    (None: it leaves one, or the text does not show enough to say)."""
    first = value.split(",", maxsplit=1)[0].strip()
    if first == "":
        return "an empty list, which names no GPU"
    if first == "-1":
        return "-1, which names no GPU"
    if first.isdigit() and count is not None and int(first) >= count:
        plural = "GPU" if count == 1 else "GPUs"
        return f"GPU index {first}, but the machine has {count} {plural}, indexed from 0"
    return None
