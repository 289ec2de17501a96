"""GPUs a text names in prose ("on my RTX 5070", "Jetson Thor", "MI300X", "GB10"), read through the
GPU rows of the data (gpus.json: NVIDIA's models and compute capabilities; rocm.json: AMD's
products and gfx targets) rather than a pattern of what names look like. Pure.

Each row gives the ways people write its name: with and without the brand words ("NVIDIA GeForce
RTX 4090", "RTX 4090"), glued or spaced ("RTX3080Ti"), cut at the model number ("RTX PRO 6000"),
by its alias in parentheses ("DGX Spark", "AGX Thor"), by its GeForce series ("RTX 50 series"),
and without the form factor "AGX" that NVIDIA's Jetson names carry ("Jetson Thor", "Jetson Orin":
the Jetson product pages name the lines so). A spelling several rows share names a GPU but no model
unless the rows agree on the capability (every "Jetson Orin" is 8.7; "RTX 6000" is the Turing
Quadro or the Ada card). A short model number ("A100", "T4", "MI250") counts only on a line that
speaks of GPUs, or after a brand word; what every name glues ("A100", "GB10") is not a name when a
text spaces it ("24 GB 10 GB free").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from torchsmith.explain.extract.model import NamedGpu
from torchsmith.kb.model import GfxTarget, GpuModel
from torchsmith.kb.product_names import expand_listing
from torchsmith.records import dataclass

__all__ = ["GpuNames", "gpu_names", "mentions", "named_gpus"]


# Words that name a vendor, a brand or a product line before the model: a spelling may leave them out.
_BRANDS = frozenset({"nvidia", "geforce", "tesla", "quadro", "rtx", "gtx", "amd", "radeon", "instinct", "rx",
                     "jetson", "pro"})
# The form-factor word of NVIDIA's Jetson modules ("Jetson AGX Orin" is also written "Jetson Orin").
_FORM_FACTOR = "agx"
# A line that speaks of GPUs: where a short model number ("T4", "A100") is one.
_CONTEXT = re.compile(r"gpu|nvidia|cuda|device|radeon|instinct|rocm|\bgfx|vram|\bamd\b|graphics",
                      re.IGNORECASE)
_TOKEN = re.compile(r"[a-z]+|\d+")
_SEPARATOR = re.compile(r"[ \t_-]{0,3}")
_WINDOW = 80  # characters a spelling may span
# What follows a name that states a lower bound ("A100+", "RTX 30xx or newer"), not a GPU present.
_THRESHOLD = re.compile(r"\+|[ \t]{1,2}(?:or|and)[ \t](?:newer|later|above|higher|up)\b")


def _tokens(name: str) -> Tuple[str, ...]:
    return tuple(_TOKEN.findall(name.lower()))


@dataclass(frozen=True)
class _Entry:
    vendor: str
    model: str
    capability: Optional[str]
    gfx: Optional[str]
    jetson: bool
    whole: bool = True  # the row's whole name, not a name cut short


class GpuNames:
    """Every spelling of every GPU row, by its tokens (``("rtx", "5070")``)."""

    def __init__(self, gpus: Sequence[GpuModel], targets: Sequence[GfxTarget]) -> None:
        spellings: Dict[Tuple[str, ...], List[_Entry]] = {}
        for gpu in gpus:
            entry = _Entry("nvidia", gpu.name, gpu.compute_capability, None, gpu.jetson)
            for key in _spellings(gpu.name):
                spellings.setdefault(key, []).append(entry)
            for key in _cut(gpu.name) + _series(gpu.name):
                spellings.setdefault(key, []).append(replace(entry, whole=False))
        for target in targets:
            entry = _Entry("amd", target.name, None, target.gfx, False)
            for name in expand_listing(target.name):
                for key in _spellings(name):
                    spellings.setdefault(key, []).append(entry)
        self.spellings = {key: tuple(dict.fromkeys(entries)) for key, entries in spellings.items()}
        names = [gpu.name for gpu in gpus] + [n for t in targets for n in expand_listing(t.name)]
        self.glued = _glued_pairs(names)
        firsts = sorted({key[0] for key in self.spellings}, key=lambda word: (-len(word), word))
        # a first token at a word's start, whole: "a" of "A100", not of "and" or "GA100"
        self.starts = re.compile(r"(?<![a-z0-9])(?:" + "|".join(firsts) + r")"
                                 r"(?:(?<=[a-z])(?![a-z])|(?<=\d)(?!\d))")
        self.longest = max((len(key) for key in self.spellings), default=0)


def _glued_pairs(names: Sequence[str]) -> FrozenSet[Tuple[str, str]]:
    """Neighbouring tokens the names always write glued ("A100", "GB10", "MI300X", "950M"): a text
    that spaces them ("GB 10", "A 100") writes something else, a size or a count."""
    glued: Set[Tuple[str, str]] = set()
    spaced: Set[Tuple[str, str]] = set()
    for name in names:
        tokens = list(_TOKEN.finditer(name.lower()))
        for first, second in zip(tokens, tokens[1:]):
            pair = (first.group(), second.group())
            (glued if first.end() == second.start() else spaced).add(pair)
    return frozenset(glued - spaced)


def _cut(name: str) -> List[Tuple[str, ...]]:
    """A name cut after its model number ("RTX PRO 6000 Blackwell" is written "RTX PRO 6000"), at
    a word's end: "GTX 950M" is not a "GTX 950"."""
    words = re.sub(r"\s*\([^)]*\)", "", name).split()
    cuts = [" ".join(words[:i + 1]) for i in range(1, len(words) - 1) if any(c.isdigit() for c in words[i])]
    return [key for cut in cuts for key in _spellings(cut)]


def _series(name: str) -> List[Tuple[str, ...]]:
    """GeForce's series by the model number's first two digits: "RTX 50 series", "RTX 50xx",
    "GTX 10-series" (a capability only where every row of the series has the same)."""
    # GeForce rows only: the workstation "RTX 5000 Ada" is no RTX 50
    found = re.match(r"geforce (rtx|gtx) (\d\d)\d\d\b", name.lower())
    if found is None:
        return []
    line, series = found.groups()
    return [(line, series, "series"), (line, series, "xx"), ("geforce", line, series, "series")]


def _spellings(name: str) -> List[Tuple[str, ...]]:
    """The token sequences a name is written as (see the module's docstring)."""
    plain = re.sub(r"\s*\([^)]*\)", "", name)
    bases = [_tokens(plain)]
    for alias in re.findall(r"\(([^)]*)\)", name):
        words = _tokens(alias)
        if not _usable(words):  # "(Pascal)" tells two rows apart: no name of its own
            continue
        lead = tuple(word for word in bases[0][:1] if word in _BRANDS)  # "Jetson" + "AGX Thor"
        bases.extend([words, lead + words] if words[:1] != lead else [words])
    found: List[Tuple[str, ...]] = []
    for base in bases:
        for whole in (base, tuple(w for w in base if w != _FORM_FACTOR)):
            # the name, then without each leading brand word in turn
            for start in range(len(whole)):
                found.append(whole[start:])
                if whole[start] not in _BRANDS:
                    break
    return [key for key in dict.fromkeys(found) if _usable(key)]


def _usable(key: Tuple[str, ...]) -> bool:
    """A spelling of two tokens or more with a word in it ("A100", "AGX Thor"): not a bare number
    ("4090" is also a port or a count), nor one word ("Nano"), nor a CPU's name alone ("Ryzen
    4000": its integrated GPU is written with its APU or iGPU)."""
    if len(key) < 2 or not any(w.isalpha() for w in key):
        return False
    return key[0] != "ryzen" or bool({"apu", "igpu"} & set(key))


def _short(key: Tuple[str, ...]) -> bool:
    """A model number of two letters at most ("A100", "T4", "GB10", "6800 XT"): elsewhere a code."""
    return sum(len(w) for w in key if w.isalpha()) <= 2 and key[0] not in _BRANDS


_CACHE: Dict[Tuple[int, int], Tuple[Sequence[GpuModel], Sequence[GfxTarget], GpuNames]] = {}


def gpu_names(gpus: Sequence[GpuModel], targets: Sequence[GfxTarget]) -> GpuNames:
    """The spellings of these rows, built once per table."""
    cached = _CACHE.get((id(gpus), id(targets)))
    if cached is not None and cached[0] is gpus and cached[1] is targets:
        return cached[2]
    names = GpuNames(gpus, targets)
    _CACHE[(id(gpus), id(targets))] = (gpus, targets, names)
    return names


def _ends_clear(lower: str, end: int, last: str) -> bool:
    """The name ends at a word's end, or one letter later after a model number of two digits or
    more ("K20m", "V100S", "5090D"), but not "L4T" (Jetson's Linux)."""
    if end >= len(lower) or not lower[end].isalnum():
        return True
    return (len(last) >= 2 and last.isdigit() and lower[end].isalpha() and lower[end] != "t"
            and (end + 1 >= len(lower) or not lower[end + 1].isalnum()))


def _line(text: str, start: int, end: int) -> str:
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return text[first:last if last >= 0 else len(text)]


def _after_brand(lower: str, start: int) -> bool:
    before = re.search(r"([a-z]+)[ \t]{1,2}$", lower[max(0, start - 24):start])
    return before is not None and before.group(1) in _BRANDS


def _match_at(lower: str, tokens: List[re.Match[str]], i: int, names: GpuNames) -> Optional[Tuple[int, int]]:
    """(tokens used, end offset) of the longest spelling that starts at token ``i``."""
    best: Optional[Tuple[int, int]] = None
    words: List[str] = []
    for j in range(i, min(len(tokens), i + names.longest)):
        if j > i:
            gap = lower[tokens[j - 1].end():tokens[j].start()]
            if not _SEPARATOR.fullmatch(gap) or (gap and (words[-1], tokens[j].group()) in names.glued):
                break
        words.append(tokens[j].group())
        end = tokens[j].end()
        if tuple(words) in names.spellings and _ends_clear(lower, end, words[-1]):
            best = (j - i + 1, end + 1 if end < len(lower) and lower[end].isalnum() else end)  # "K20m"
    return best


def mentions(text: str, names: GpuNames, limit: int = 40) -> List[Tuple[NamedGpu, int, int]]:
    """Every mention of a GPU the data knows, in order: (the GPU, where it starts, where it ends)."""
    lower = text.lower()
    found: List[Tuple[NamedGpu, int, int]] = []
    at = 0
    while len(found) < limit:
        first = names.starts.search(lower, at)  # a word that starts some spelling: the rest is skipped
        if first is None:
            break
        start = first.start()
        tokens = list(_TOKEN.finditer(lower, start, min(len(lower), start + _WINDOW)))
        hit = _match_at(lower, tokens, 0, names)
        if hit is None:
            at = first.end()
            continue
        used, end = hit
        key = tuple(t.group() for t in tokens[:used])
        if _THRESHOLD.match(lower, end):  # "A100+ GPUs", "V100 or newer": a bound, not a GPU present
            at = end
            continue
        if not _short(key) or _after_brand(lower, start) or _CONTEXT.search(_line(text, start, end)):
            found.append((_named(re.sub(r"\s+", " ", text[start:end]), names.spellings[key]), start, end))
        at = end
    if len(found) < limit and any(c.isdigit() for c in lower):
        taken = [(start, end) for _gpu, start, end in found]
        found += [hit for hit in _bare_geforce(text, lower, names)
                  if not any(hit[1] < end and start < hit[2] for start, end in taken)][:limit - len(found)]
        found.sort(key=lambda hit: hit[1])
    return found


# A GeForce card written by its number alone, as people write theirs ("on 3090", "with 3090 or 3080",
# "my 4090 GPU"): the RTX/GTX model numbers of the series since Pascal, after a word that introduces a
# device and before its end ("GPU", "card", "or", punctuation), never with a port or a unit next to it.
_BARE_GEFORCE = re.compile(
    r"\b(?:on|with|my|a|an|the|two|dual|single|\dx)[ \t]+(?P<number>10[5-8]0|16[56]0|20[6-8]0|30[5-9]0"
    r"|40[6-9]0|50[5-9]0)(?P<ti>[ \t]?(?:ti|super))?"
    # (a list goes on only to another card: "3090 or 3080", not "1080 or 720")
    r"(?=[ \t]*(?:gpus?\b|cards?\b|(?:or|and|/|,)[ \t]*(?:(?:rtx|gtx|titan|tesla|quadro)\b|a100|v100|h100"
    r"|(?:10[5-8]0|16[56]0|20[6-8]0|30[5-9]0|40[6-9]0|50[5-9]0)\b)|\.(?!\d)|!|\?|:|\)|$))",
    re.MULTILINE)
# (nor on a line about sizes: 1080 is a video or image height as often as a card)
_NOT_A_GPU_LINE = re.compile(r"\bport\b|localhost|https?://|\bpid\b|\bline\b|\blisten|\bserv(?:e|er|ing)\b"
                             r"|\bheights?\b|\bwidths?\b|resolution|\bpx\b|\bpixels?\b|\bfps\b"
                             r"|\b\d{3,4}[ \t]?[x×][ \t]?\d{3,4}\b|\b\d{3,4}p\b")
_GEFORCE_PREFIX = {"10": "gtx", "16": "gtx"}  # the GTX series; every later one is RTX


def _bare_geforce(text: str, lower: str, names: GpuNames) -> List[Tuple[NamedGpu, int, int]]:
    """GeForce cards written by number alone (see _BARE_GEFORCE), as the data's rows name them."""
    found: List[Tuple[NamedGpu, int, int]] = []
    for match in _BARE_GEFORCE.finditer(lower):
        start, end = match.start("number"), match.end()
        if _NOT_A_GPU_LINE.search(_line(lower, start, end)):
            continue
        number = match.group("number")
        key = (_GEFORCE_PREFIX.get(number[:2], "rtx"), number, *_tokens(match.group("ti") or ""))
        entries = names.spellings.get(key)
        if entries:
            found.append((_named(re.sub(r"\s+", " ", text[start:end]), entries), start, end))
    return found


def named_gpus(text: str, names: GpuNames, limit: int = 8) -> List[NamedGpu]:
    """The GPUs the text names, in order, once each."""
    found: Dict[Tuple[str, str], NamedGpu] = {}
    for gpu, _start, _end in mentions(text, names):
        found.setdefault((gpu.vendor, gpu.model or gpu.name.lower()), gpu)
    return list(found.values())[:limit]


def _named(written: str, entries: Sequence[_Entry]) -> NamedGpu:
    first = entries[0]
    agree = len({(e.vendor, e.capability, e.gfx) for e in entries}) == 1
    if not agree:
        return NamedGpu(written, first.vendor if len({e.vendor for e in entries}) == 1 else "unknown")
    # the row whose whole name this is ("RTX 3090", not the "RTX 3090 Ti" cut short)
    models = {e.model for e in entries if e.whole} or {e.model for e in entries}
    model = models.pop() if len(models) == 1 else None
    return NamedGpu(written, first.vendor, model, first.capability, first.gfx,
                    all(e.jetson for e in entries))
