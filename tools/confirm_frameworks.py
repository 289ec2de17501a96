"""Confirm frameworks.json rows (TensorFlow, JAX) from the package index's real files.

    python tools/confirm_frameworks.py [--index-url URL] [--write] [--companions]

For each row: the index's PEP 691 JSON page of the framework, by name; the wheels of that exact
version (their Python and platform tags, from the file names); one wheel's PEP 658 metadata
(``Provides-Extra`` and ``Requires-Dist``; where the index serves no PEP 658 file, the
wheel's own METADATA, read by HTTP range requests). Then the packages the row's extra requires at that
version (JAX's ``jax-cudaNN-plugin``/``-pjrt``, TensorFlow's ``nvidia-*-cuNN``) are looked up the same
way: a pinned companion with no file of that version means the row cannot be installed. CUDA and
cuDNN versions are read from TensorFlow's pins on nvidia-cuda-runtime / nvidia-cudnn.

``--companions`` does the same for companions.json#torch_requirements (torchvision, torchaudio,
xformers, flash-attn): the torch requirement each wheel's metadata states, against the row's.

Without ``--write`` it prints one line per row and exits 1 on any disagreement. ``--write`` records
in each row the files read (``confirmed_from``, with the index and date) or, where a row cannot be
confirmed, marks it ``uncertain`` with the reason. Packages are read one by one, by name.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import re
import sys
import urllib.request
import zipfile
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from range_file import RangeFile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "src", "torchsmith", "kb", "data", "frameworks.json")
JSON_ACCEPT = "application/vnd.pypi.simple.v1+json"
_PLATFORM_TAGS = (("manylinux", "x86_64", "linux-x86_64"), ("manylinux", "aarch64", "linux-aarch64"),
                  ("win", "amd64", "windows-x86_64"), ("macosx", "arm64", "macos-arm64"))
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def _default_index() -> str:
    return os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple"


def _get(url: str, accept: Optional[str] = None) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        data: bytes = response.read()
    return data


def project_files(index: str, name: str, cache: Dict[str, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """The PEP 691 file list of one project, by name."""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key not in cache:
        try:
            page = json.loads(_get(f"{index.rstrip('/')}/{key}/", JSON_ACCEPT))
            cache[key] = list(page.get("files", []))
        except OSError:
            cache[key] = []
    return cache[key]


def wheel_tags(filename: str) -> Tuple[str, str, List[str]]:
    """(version, python tag, platform tags) of a wheel file name."""
    parts = filename[:-4].split("-")
    return parts[1], parts[-3], parts[-1].split(".")


def python_of(tag: str, abi: str = "") -> Optional[str]:
    match = re.match(r"^cp3(\d+)$", tag)
    if not match:
        return None
    return f"3.{match.group(1)}" + ("t" if abi.endswith("t") else "")


def platform_of(tags: List[str]) -> Optional[str]:
    for tag in tags:
        for prefix, arch, name in _PLATFORM_TAGS:
            if tag.startswith(prefix) and tag.endswith(arch):
                return name
    return None


def wheels_of(files: List[Dict[str, Any]], version: str) -> List[Dict[str, Any]]:
    return [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")
            and wheel_tags(f["filename"])[0] == version]


def metadata(file: Dict[str, Any]) -> Optional[str]:
    """A wheel's metadata: PEP 658's file where the index serves one, else the wheel's own
    *.dist-info/METADATA read by range requests."""
    url = file["url"].split("#")[0]
    if file.get("core-metadata") or file.get("data-dist-info-metadata"):
        return _get(url + ".metadata").decode("utf-8", "replace")
    try:
        with zipfile.ZipFile(io.BufferedReader(RangeFile(url), buffer_size=1 << 16)) as archive:
            member = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            return archive.read(member).decode("utf-8", "replace")
    except (OSError, StopIteration, zipfile.BadZipFile):
        return None


def requirements_for(meta: str, extra: str) -> List[str]:
    """The Requires-Dist lines an extra adds."""
    out = []
    for line in meta.splitlines():
        if line.startswith("Requires-Dist:"):
            requirement = line.split(":", 1)[1].strip()
            if extra in _EXTRA.findall(requirement):
                out.append(requirement.split(";")[0].strip())
    return out


def _pinned(requirement: str) -> Tuple[str, Optional[str]]:
    name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]
    match = re.search(r"(?:==|>=)\s*([0-9][0-9A-Za-z.]*)", requirement)
    return name, match.group(1) if match else None


def confirm(row: Dict[str, Any], index: str, cache: Dict[str, List[Dict[str, Any]]]) -> Dict[str, Any]:
    """What the index's files say about one row: files read, pythons, platforms, problems."""
    name, version, extra = row["framework"], row["version"], row.get("extra", "")
    wheels = wheels_of(project_files(index, name, cache), version)
    result: Dict[str, Any] = {"files": [], "python": set(), "platforms": set(), "problems": [],
                              "cuda": None, "cudnn": None}
    if not wheels:
        result["problems"].append(f"{name} {version}: no wheel on the index")
        return result
    wheels.sort(key=lambda w: platform_of(wheel_tags(w["filename"])[2]) not in row.get("platforms", ()))
    meta = next((text for text in (metadata(w) for w in wheels[:3]) if text), None)
    result["files"].append(wheels[0]["filename"])  # one for the row's own platform where there is one
    result["platform_wanted"] = tuple(row.get("platforms", ()))
    _tags_into(result, wheels)
    if extra and meta is not None:
        extras = [line.split(":", 1)[1].strip() for line in meta.splitlines()
                  if line.startswith("Provides-Extra:")]
        if extra not in extras:
            result["problems"].append(
                f"{name} {version}: no extra [{extra}] (Provides-Extra: {', '.join(extras)})")
        for requirement in requirements_for(meta, extra):
            _companion(result, requirement, index, cache)
    elif extra:
        result["problems"].append(f"{name} {version}: the index serves no metadata for its wheels")
    return result


def _tags_into(result: Dict[str, Any], wheels: List[Dict[str, Any]]) -> None:
    for wheel in wheels:
        _version, python_tag, platform_tags = wheel_tags(wheel["filename"])
        abi = wheel["filename"][:-4].split("-")[-2]
        for tag in python_tag.split("."):
            python = python_of(tag, abi)
            if python:
                result["python"].add(python)
        platform = platform_of(platform_tags)
        if platform:
            result["platforms"].add(platform)


def _companion(result: Dict[str, Any], requirement: str, index: str,
               cache: Dict[str, List[Dict[str, Any]]]) -> None:
    name, version = _pinned(requirement)
    if version is None:
        return
    if name.startswith("nvidia-cuda-runtime"):
        result["cuda"] = ".".join(version.split(".")[:2])
    if name.startswith("nvidia-cudnn"):
        result["cudnn"] = ".".join(version.split(".")[:2])
    if name.startswith("nvidia-"):
        return  # NVIDIA's libraries: the pin is the fact; their files are NVIDIA's to publish
    files = wheels_of(project_files(index, name, cache), version)
    if not files:
        result["problems"].append(f"requires {requirement}, and {name} has no {version} wheel on the index")
        return
    wanted = result.get("platform_wanted", ())
    files.sort(key=lambda w: platform_of(wheel_tags(w["filename"])[2]) not in wanted)
    result["files"].append(files[0]["filename"])
    if name.endswith("-plugin"):  # JAX: the plugin's wheels carry the Python and platform tags
        result["python"], result["platforms"] = set(), set()
        _tags_into(result, files)


def disagreements(row: Dict[str, Any], found: Dict[str, Any]) -> List[str]:
    problems = list(found["problems"])
    if problems:
        return problems
    extra_python = sorted(set(row.get("python", [])) - found["python"])
    if extra_python:
        problems.append(f"python {', '.join(extra_python)}: no wheel with that tag")
    extra_platforms = sorted(set(row.get("platforms", [])) - found["platforms"])
    if extra_platforms:
        problems.append(f"platforms {', '.join(extra_platforms)}: no wheel for it")
    for key in ("cuda", "cudnn"):
        if found[key] and row.get(key) and found[key] != row[key]:
            problems.append(f"{key} {row[key]}: the extra pins {found[key]}")
    return problems


def torch_spec(meta: str) -> Optional[str]:
    """The torch requirement a companion's metadata states outside any extra, normalized."""
    for line in meta.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line.split(":", 1)[1].strip()
        head, _, marker = requirement.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"^torch\s*(?:\(([^)]*)\)|([^\s;]*))", head.strip())
        if match and re.match(r"^torch(\s|\(|[<>=!~]|$)", head.strip()):
            return _normal_spec(match.group(1) or match.group(2) or "")
    return None


def _normal_spec(spec: str) -> str:
    return ",".join(sorted(part.strip().replace(" ", "") for part in spec.split(",") if part.strip()))


def confirm_requirement(row: Dict[str, Any], index: str,
                        cache: Dict[str, List[Dict[str, Any]]]) -> Tuple[List[str], List[str]]:
    """(files read, problems) for one companions.json#torch_requirements row."""
    wheels = wheels_of(project_files(index, row["package"], cache), row["version"])
    if not wheels:
        return [], [f"{row['package']} {row['version']}: no wheel on the index"]
    wheels.sort(key=lambda w: platform_of(wheel_tags(w["filename"])[2]) != "linux-x86_64")
    meta = metadata(wheels[0])
    if meta is None:
        return [], [f"{row['package']} {row['version']}: its wheel's metadata could not be read"]
    stated = torch_spec(meta)
    if stated is None:
        return [wheels[0]["filename"]], [f"{row['package']} {row['version']}: its metadata requires no torch"]
    if stated != _normal_spec(row["torch"]):
        return [wheels[0]["filename"]], [
            f"torch {row['torch']}: the wheel's Requires-Dist says torch {stated}"]
    return [wheels[0]["filename"]], []


def companions(index: str, write: bool, today: str) -> int:
    """Confirm companions.json#torch_requirements rows (torchvision, torchaudio, xformers, ...)."""
    path = os.path.join(os.path.dirname(DATA), "companions.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    cache: Dict[str, List[Dict[str, Any]]] = {}
    status = 0
    for row in data["torch_requirements"]:
        files, problems = confirm_requirement(row, index, cache)
        label = f"{row['package']} {row['version']} (torch {row['torch']})"
        print(f"{label}: " + ("; ".join(problems) if problems else f"confirmed from {files[0]}"))
        status |= bool(problems)
        if write:
            _record(row, {"files": files}, problems, index, today)
    if write:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return status


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-url", default=_default_index())
    parser.add_argument("--write", action="store_true", help="record the result in the data")
    parser.add_argument("--companions", action="store_true",
                        help="confirm companions.json#torch_requirements instead of frameworks.json")
    args = parser.parse_args(argv)
    if args.companions:
        return companions(args.index_url, args.write, datetime.date.today().isoformat())
    with open(DATA, encoding="utf-8") as handle:
        data = json.load(handle)
    cache: Dict[str, List[Dict[str, Any]]] = {}
    today = datetime.date.today().isoformat()
    status = 0
    for row in data["builds"]:
        found = confirm(row, args.index_url, cache)
        problems = disagreements(row, found)
        label = f"{row['framework']} {row['version']} [{row.get('extra', '')}]"
        stack = f" (CUDA {found['cuda']}, cuDNN {found['cudnn']})" if found["cuda"] else ""
        print(f"{label}: " + ("; ".join(problems) if problems
                              else f"confirmed from {', '.join(found['files'])}{stack}"))
        status |= bool(problems)
        if args.write:
            _record(row, found, problems, args.index_url, today)
    if args.write:
        with open(DATA, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return status


def _record(row: Dict[str, Any], found: Dict[str, Any], problems: List[str], index: str, today: str) -> None:
    if problems:
        row.pop("confirmed_from", None)
        row["uncertain"] = True
        kept = row.get("note", "").split(" | not confirmed")[0]
        row["note"] = f"{kept} | not confirmed from the index ({today}): {'; '.join(problems)}".lstrip(" |")
        return
    row["confirmed_from"] = {"index": index, "files": sorted(set(found["files"])), "read": today}
    row.pop("uncertain", None)


if __name__ == "__main__":
    sys.exit(main())
