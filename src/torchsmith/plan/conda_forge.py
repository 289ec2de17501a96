"""Which conda build a plan can really get: a release conda-forge built, the legacy ``pytorch``
channel for releases it never built, and conda packages instead of pip wheels compiled against
PyPI's torch (which conda-forge's pytorch cannot load: a different C++ ABI).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.plan.model import PackagePin
from torchsmith.records import dataclass
from torchsmith.versions import minor_version, version_tuple

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["ForgeRelease", "compiled_on_conda_forge", "forge_release", "legacy_specs", "source_urls",
           "tensorflow_windows_gpu"]


def source_urls(formats: Dict[str, Any], table: str) -> List[str]:
    """The URLs a table of the ``formats`` document cites."""
    return [formats["sources"][s]["url"] for s in formats[table].get("sources", ())]


@dataclass(frozen=True)
class ForgeRelease:
    version: str  # a release conda-forge built
    note: Optional[str]  # why it differs from the pip plan's, with the source
    cudas: Tuple[str, ...] = ()  # the CUDA versions of its builds for the platform

    def cuda_for(self, wanted: str) -> Tuple[str, Optional[str]]:
        """The build's CUDA for the plan's ``wanted``: itself, else the newest of the same major."""
        if not self.cudas or wanted in self.cudas:
            return wanted, None
        same = [c for c in self.cudas if c.split(".")[0] == wanted.split(".", maxsplit=1)[0]]
        if not same:
            return wanted, None  # the resolver's note already says none fits
        older = [c for c in same if version_tuple(c) <= version_tuple(wanted)]
        chosen = max(older, key=version_tuple) if older else min(same, key=version_tuple)
        return chosen, (f"conda-forge's pytorch {self.version} builds are for CUDA {', '.join(self.cudas)}: "
                        f"cuda-version={chosen}")


def forge_release(version: str, platform: str, kb: KnowledgeBase) -> Optional[ForgeRelease]:
    """The conda-forge release for the pip plan's ``version`` on ``platform``; None: never built.

    An unlisted patch release of a built series takes the series' newest built release.
    """
    base = version.split("+", maxsplit=1)[0]
    try:
        rows = kb.conda_builds
    except TorchsmithError:
        return ForgeRelease(base, None)  # a broken KB is reported by the commands that need it
    series = [b for b in rows if b.package == "pytorch" and b.releases and platform in b.platforms]
    row = next((b for b in series if b.version == minor_version(base)), None)
    newer = all(version_tuple(base) > version_tuple(b.version + ".999") for b in series)
    if row is None and series and newer:
        row = max(series, key=lambda b: version_tuple(b.version))  # newer than the data knows
        newest = max(row.releases, key=version_tuple)
        return ForgeRelease(newest, f"torchsmith's data knows no conda-forge build of pytorch {base}; the "
                                    f"newest it knows is {newest} ({row.note or 'its feedstock'}): "
                                    f"pytorch={newest} instead", row.cudas_for(platform))
    if row is None:
        return None
    if base in row.releases:
        return ForgeRelease(base, None, row.cudas_for(platform))
    newest = max(row.releases, key=version_tuple)
    built = ", ".join(sorted(row.releases, key=version_tuple))
    return ForgeRelease(newest, f"conda-forge built pytorch {built} of the {row.version} series, "
                                f"not {base}: pytorch={newest} instead ({row.note or 'its feedstock'})",
                        row.cudas_for(platform))


def legacy_specs(version: str, cuda: Optional[str], formats: Dict[str, Any],
                 platform: str = "") -> Tuple[List[str], List[str], List[str]]:
    """(channels, packages, comments) for the legacy ``pytorch`` channel; raises when it has none."""
    data = formats["conda_legacy"]
    base = version.split("+", maxsplit=1)[0]
    if not base or version_tuple(base) > version_tuple(data["last"]):
        raise TorchsmithError(
            f"no conda environment for pytorch {base or '?'} here: conda-forge never built it for this "
            f"platform, and the pytorch channel stopped at {data['last']}",
            code="format-not-applicable", hint="use --format pip or --format uv")
    channels = [data["channel"]]
    packages = [f"pytorch={base}"]
    if cuda is None:
        packages.append(data["cpu_package"])
    elif version_tuple(base) < version_tuple(data["cudatoolkit_until"] + ".999"):
        packages.append(f"cudatoolkit={cuda}")
        if version_tuple(cuda) >= version_tuple(data["cudatoolkit_conda_forge_from"]):
            channels.append("conda-forge")  # the pytorch channel's own cudatoolkit stops before it
    else:
        packages.append(f"{data['cuda_package']}={cuda}")
        channels.append(data["cuda_channel"])
    if data.get("dependency_channel") and data["dependency_channel"] not in channels:
        channels.append(data["dependency_channel"])  # python, mkl, blas: last, with nodefaults
    if data.get("mkl_pin") and platform.endswith("x86_64"):
        packages.append(data["mkl_pin"])
    comments = [f"conda-forge never built pytorch {base} for this platform: the legacy "
                f"{data['channel']} channel (no builds after {data['last']}) has it"
                + (f" ({data['note']}; unverified)" if data.get("uncertain") else ""),
                *([data["dependency_channel_why"]] if data.get("dependency_channel_why") else []),
                *([f"{data['mkl_pin']}: {data['mkl_pin_why']}"]
                  if data.get("mkl_pin") and platform.endswith("x86_64") else []),
                *(f"see {url}" for url in source_urls(formats, "conda_legacy"))]
    return channels, packages, comments


def compiled_on_conda_forge(pins: Sequence[PackagePin],
                            formats: Dict[str, Any]) -> Tuple[List[str], List[PackagePin], List[str]]:
    """(conda-forge names, pins pip may still install, comments) for the pip side of a plan.

    Wheels built against PyPI's torch (find-links pages, direct URLs, known extensions) do not
    load into conda-forge's pytorch; their conda-forge builds replace them, or the plan cannot be
    expressed at all (a one-line error naming them).
    """
    data = formats["conda_compiled"]
    mapping = data["conda_forge"]
    names: List[str] = []
    keep: List[PackagePin] = []
    missing: List[str] = []
    for pin in pins:
        compiled = pin.name in mapping or pin.name in data["none"] or pin.find_links or pin.wheel_url
        if not compiled:
            keep.append(pin)
        elif pin.name in mapping:
            names.append(mapping[pin.name])
        else:
            missing.append(pin.name)
    if missing:
        raise TorchsmithError(
            f"no conda-forge environment for {', '.join(missing)}: their wheels are built against PyPI's "
            "torch, whose C++ ABI conda-forge's pytorch does not share (import fails with undefined "
            "symbols), and conda-forge has no build of them",
            code="format-not-applicable", hint="use --format pip or --format uv (PyPI's torch)")
    comments = []
    if names:
        comments.append(f"{', '.join(names)} from conda-forge, built against its pytorch: pip wheels "
                        "built against PyPI's torch fail to import here (C++ ABI)"
                        + (" (package names unverified)" if data.get("uncertain") else ""))
        comments.extend(f"see {url}" for url in source_urls(formats, "conda_compiled"))
    return names, keep, comments


def tensorflow_windows_gpu(platform: str, pins: Sequence[PackagePin],
                           formats: Dict[str, Any]) -> Tuple[List[Tuple[str, str]], List[str]]:
    """TensorFlow <= 2.10 on native Windows finds its GPU only through CUDA and cuDNN installed next
    to it: conda-forge's cudatoolkit and cudnn (the recipe TensorFlow's install page gives)."""
    data = formats["tensorflow_windows_gpu"]
    tf = next((p for p in pins if p.name == "tensorflow"), None)
    if not platform.startswith("windows") or tf is None or not tf.version:
        return [], []
    if version_tuple(tf.version) >= version_tuple(data["last"] + ".999"):
        return [], [f"tensorflow {tf.version} has no GPU support on native Windows (it ended with "
                    f"{data['last']}): CPU only here, or WSL2 for the GPU"]
    packages = [("cudatoolkit", data["cudatoolkit"]), ("cudnn", data["cudnn"])]
    notes = [f"tensorflow {tf.version} on native Windows: CUDA {data['cudatoolkit']} and cuDNN "
             f"{data['cudnn']} from {data['channel']} (drop both for CPU only)",
             *(f"see {url}" for url in source_urls(formats, "tensorflow_windows_gpu"))]
    return packages, notes
