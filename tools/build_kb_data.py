"""Generate src/torchsmith/kb/data/*.json from the shared fact sheet and tools/kb_curated.py.

    python tools/build_kb_data.py [--facts /work/shared/facts/facts.json] [--check]

Deterministic: same inputs, same bytes (sorted keys, fixed order). ``--check`` exits 1 when the
packaged files differ from what would be generated. After regenerating, run
``torchsmith kb validate``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_curated as cur

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "torchsmith", "kb", "data")
KB_VERSION = "2026.11.22"
RETRIEVED = "2026-11-22"
INDEX_BASE = "https://download.pytorch.org/whl"

PLATFORM_KEYS = {
    "linux_x86_64": "linux-x86_64",
    "linux_aarch64": "linux-aarch64",
    "win_amd64": "windows-x86_64",
    "macos_arm64": "macos-arm64",
    "macos_x86_64": "macos-x86_64",
}

# Fact-sheet source ids -> a URL to cite (the fact sheet describes them in words).
FACT_URLS = {
    "PYPI": "https://pypi.org/simple/torch/",
    "PYPI_FATBIN": "https://pypi.org/project/torch/#files",
    "TI": "https://github.com/pytorch/test-infra/blob/61a77570f45416dc425c17d4a648376541a84732/tools/scripts/"
    "generate_binary_build_matrix.py",
    "B": "https://github.com/pytorch/builder/blob/main/manywheel/build_cuda.sh",
    "B_ROCM": "https://github.com/pytorch/builder/blob/main/manywheel/build_docker.sh",
    "RM_OLD": "https://github.com/pytorch/pytorch/blob/aa6104e2a21e72f83ce217ea93e8e69884e22b04/RELEASE.md",
    "RM_NEW": "https://github.com/pytorch/pytorch/blob/main/RELEASE.md",
    "PV_OLD": "https://github.com/pytorch/pytorch.github.io/blob/e3f009bbc0d7509ed5c85b633313ec72aa2d1a40/"
    "_get_started/previous-versions.md",
    "PV_NEW": "https://pytorch.org/get-started/previous-versions/",
    "BC28": "https://github.com/pytorch/pytorch/blob/00c7a380b8369d08e02dd400aa76dc6c0738b589/"
    ".ci/manywheel/build_cuda.sh",
    "BC29": "https://github.com/pytorch/pytorch/blob/799d09f215740cc4fb78e0bd278dce469e33ddcb/"
    ".ci/manywheel/build_cuda.sh",
    "TI_CUDA_PY": "https://github.com/pytorch/test-infra/blob/61a77570f45416dc425c17d4a648376541a84732/tools/"
    "pkg-helpers/pytorch_pkg_helpers/cuda.py",
    "NV_RN": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
    "NV_RN133": "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html",
    "NV_GPUS": "https://developer.nvidia.com/cuda-gpus",
    "JC": "https://github.com/dusty-nv/jetson-containers/blob/dd206bfe71f9ed35a02d9b9d9954bddb1b649602/"
    "jetson_containers/l4t_version.py",
    "JC_PT": "https://github.com/dusty-nv/jetson-containers/blob/dd206bfe71f9ed35a02d9b9d9954bddb1b649602/"
    "packages/ml/pytorch/version.py",
    "NV_JETSON_TABLE": "https://docs.nvidia.com/deeplearning/frameworks/"
    "install-pytorch-jetson-platform-release-notes/",
    "ROCM_DOCKER_25": "https://github.com/pytorch/pytorch/blob/1fca82d48c821e8f6fe4b04f0e846d10204af58f/"
    ".ci/docker/manywheel/build.sh",
}
EXTRA_SOURCES = {
    "GPU_COPIES": (
        "https://www.cnblogs.com/nightnine/p/16591404.html",
        "third-party copies of developer.nvidia.com/cuda-gpus (cnblogs, qiita, csdn)",
        RETRIEVED,
        "compute capabilities copied from NVIDIA's table by third parties",
    ),
    "ROCM_SPECS": (
        "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html",
        "AMD ROCm GPU specifications (LLVM gfx target per GPU)",
        RETRIEVED,
        "",
    ),
    "HSA_OVERRIDE": (
        "https://github.com/ROCm/ROCm/issues/2353",
        "ROCm issues #2353/#3065, rocBLAS #1339, TheRock #1719 on HSA_OVERRIDE_GFX_VERSION",
        RETRIEVED,
        "community convention, not supported by AMD",
    ),
}


class Sources:
    """Maps the fact sheet's free-text source notes to manifest ids."""

    def __init__(self, facts: Dict[str, Any]) -> None:
        self.texts: Dict[str, str] = dict(facts["meta"]["sources"])

    def ids(self, text: Optional[str], fallback: Tuple[str, ...] = ("FACTS",)) -> Tuple[List[str], bool]:
        """(ids, unmatched): the sources a note names; unmatched=True when only the fallback fits."""
        if not text:
            return list(fallback), True
        found: List[str] = []
        for key, desc in self.texts.items():
            head = desc[:60]
            if head in text or re.search(rf"(?<![A-Z_]){re.escape(key)}(?![A-Z_0-9])", text):
                found.append(key)
        if "PyPI" in text and "PYPI" not in found:
            found.append("PYPI")
        if "fatbin" in text and "PYPI_FATBIN" not in found:
            found.append("PYPI_FATBIN")
        if "developer.nvidia.com/cuda-gpus" in text and "NV_GPUS" not in found and "copy" not in text:
            found.append("NV_GPUS")
        if ("cnblogs" in text or "qiita" in text or "csdn" in text) and "GPU_COPIES" not in found:
            found.append("GPU_COPIES")
        if "pytorch/pull/141667" in text or "PRs #147761" in text or "pull/167299" in text:
            found.append("FACTS")
        if not found:
            return list(fallback), True
        return sorted(set(found), key=found.index), False


def manifest(src: Sources) -> Dict[str, Any]:
    sources: Dict[str, Any] = {}
    for key, desc in src.texts.items():
        urls = re.findall(r"https?://[^\s)',;]+", desc)
        sources[key] = {
            "url": FACT_URLS.get(key) or (urls[0] if urls else ""),
            "title": desc,
            "retrieved": RETRIEVED,
        }
    for key, (url, title, retrieved, note) in list(cur.SOURCES.items()) + list(EXTRA_SOURCES.items()):
        sources[key] = {"url": url, "title": title, "retrieved": retrieved}
        if note:
            sources[key]["note"] = note
    return {
        "kb_version": KB_VERSION,
        "schema": 1,
        "torch_index_base": INDEX_BASE,
        "about": "torchsmith compatibility data; generated by tools/build_kb_data.py",
        "sources": dict(sorted(sources.items())),
    }


# --- torch releases ---------------------------------------------------------------------------


def cuda_of(variant: str) -> str:
    digits = variant[2:]
    return f"{digits[:-1]}.{digits[-1]}"


def variant_row(name: str, facts_v: Dict[str, Any], src: Sources, gfx_fallback: List[str]) -> Dict[str, Any]:
    ids, unmatched = src.ids(facts_v.get("source"))
    uncertain = bool(facts_v.get("uncertain")) or unmatched
    row: Dict[str, Any] = {"name": name}
    notes = []
    if name.startswith("cu"):
        row["kind"] = "cuda"
        row["cuda"] = cuda_of(name)
        platforms = ["linux-x86_64", "windows-x86_64"]
        sass: Dict[str, List[str]] = {}
        if facts_v.get("arch"):
            sass["linux-x86_64"] = list(facts_v["arch"])
            if name in cur.WINDOWS_ARCHS:
                sass["windows-x86_64"] = list(cur.WINDOWS_ARCHS[name])
                notes.append(
                    f"Windows arch list from .ci/pytorch/windows/cuda{name[2:]}.bat @ "
                    f"{cur.WINDOWS_BAT_COMMITS[name][:8]} (release branch not checked)"
                )
                ids = [*ids, "WIN_BAT"]
            else:
                sass["windows-x86_64"] = list(facts_v["arch"])
                notes.append("Windows arch list taken to equal the Linux one (not verified)")
        if facts_v.get("arch_linux_aarch64"):
            platforms.insert(1, "linux-aarch64")
            sass["linux-aarch64"] = list(facts_v["arch_linux_aarch64"])
        row["platforms"] = platforms
        row["sass"] = sass
        if isinstance(facts_v.get("ptx"), str):
            notes.append(f"PTX: {facts_v['ptx']}; release builds strip +PTX, so none is listed")
            uncertain = True
    elif name.startswith("rocm"):
        row["kind"] = "rocm"
        row["rocm"] = name[4:]
        row["platforms"] = ["linux-x86_64"]
        row["gfx"] = [g.split(" ")[0] for g in (facts_v.get("gfx") or gfx_fallback)]
        if not facts_v.get("gfx"):
            uncertain = True
            notes.append("gfx list from the release series table")
    elif name == "xpu":
        row["kind"] = "xpu"
        row["platforms"] = ["linux-x86_64", "windows-x86_64"]
    else:
        row["kind"] = "cpu"
        row["platforms"] = []  # filled by the caller
    if facts_v.get("note"):
        notes.append(str(facts_v["note"]))
    row["source"] = ids
    if uncertain:
        row["uncertain"] = True
    if notes:
        row["note"] = "; ".join(notes)
    return row


def rocm_series_gfx(facts: Dict[str, Any], version: str) -> List[str]:
    v = Version(version)
    for span, data in facts["rocm"]["by_torch_release"].items():
        lo, _, hi = span.partition("-")
        lo_v, hi_v = Version(lo), Version(hi or lo)
        if lo_v <= Version(f"{v.major}.{v.minor}") <= hi_v:
            return list(data["gfx"])
    return []


def releases(facts: Dict[str, Any], src: Sources) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for rel in facts["torch_releases"]:
        version = rel["torch"]
        python = {PLATFORM_KEYS[k]: list(v) for k, v in rel["python_by_platform_pypi"].items()}
        gfx = rocm_series_gfx(facts, version)
        variants = []
        for name, data in rel["variants"].items():
            if name.startswith("rocm") and version.startswith("2.5") and name == "rocm6.1":
                gfx_here = [g for g in gfx if "942" not in g]  # gfx942 only with ROCm >= 6.0 (all 2.5 rows)
            else:
                gfx_here = gfx
            variants.append(variant_row(name, data, src, gfx_here))
        for variant in variants:
            if variant["kind"] == "cpu":
                variant["platforms"] = sorted(python, key=list(PLATFORM_KEYS.values()).index)
        default = rel["pypi_default"]
        pypi_default = {
            "linux-x86_64": default["linux_x86_64"],
            "linux-aarch64": default["linux_aarch64"],
            "windows-x86_64": "cpu",
            "macos-arm64": "cpu",
        }
        if "macos-x86_64" in python:
            pypi_default["macos-x86_64"] = "cpu"
        names = [v["name"] for v in variants]
        for platform, name in pypi_default.items():
            if name not in names:
                raise SystemExit(f"{version}: PyPI default {name} for {platform} is not a variant")
        # The PyPI aarch64 CUDA wheel: the variant must list linux-aarch64 with its archs.
        for variant in variants:
            is_default = variant["name"] == pypi_default["linux-aarch64"] and variant["kind"] == "cuda"
            if is_default and "linux-aarch64" not in variant["platforms"]:
                variant["platforms"].insert(1, "linux-aarch64")
        ids, unmatched = src.ids(f"{rel.get('python_source', '')} {rel.get('variants_source', '')}")
        row: Dict[str, Any] = {
            "version": version,
            "python": python,
            "pypi_default": pypi_default,
            "torchvision": rel.get("torchvision"),
            "torchaudio": rel.get("torchaudio"),
            "variants": variants,
            "source": ids,
        }
        notes = list(rel.get("notes") or [])
        if rel.get("possibly_also_published_uncertain"):
            notes.append(
                "possibly also published (unverified): " + ", ".join(rel["possibly_also_published_uncertain"])
            )
        if rel.get("pairing_note"):
            notes.append(rel["pairing_note"])
        if notes:
            row["notes"] = notes
        if unmatched or rel.get("torchvision_uncertain"):
            row["uncertain"] = True
        rows.append(row)
    rows.extend(old_release(spec) for spec in cur.OLD_RELEASES)
    rows.append(lts_release())
    rows.sort(key=lambda r: Version(r["version"]), reverse=True)
    return rows


def old_archs(version: str, variant: str) -> List[str]:
    cuda = cuda_of(variant)
    major = cuda.split(".")[0]
    if Version(version) >= Version("1.8"):
        extra = cur.OLD_ARCHS_FROM_1_8.get(cuda, cur.OLD_ARCHS_FROM_1_8.get(major, []))
    else:
        extra = cur.OLD_ARCHS_BEFORE_1_8.get(major, [])
    return cur.OLD_ARCH_BASE + extra


def lts_release() -> Dict[str, Any]:
    version, pythons, names, tv, ta = cur.LTS_182
    row = old_release((version, pythons, names, "cu102", tv, ta))
    row["python"] = {"linux-x86_64": pythons, "windows-x86_64": pythons}
    row["pypi_default"] = {}  # not on PyPI
    for variant in row["variants"]:
        variant["index_url"] = f"{INDEX_BASE}/lts/1.8/{variant['name']}"
        variant["platforms"] = [p for p in variant["platforms"] if p != "macos-x86_64"]
        variant.pop("note", None)
    row["notes"] = ["LTS release: its own index under /whl/lts/1.8/; no macOS wheels"]
    return row


def old_release(spec: Tuple[Any, ...]) -> Dict[str, Any]:
    version, pythons, names, default, tv, ta = spec
    python = {
        "linux-x86_64": pythons,
        "windows-x86_64": [p for p in pythons if p != "2.7"],
        "macos-x86_64": pythons,
    }
    variants: List[Dict[str, Any]] = []
    for name in names:
        if name.startswith("cu"):
            variants.append(
                {
                    "name": name,
                    "kind": "cuda",
                    "cuda": cuda_of(name),
                    "platforms": ["linux-x86_64", "windows-x86_64"],
                    "sass": {
                        "linux-x86_64": old_archs(version, name),
                        "windows-x86_64": old_archs(version, name),
                    },
                    "source": ["B_OLD", "PV_OLD"],
                    "uncertain": True,
                    "note": "install with -f https://download.pytorch.org/whl/torch_stable.html if the "
                    "per-variant index lacks this release",
                }
            )
        else:
            rocm = name[4:]
            gfx = cur.OLD_GFX_43 if Version(rocm) >= Version("4.3") else cur.OLD_GFX
            variants.append(
                {
                    "name": name,
                    "kind": "rocm",
                    "rocm": rocm,
                    "platforms": ["linux-x86_64"],
                    "gfx": gfx,
                    "source": ["B_OLD", "PV_OLD"],
                    "uncertain": True,
                }
            )
    variants.append(
        {
            "name": "cpu",
            "kind": "cpu",
            "platforms": ["linux-x86_64", "windows-x86_64", "macos-x86_64"],
            "source": ["PV_OLD"],
            "uncertain": True,
        }
    )
    row: Dict[str, Any] = {
        "version": version,
        "python": python,
        "pypi_default": {"linux-x86_64": default, "windows-x86_64": "cpu", "macos-x86_64": "cpu"},
        "torchvision": tv,
        "torchaudio": ta,
        "variants": variants,
        "source": ["PV_OLD"],
        "uncertain": True,
    }
    return row


# --- CUDA ----------------------------------------------------------------------------------------


def _driver(text: str) -> Optional[str]:
    match = re.match(r"^\s*(\d+(?:\.\d+){0,2})", text or "")
    return match.group(1) if match else None


def toolkits(facts: Dict[str, Any], src: Sources) -> List[Dict[str, Any]]:
    grouped: Dict[str, Dict[str, Any]] = {}
    for label, data in facts["cuda_min_driver"].items():
        minor = re.match(r"^(\d+\.\d+)", label).group(1)  # type: ignore[union-attr]
        linux = _driver(data.get("linux", "").replace("R616 >=", "").split("; ")[-1])
        windows = _driver(data.get("windows", ""))
        ids, unmatched = src.ids(data.get("source"))
        is_update = "Update" in label and "GA" not in label
        row = grouped.setdefault(minor, {"version": minor, "updates": [], "source": [], "uncertain": False})
        for i in ids:
            if i not in row["source"]:
                row["source"].append(i)
        if data.get("uncertain") or unmatched:
            row["uncertain"] = True
        if is_update:
            row["updates"].append({"label": label, "linux": linux, "windows": windows})
        else:
            row["min_driver_linux"] = linux
            row["min_driver_windows"] = windows
    for minor, (linux, windows, updates) in cur.OLD_TOOLKITS.items():
        grouped[minor] = {
            "version": minor,
            "min_driver_linux": linux,
            "min_driver_windows": windows,
            "updates": [{"label": u[0], "linux": u[1], "windows": u[2]} for u in updates],
            "source": ["NV_RN_OLD"],
            "uncertain": False,
        }
    compat = {major: (linux, windows) for major, linux, windows, _, _, _ in cur.MINOR_COMPAT}
    rows = []
    for minor in sorted(grouped, key=Version, reverse=True):
        row = grouped[minor]
        row["updates"].sort(key=lambda u: u["label"])
        if not row["updates"]:
            del row["updates"]
        major = minor.split(".")[0]
        if major in compat:
            row["minor_compat_min_driver_linux"], row["minor_compat_min_driver_windows"] = compat[major]
        if not row["uncertain"]:
            del row["uncertain"]
        rows.append({k: v for k, v in row.items() if v is not None})
    return rows


def driver_branches(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out: Dict[str, Dict[str, Any]] = {}
    for row in rows:  # newest CUDA first: the first toolkit of a branch is its highest
        linux = row.get("min_driver_linux")
        if not linux:
            continue
        branch = linux.split(".")[0]
        if branch not in out:
            out[branch] = {
                "branch": branch,
                "min_version_linux": linux,
                "max_cuda": row["version"],
                "source": list(row["source"]),
            }
            if row.get("uncertain"):
                out[branch]["uncertain"] = True
    return sorted(out.values(), key=lambda r: int(r["branch"]), reverse=True)


def cuda_file(facts: Dict[str, Any], src: Sources) -> Dict[str, Any]:
    kits = toolkits(facts, src)
    arch = []
    for cuda, lo, hi, archs, deprecated, sources, uncertain, note in cur.ARCH_SUPPORT:
        row: Dict[str, Any] = {
            "cuda": cuda,
            "min_arch": lo,
            "max_arch": hi,
            "archs": archs,
            "deprecated": deprecated,
            "source": sources,
            "note": note,
        }
        if uncertain:
            row["uncertain"] = True
        arch.append(row)
    compat = []
    for major, linux, windows, below, sources, uncertain in cur.MINOR_COMPAT:
        row = {
            "cuda_major": major,
            "min_driver_linux": linux,
            "min_driver_windows": windows,
            "limits": cur.MINOR_COMPAT_LIMITS,
            "source": [*sources, "NV_COMPAT"],
        }
        if below:
            row["below_driver_branch"] = below
        if uncertain:
            row["uncertain"] = True
        compat.append(row)
    return {
        "toolkits": kits,
        "minor_compat": compat,
        "driver_branches": driver_branches(kits),
        "arch_support": arch,
    }


# --- GPUs, Jetson, ROCm -------------------------------------------------------------------------


def family(cc: str) -> str:
    major, minor = (int(p) for p in cc.split("."))
    if major == 3:
        return "Kepler"
    if major == 5:
        return "Maxwell"
    if major == 6:
        return "Pascal"
    if major == 7:
        return "Turing" if minor == 5 else "Volta"
    if major == 8:
        return "Ada" if minor == 9 else "Ampere"
    if major == 9:
        return "Hopper"
    return "Blackwell"


def gpus(facts: Dict[str, Any], src: Sources) -> List[Dict[str, Any]]:
    rows = []
    for name, data in facts["gpus"].items():
        if not isinstance(data, dict) or "cc" not in data:
            continue
        cc = data["cc"].split(" ")[0]
        ids, unmatched = src.ids(data.get("source"))
        row: Dict[str, Any] = {"name": name, "compute_capability": cc, "family": family(cc), "source": ids}
        if name in cur.PCI_IDS:
            row["pci_ids"] = cur.PCI_IDS[name]
            row["source"] = [*ids, "PCI_IDS"]
        if name.startswith("Jetson"):
            row["jetson"] = True
        if data.get("uncertain") or unmatched:
            row["uncertain"] = True
        rows.append(row)
    for name, (cc, checked) in cur.EXTRA_GPUS.items():
        row = {"name": name, "compute_capability": cc, "family": family(cc), "source": ["NV_GPUS"]}
        if not checked:
            row["uncertain"] = True
        rows.append(row)
    rows.sort(
        key=lambda r: (
            -Version(r["compute_capability"]).major,
            -Version(r["compute_capability"]).minor,
            r["name"],
        )
    )
    return rows


def _wheel(entry: Dict[str, str], release_tv: Dict[str, str]) -> Optional[Dict[str, Any]]:
    url = entry.get("url", "")
    match = re.search(r"/torch-([^-]+)-cp(\d)(\d+)-", url)
    if not url.startswith("https://") or not match:
        return None
    version = match.group(1)
    if version.count("+") > 1:  # 1.11.0a0+17540c5+nv22.01 -> a valid local version
        head, _, rest = version.partition("+")
        version = head + "+" + rest.replace("+", ".")
    base = Version(version).base_version
    row: Dict[str, Any] = {
        "torch": version,
        "python": f"{match.group(2)}.{match.group(3)}",
        "url": url,
        "source": ["NV_JETSON_TABLE", "NV_FORUM"],
    }
    if "jetson-ai-lab" in url:
        row["source"] = ["JETSON_AI_LAB"]
    tv = release_tv.get(base)
    if tv:
        row["torchvision"] = tv
    return row


def jetson_wheels(entry: Dict[str, Any], jp_key: str, tv: Dict[str, str]) -> List[Dict[str, Any]]:
    wheels = [w for w in (_wheel(e, tv) for e in entry["nvidia_torch_wheels"]) if w]
    for url in cur.EXTRA_JETSON_WHEELS.get(jp_key, []):
        wheel = _wheel({"url": url}, tv)
        if wheel:
            wheel["source"] = ["NV_FORUM"]
            wheels.append(wheel)
    return sorted(wheels, key=lambda w: Version(w["torch"]), reverse=True)


def jetson(facts: Dict[str, Any], src: Sources, release_rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    tv = {r["version"]: r["torchvision"] for r in release_rows if r.get("torchvision")}
    rows = []
    for entry in facts["jetson"]["jetpack"]:
        jp = entry["jetpack"]
        cuda = _driver(entry["cuda"]) or ""
        for l4t in [p.strip() for p in entry["l4t"].split("/")]:
            if not re.match(r"^\d+\.\d+(\.\d+)?$", l4t):
                continue
            ids: List[str] = []
            for note in entry["source"].values():
                for i in src.ids(note)[0]:
                    if i not in ids:
                        ids.append(i)
            major = l4t.split(".")[0]
            jp_key = jp.split(" ")[0]
            row: Dict[str, Any] = {
                "jetpack": jp,
                "l4t": l4t,
                "cuda": cuda,
                "python": entry["python"],
                "ubuntu": cur.UBUNTU_BY_L4T.get(major, ""),
                "wheels": jetson_wheels(entry, jp_key, tv),
                "prerequisites": cur.PREREQUISITES.get(jp_key.split(".")[0], []),
                "source": [*ids, "NV_JETSON_DOC"],
            }
            if jp_key in cur.JETPACK_CUDNN:
                row["cudnn"] = cur.JETPACK_CUDNN[jp_key]
            if jp_key in cur.JETSON_INDEX:
                row["index_url"] = cur.JETSON_INDEX[jp_key]
                row["source"].append("JETSON_AI_LAB")
            if jp_key.startswith("7"):
                row["note"] = (
                    "JetPack 7 uses the SBSA CUDA stack: the upstream aarch64 CUDA wheels "
                    "(cu130+, with sm_110) install from PyPI / download.pytorch.org"
                )
            elif row["wheels"]:
                row["note"] = (
                    "NVIDIA ships no torchvision wheel here: build the paired torchvision from source"
                )
            if entry.get("uncertain") or entry.get("cuda_uncertain"):
                row["uncertain"] = True
            rows.append(row)
    rows.sort(key=lambda r: Version(r["l4t"]), reverse=True)
    return {"jetpacks": rows}


def rocm(facts: Dict[str, Any]) -> Dict[str, Any]:
    override = {
        "gfx1031": "10.3.0",
        "gfx1032": "10.3.0",
        "gfx1101": "11.0.0",
        "gfx1102": "11.0.0",
        "gfx1103": "11.0.0",
    }
    families = {"gfx9": "CDNA/Vega", "gfx10": "RDNA2", "gfx11": "RDNA3", "gfx12": "RDNA4"}
    in_wheels = set()
    for data in facts["rocm"]["by_torch_release"].values():
        in_wheels.update(g.split(" ")[0] for g in data["gfx"])
    rows = []
    for name, text in facts["rocm"]["gpu_to_gfx"].items():
        if name in ("source", "uncertain_items"):
            continue
        gfx = text.split(" ")[0]
        fam = next(
            (v for k, v in sorted(families.items(), key=lambda kv: -len(kv[0])) if gfx.startswith(k)), ""
        )
        if gfx.startswith("gfx10") and gfx in ("gfx1010",):
            fam = "RDNA1"
        row: Dict[str, Any] = {
            "name": name,
            "gfx": gfx,
            "family": fam or "AMD",
            "in_wheels": gfx in in_wheels,
            "source": ["ROCM_SPECS"],
        }
        if gfx in override:
            row["hsa_override"] = override[gfx]
            row["source"].append("HSA_OVERRIDE")
            row["uncertain"] = True
        rows.append(row)
    return {
        "gfx_targets": rows,
        "hsa_override_convention": facts["rocm"]["hsa_override_gfx_version"]["convention"],
    }


# --- companions, conda, frameworks ---------------------------------------------------------------


def companions(release_rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    paired = []
    for torch, variant, versions, uncertain in cur.MMCV:
        row: Dict[str, Any] = {
            "package": "mmcv",
            "torch": torch,
            "variant": variant,
            "find_links": cur.MMCV_PAGE.format(variant=variant, torch=torch),
            "versions": versions,
            "source": ["MMCV_DOC"] if uncertain else ["MMCV_DOC", "MMCV_USE"],
        }
        if uncertain:
            row["uncertain"] = True
        paired.append(row)
    for torch, variants in cur.PYG:
        for variant in variants:
            paired.append(
                {
                    "package": "pyg",
                    "torch": ".".join(torch.split(".")[:2]),  # the page serves the whole series
                    "variant": variant,
                    "find_links": cur.PYG_PAGE.format(torch=torch, variant=variant),
                    "versions": [],
                    "packages": cur.PYG_PACKAGES,
                    "source": ["PYG_DOC"],
                }
            )
    reqs: List[Dict[str, Any]] = []
    for package in ("torchvision", "torchaudio"):
        seen: Dict[str, List[str]] = {}
        for rel in release_rows:
            if rel.get(package):
                seen.setdefault(rel[package], []).append(rel["version"])
        for version, torches in seen.items():
            lowest = min(torches, key=Version)
            spec = f"=={lowest}" if len(torches) == 1 else f">={lowest}"
            if package == "torchvision":
                spec = cur.TORCHVISION_SPECS.get(version, spec)
            row = {
                "package": package,
                "version": version,
                "torch": spec,
                "source": ["PYPI"] if Version(lowest) >= Version("1.12") else ["PV_OLD"],
            }
            if Version(lowest) < Version("1.12"):
                row["uncertain"] = True
            reqs.append(row)
    for version, spec in cur.XFORMERS:
        reqs.append({"package": "xformers", "version": version, "torch": spec, "source": ["XFORMERS"]})
    for version, spec, note in cur.FLASH_ATTN:
        reqs.append(
            {
                "package": "flash-attn",
                "version": version,
                "torch": spec,
                "source": ["FLASH_ATTN"],
                "uncertain": True,
                "note": note,
            }
        )
    order = ["torchvision", "torchaudio", "xformers", "flash-attn"]
    reqs.sort(
        key=lambda r: (
            order.index(r["package"]),
            [-x for x in Version(r["version"]).release],
            Version(r["version"]),
        ),
        reverse=False,
    )
    reqs.sort(key=lambda r: Version(r["version"]), reverse=True)
    reqs.sort(key=lambda r: order.index(r["package"]))
    pyg_order = {"mmcv": 0, "pyg": 1}
    paired.sort(key=lambda r: Version(r["torch"]), reverse=True)
    paired.sort(key=lambda r: pyg_order[r["package"]])
    return {"paired_wheels": paired, "torch_requirements": reqs}


def conda() -> Dict[str, Any]:
    channels = []
    for channel, package, last, note, sources, uncertain in cur.CONDA_CHANNELS:
        row: Dict[str, Any] = {"channel": channel, "package": package, "note": note, "source": sources}
        if last:
            row["last_version"] = last
        if uncertain:
            row["uncertain"] = True
        channels.append(row)
    builds = []
    for series, releases, cuda_by_platform, commit in cur.CONDA_FEEDSTOCK:
        row = {
            "package": "pytorch",
            "version": series,
            "releases": releases,
            # The row's CUDA list is linux-x86_64's; other platforms' differences are in the note.
            "cuda_versions": cuda_by_platform.get("linux-x86_64", []),
            "platforms": sorted(cuda_by_platform),
            "source": ["CF_FEEDSTOCK"],
        }
        others = [f"{p}: {', '.join(c) or 'CPU only'}" for p, c in sorted(cuda_by_platform.items())
                  if p != "linux-x86_64" and c != row["cuda_versions"]]
        row["note"] = f"feedstock commit {commit[:12]}" + (f"; CUDA on {'; '.join(others)}" if others else "")
        # Per platform, "platform=X.Y,X.Y" (empty: CPU builds only).
        row["platform_cuda"] = [f"{p}={','.join(c)}" for p, c in sorted(cuda_by_platform.items())]
        builds.append(row)
    return {"channels": channels, "builds": builds}


def frameworks() -> Dict[str, Any]:
    rows = []
    for version, cuda, cudnn, python, uncertain in cur.TENSORFLOW:
        row: Dict[str, Any] = {
            "framework": "tensorflow",
            "version": version,
            "extra": "and-cuda",
            "cuda": cuda,
            "cudnn": cudnn,
            "python": python,
            "min_driver_linux": "525.60.13",
            "platforms": ["linux-x86_64"],
            "source": ["TF_PYPI", "TF_BUILD", "NV_RN"],
        }
        if Version(cuda) < Version("12"):
            row["min_driver_linux"] = "450.80.02"
        if uncertain:
            row["uncertain"] = True
        rows.append(row)
    for version, cuda, cudnn, python in cur.TENSORFLOW_WINDOWS_GPU:
        rows.append({
            "framework": "tensorflow", "version": version, "cuda": cuda, "cudnn": cudnn,
            "python": python, "platforms": ["windows-x86_64"], "source": ["TF_WINDOWS", "TF_BUILD"],
            "note": "GPU on native Windows ends with 2.10: CUDA and cuDNN come from conda-forge "
                    "(cudatoolkit, cudnn), not from the wheel",
        })
    for version, extra, python, uncertain in cur.JAX:
        row = {
            "framework": "jax",
            "version": version,
            "extra": extra,
            "cuda": "13.0" if extra == "cuda13" else "12.0",
            "python": python,
            "min_driver_linux": "580" if extra == "cuda13" else "525.60.13",
            "platforms": ["linux-x86_64", "linux-aarch64"],
            "source": ["JAX_PYPI", "JAX_INSTALL", "NV_RN"],
            "note": "pip-installed CUDA libraries of that major; the driver floor is the minor-version "
            "compatibility floor of the CUDA major",
        }
        if uncertain:
            row["uncertain"] = True
        rows.append(row)
    return {"builds": rows}


def build(facts_path: str) -> Dict[str, str]:
    with open(facts_path, encoding="utf-8") as handle:
        facts = json.load(handle)
    src = Sources(facts)
    release_rows = releases(facts, src)
    files = {
        "manifest.json": manifest(src),
        "torch_releases.json": {"releases": release_rows},
        "cuda.json": cuda_file(facts, src),
        "gpus.json": {"gpus": gpus(facts, src)},
        "jetson.json": jetson(facts, src, release_rows),
        "rocm.json": rocm(facts),
        "companions.json": companions(release_rows),
        "conda.json": conda(),
        "frameworks.json": frameworks(),
    }
    return {
        name: json.dumps(data, indent=1, sort_keys=False, ensure_ascii=False) + "\n"
        for name, data in files.items()
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", default="/work/shared/facts/facts.json")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are not up to date")
    args = parser.parse_args(argv)
    outputs = build(args.facts)
    stale = []
    for name, text in outputs.items():
        path = os.path.join(args.out, name)
        current = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                current = handle.read()
        if current != text:
            stale.append(name)
            if not args.check:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
    if args.check and stale:
        print("out of date: " + ", ".join(stale))
        return 1
    print(("regenerated: " + ", ".join(stale)) if stale else "up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
