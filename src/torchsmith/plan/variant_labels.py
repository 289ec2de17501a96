"""The wheel-variant labels a torch release's variant index declares (PEP 825 draft), per platform.

Recorded where the release's ``torch-<version>-variants.json`` was read (``variant_labels.json``:
the configs PyTorch's release workflow repacks the variant wheels with); else derived from the
builds by the rules those recorded files follow: a CUDA build's label declares its CUDA version as
``cuda_version_lower_bound`` and its SASS/PTX as ``sm_arch``; a ROCm build's declares its gfx list
and its ROCm ``major.minor`` as ``rocm_version``; the xpu build's declares the device IPs of the
Intel families the release supports; the CPU build is the null variant. Recorded files differ from
the derivation where PyTorch chose so (2.9 and 2.10 declare CUDA 12.0 as the floor of both 12.x
labels), which is why a recorded file wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from torchsmith.kb.variant_index import LabelFacts, build_name, parse_variants_data
from torchsmith.versions import version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase, TorchRelease, VariantBuild

__all__ = ["NAMESPACE_ORDER", "build_name", "first_variant_release", "intel_families", "labels_of",
           "mainline_uv_caveat", "namespace_order", "recorded", "uv_preview", "uv_skipped_nvidia",
           "uv_unparsed"]

# The order of the recorded 2.9/2.10 files' default-priorities (nvidia, intel, amd): a machine
# whose GPUs fit labels of two vendors gets the first vendor's.
NAMESPACE_ORDER = ("nvidia", "intel", "amd")

def recorded(kb: KnowledgeBase, version: str) -> Optional[Mapping[str, Any]]:
    """The recorded variants.json of a release (with its source), or None."""
    return next((row for row in kb.document("variant_labels")["releases"] if row["torch"] == version), None)


def first_variant_release(kb: KnowledgeBase) -> Optional[str]:
    """The oldest release on PyTorch's variant index: the oldest recorded variants.json (its
    release workflow repacks variant wheels from variant-repack's configs, which begin at 2.8)."""
    versions = [str(row["torch"]) for row in kb.document("variant_labels")["releases"]]
    return min(versions, key=version_tuple) if versions else None


# What uv's own preview does with these files, as observed (variant_labels.json ``uv_preview``, run
# by tests/plan/test_variant_index_uv.py): the fields it refuses a file for, and the only providers
# it runs. PyTorch's own validation installs the WheelNext build of uv, which runs the providers'
# plugins (pytorch/test-infra .github/scripts/validate_binaries.sh, INSTALLER_DOWNLOAD_URL).
UV_REJECTS = ("{installer} {version}'s own preview cannot parse this release's variants.json ({fields}: "
              "'{message}', no solution){also}; the pick above is what a uv that runs the providers (the "
              "WheelNext build PyTorch validates with) takes")
UV_SKIPS = ("{installer} {version}'s own preview runs only its built-in providers ({providers}) and "
            "skips AMD's and Intel's, so it takes the CPU build on this machine; the pick above is what a uv "
            "that runs the providers (the WheelNext build PyTorch validates with) takes")

UV_SKIPS_NVIDIA = ("{installer} {version}'s own preview skips this release's NVIDIA provider "
                   "({requires}: its own counts as {own}) and takes the CPU build; the pick above is what a "
                   "uv that runs the providers (the WheelNext build PyTorch validates with) takes")


def uv_preview(kb: KnowledgeBase) -> Mapping[str, Any]:
    found: Mapping[str, Any] = kb.document("variant_labels")["uv_preview"]
    return found


def mainline_uv_caveat(kb: KnowledgeBase, version: str, vendor: bool) -> Optional[str]:
    """Where uv's own preview differs from a provider-running installer: a recorded file it cannot
    parse, or (``vendor``) an AMD/Intel machine whose providers it does not run."""
    seen = uv_preview(kb)
    installer, release = seen["installer"], seen["version"]
    row = recorded(kb, version) or {}
    fields = uv_unparsed(kb, row)
    skipped = uv_skipped_nvidia(kb, row)
    also = (f"; without them it still skips the file's NVIDIA provider ({skipped}: its own counts as "
            f"{seen['nvidia_provider']['version']}) and takes the CPU build") if skipped else ""
    if fields:
        return UV_REJECTS.format(installer=installer, version=release, fields=", ".join(fields),
                                 message=seen["message"], also=also)
    if skipped:
        return UV_SKIPS_NVIDIA.format(installer=installer, version=release, requires=skipped,
                                      own=seen["nvidia_provider"]["version"])
    if not vendor:
        return None
    return UV_SKIPS.format(installer=installer, version=release, providers=", ".join(seen["providers"]))


def uv_unparsed(kb: KnowledgeBase, row: Mapping[str, Any]) -> List[str]:
    """What uv's preview refuses in this variants.json: each recorded field (``a.*.b`` paths) the
    file has, said as the data says it."""
    return [str(reject["says"]) for reject in uv_preview(kb)["rejects"]
            if _has(row, str(reject["field"]).split("."))]


def uv_skipped_nvidia(kb: KnowledgeBase, row: Mapping[str, Any]) -> Optional[str]:
    """The file's NVIDIA provider requirement uv's built-in provider does not satisfy, if any."""
    from packaging.requirements import InvalidRequirement, Requirement

    own = uv_preview(kb)["nvidia_provider"]
    for text in row.get("providers", {}).get("nvidia", {}).get("requires", ()):
        try:
            requirement = Requirement(str(text))
        except InvalidRequirement:
            continue
        if requirement.name == own["name"] and not requirement.specifier.contains(own["version"],
                                                                                  prereleases=True):
            return str(text)
    return None


def _has(node: Any, path: List[str]) -> bool:
    if not path:
        return True
    if not isinstance(node, dict):
        return False
    head, rest = path[0], path[1:]
    children = list(node.values()) if head == "*" else [node[head]] if head in node else []
    return any(_has(child, rest) for child in children)


def namespace_order(kb: KnowledgeBase, version: str) -> Tuple[str, ...]:
    row = recorded(kb, version)
    order = (row or {}).get("default-priorities", {}).get("namespace", NAMESPACE_ORDER)
    return tuple(n for n in order if n in NAMESPACE_ORDER)


def labels_of(kb: KnowledgeBase, release: TorchRelease, platform: str) -> Dict[str, LabelFacts]:
    """label -> facts for the labels whose wheels exist for ``platform`` (the null label always): as
    the variant index lists them where `kb refresh` read it (``published``), else as the builds'."""
    row = recorded(kb, release.version)
    if row is None:
        return _derived(kb, release, platform)
    published: Mapping[str, List[str]] = row.get("published") or {}
    out: Dict[str, LabelFacts] = {}
    for label, facts in parse_variants_data(row, f"variant_labels.json torch {release.version}").items():
        build = release.variant(build_name(label))
        on = published.get(label, ()) if published else (build.platforms if build is not None else ())
        if facts.is_null or platform in on:
            out[label] = facts
    return out


def intel_families(kb: KnowledgeBase) -> List[Mapping[str, Any]]:
    rows: List[Mapping[str, Any]] = kb.document("variant_labels")["intel_families"]["rows"]
    return rows


def _xpu_ips(kb: KnowledgeBase, version: str) -> Tuple[str, ...]:
    """The device IPs of the Intel families xpu.json says this release supports."""
    first = {row["family"]: row["first_torch"] for row in kb.document("xpu")["rows"]}
    ips = [ip for family in intel_families(kb)
           if version_tuple(first.get(family["family"], "999")) <= version_tuple(version)
           for ip in family["label_ips"]]
    return tuple(sorted(set(ips), key=version_tuple))


def major_floors(kb: KnowledgeBase) -> bool:
    """Whether the newest recorded file declares ``{major}.0`` as every CUDA label's driver floor
    (2.9 and 2.10 do: cuda12.6 and cuda12.8 both 12.0), so derived labels follow it; else (2.8's
    cu128 12.8) each build's own CUDA version is its floor."""
    rows = sorted(kb.document("variant_labels")["releases"], key=lambda r: version_tuple(r["torch"]))
    for row in reversed(rows):
        facts = parse_variants_data(row, f"variant_labels.json torch {row['torch']}")
        cuda = [(build_name(f.label), f.cuda_lower) for f in facts.values() if f.cuda_lower]
        if cuda:
            return all(lower == f"{name[2:-1]}.0" for name, lower in cuda if name.startswith("cu"))
    return False


def _derived_label(kb: KnowledgeBase, build: VariantBuild, version: str, platform: str,
                   rank: int = 99) -> Optional[LabelFacts]:
    if build.kind == "cuda" and build.cuda:
        sass, ptx = build.sass(platform), build.ptx(platform)
        arch = tuple(a.split("_", 1)[1] + "_real" for a in sass) + tuple(a.split("_", 1)[1] + "_virtual"
                                                                        for a in ptx)
        floor = f"{build.cuda.split('.')[0]}.0" if major_floors(kb) else build.cuda
        nvidia = {"cuda_version_lower_bound": (floor,), "sm_arch": arch}
        # PyTorch's static priority: the newest CUDA first (the recorded 2.9/2.10 files)
        return LabelFacts(build.name, {"nvidia": nvidia, "priority": {"order": (str(rank),)}},
                          cuda_lower=floor, sass=sass, ptx=ptx)
    if build.kind == "rocm" and build.rocm and build.gfx:
        rocm = ".".join(build.rocm.split(".")[:2])
        return LabelFacts(build.name, {"amd": {"gfx_arch": tuple(build.gfx), "rocm_version": (rocm,)}})
    if build.kind == "xpu":
        ips = _xpu_ips(kb, version)
        return LabelFacts(build.name, {"intel": {"device_ip": ips}}) if ips else None
    if build.kind == "cpu":
        return LabelFacts(build.name, {})
    return None


def _derived(kb: KnowledgeBase, release: TorchRelease, platform: str) -> Dict[str, LabelFacts]:
    out: Dict[str, LabelFacts] = {}
    cudas = sorted({b.cuda for b in release.variants if b.kind == "cuda" and b.cuda}, key=version_tuple,
                   reverse=True)
    for build in release.variants:
        if platform in build.platforms or build.kind == "cpu":
            rank = cudas.index(build.cuda) + 1 if build.cuda in cudas else 99
            facts = _derived_label(kb, build, release.version, platform, rank)
            if facts is not None:
                out[build.name] = facts
    return out
