"""Check the knowledge base against real torch wheels: what they carry vs what the rows say.

    python tools/verify_wheels.py WHEEL|URL ... [--index NAME==VERSION[@PLATFORM]] [--record FILE]
                                  [--delete] [--kb DIR]

For each wheel (torch on any platform: Linux x86_64/aarch64, Windows, macOS; or a companion,
torchvision/torchaudio): its sha256, its Python and platform tags (from the file name), its CUDA
version (<package>/version.py inside it) and the SASS/PTX of its CUDA libraries (read from the
fatbin headers by torchsmith.kb.fatbin, streaming the zip). Then every disagreement with the data
is printed: for torch, a missing release, variant or platform, a Python tag the row lacks, a PyPI
default the row names differently, a SASS or PTX list that differs; for a companion, a torch pin
(its metadata's Requires-Dist) that companions.json states differently.

``--record FILE`` appends one JSON line per wheel (the audit); ``--write-data [FILE...]`` puts
the audits of those JSON-lines files (or of this run) into the data's wheel_audits.json, where
each becomes a source (``WHL_<torch>_<platform>``, ``WHL_<package>_<version>_<platform>``) the
rows cite. A URL, and each wheel ``--index NAME==VERSION[@PLATFORM]`` finds on the index's PEP 691
page (by name), is read by HTTP range requests: only version.py, the metadata and the CUDA
libraries are fetched. ``--delete`` removes each given local wheel once read (they are 1-3 GB).
Exit status 1 when any disagreement.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import os
import re
import sys
import urllib.request
import zipfile
from typing import IO, Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from range_file import RangeFile

from torchsmith.kb.fatbin import BinaryError, read_wheel

_PLATFORMS = (("manylinux", "x86_64", "linux-x86_64"), ("manylinux", "aarch64", "linux-aarch64"),
              ("linux", "x86_64", "linux-x86_64"), ("linux", "aarch64", "linux-aarch64"),
              ("win", "amd64", "windows-x86_64"), ("macosx", "arm64", "macos-arm64"),
              ("macosx", "x86_64", "macos-x86_64"))
COMPANIONS = ("torchvision", "torchaudio")


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tags(file_name: str) -> Dict[str, Any]:
    parts = file_name[:-4].split("-")
    if len(parts) < 5:
        raise SystemExit(f"{file_name}: not a wheel file name (name-version-python-abi-platform.whl)")
    plats = parts[-1].split(".")
    platform = next((name for prefix, arch, name in _PLATFORMS
                     for p in plats if p.startswith(prefix) and p.endswith(arch)), None)
    return {"package": parts[0].lower(), "version": parts[1], "python_tags": parts[-3].split("."),
            "platform_tags": plats, "platform": platform}


def _build_info(handle: IO[bytes], package: str) -> Dict[str, Optional[str]]:
    """CUDA/HIP versions from <package>/version.py, and the torch a companion's metadata pins."""
    found: Dict[str, Optional[str]] = {"cuda": None, "hip": None, "torch_pin": None}
    with zipfile.ZipFile(handle) as archive:
        names = archive.namelist()
        text = archive.read(f"{package}/version.py").decode("utf-8", "replace") \
            if f"{package}/version.py" in names else ""
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        metadata = archive.read(meta).decode("utf-8", "replace") if meta else ""
    for key in ("cuda", "hip"):
        match = re.search(rf"^{key}\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
        found[key] = match.group(1) if match else None
    pin = re.search(r"^Requires-Dist:\s*torch\s*\(?\s*==\s*([0-9][^\s,;)]*)", metadata, re.MULTILINE)
    found["torch_pin"] = pin.group(1) if pin else None
    return found


def audit(path: str, sha256: Optional[str] = None) -> Dict[str, Any]:
    """What one wheel (a path, or a URL read by range requests) carries, as a wheel_audits.json row."""
    remote = bool(re.match(r"^https?://", path))
    name = os.path.basename(path.split("#", 1)[0])
    tags = _tags(name)
    package = tags["package"]
    with _open(path) as handle:
        build = _build_info(handle, package)
    cuda = build["cuda"]
    hip = build["hip"]
    variant = ("cu" + cuda.replace(".", "")) if cuda else ("rocm" + hip[:3]) if hip else "cpu"
    libs = []
    try:
        if (tags["platform"] or "").startswith("macos"):
            codes = []  # Mach-O, and no CUDA on macOS: nothing to read
        else:
            with _open(path) as handle:
                codes = read_wheel(handle, name)
    except BinaryError as exc:
        if exc.code != "wheel-no-cuda-lib":
            raise
        codes = []
    for code in codes:
        sass, ptx = code.build_targets()  # torch's own arch list (see GpuCode)
        all_sass, all_ptx = code.targets()
        libs.append({"member": code.file.split(":", 1)[1], "containers": code.containers,
                     "sass": sass, "ptx": ptx, "counts": {**code.sass, **code.ptx},
                     "sass_few": [a for a in all_sass if a not in sass],
                     "ptx_few": [a for a in all_ptx if a not in ptx]})
    if package != "torch" and not cuda and not hip and libs:
        variant = "cuda"  # a companion's version.py asks torch at run time; its kernels say CUDA
    version = tags["version"].split("+")[0]
    torch = version if package == "torch" else (build["torch_pin"] or "").split("+")[0]
    return {"file": name, "sha256": sha256 or (None if remote else _sha256(path)),
            "retrieved": datetime.date.today().isoformat(), "package": package, "version": version,
            "torch": torch, "local": tags["version"].partition("+")[2],
            "platform": tags["platform"], "python_tags": tags["python_tags"],
            "platform_tags": tags["platform_tags"], "cuda": cuda, "variant": variant, "libs": libs}


def _open(path: str) -> IO[bytes]:
    if re.match(r"^https?://", path):
        return io.BufferedReader(RangeFile(path.split("#", 1)[0]), buffer_size=1 << 20)
    return open(path, "rb")


def _main_lib(row: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    libs = sorted(row["libs"], key=lambda lib: -lib["containers"])
    return libs[0] if libs else None


def _as_ptx(names: Any) -> List[str]:
    """The data writes PTX as ``sm_90`` (compute_90); the reader says compute_90."""
    return ["sm_" + n.split("_", 1)[1] if n.startswith("compute_") else n for n in names]


def _companion_disagreements(row: Dict[str, Any], kb: Any) -> List[str]:
    """A torchvision/torchaudio wheel: the torch its metadata pins against the companion rows."""
    package, version = row["package"], row["version"]
    rows = [r for r in kb.torch_requirements(package) if r.version == version]
    if not rows:
        return [f"{package} {version}: no companions.json#torch_requirements row"]
    if row["torch"] and rows[0].torch.lstrip("=") != row["torch"]:
        return [f"{package} {version}: the row pins torch {rows[0].torch}, "
                f"the wheel's metadata torch=={row['torch']}"]
    return []


def disagreements(row: Dict[str, Any], kb: Any) -> List[str]:
    """Every way the data's rows disagree with one audited wheel."""
    if row.get("package", "torch") != "torch":
        return _companion_disagreements(row, kb)
    release = kb.release(row["torch"])
    if release is None:
        return [f"torch {row['torch']}: no release row"]
    platform, variant_name = row["platform"], row["variant"]
    problems = []
    if not row["local"] and release.pypi_default.get(platform) != variant_name:
        problems.append(f"pypi_default[{platform}] is {release.pypi_default.get(platform)!r}, "
                        f"the PyPI wheel is {variant_name}")
    pythons = release.pythons(platform)
    for tag in row["python_tags"]:
        match = re.match(r"^cp(\d)(\d+)(t?)$", tag)
        if match and f"{match.group(1)}.{match.group(2)}{match.group(3)}" not in pythons:
            problems.append(f"python[{platform}] lacks {match.group(1)}.{match.group(2)}{match.group(3)}")
    variant = release.variant(variant_name)
    if variant is None:
        return [*problems, f"no variant {variant_name}"]
    if platform not in variant.platforms:
        problems.append(f"{variant_name}: platforms lack {platform}")
    lib = _main_lib(row)
    if lib is not None:
        sass, ptx = list(variant.sass(platform)), list(variant.ptx(platform))
        if sass != lib["sass"]:
            problems.append(f"{variant_name} sass[{platform}] is {' '.join(sass) or '(none)'}, "
                            f"the wheel's {lib['member']} has {' '.join(lib['sass']) or '(none)'}")
        if ptx != _as_ptx(lib["ptx"]):
            problems.append(f"{variant_name} ptx[{platform}] is {' '.join(ptx) or '(none)'}, "
                            f"the wheel's {lib['member']} has {' '.join(lib['ptx']) or '(none)'}")
    return problems


AUDITS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "src", "torchsmith", "kb", "data", "wheel_audits.json")


def data_row(audit_row: Dict[str, Any]) -> Dict[str, Any]:
    """An audit as a wheel_audits.json row."""
    package = audit_row.get("package", "torch")
    row = {"id": f"WHL_{audit_row['torch']}_{audit_row['platform']}" if package == "torch"
           else f"WHL_{package}_{audit_row['version']}_{audit_row['platform']}"}
    if package != "torch":
        row.update(package=package, version=audit_row["version"])
    row.update({k: audit_row[k] for k in ("file", "sha256", "retrieved", "torch", "platform", "variant",
                                          "python_tags", "platform_tags")})
    row["libraries"] = audit_row["libs"]
    row["source"] = ["PYPI"]
    if audit_row.get("local"):
        row["note"] = f"local version label +{audit_row['local']}"
    return row


def write_data(audit_rows: List[Dict[str, Any]], path: str = AUDITS) -> None:
    """Merge audits into the data file (one row per release and platform, newest first)."""
    from torchsmith.kb.loader import version_key

    data = {"wheels": []}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    rows = {row["id"]: row for row in data["wheels"]}
    kept = [row for row in audit_rows if row.get("torch")]
    for row in audit_rows:
        if not row.get("torch"):  # a companion whose metadata pins no exact torch: nothing to file it under
            print(f"{row['file']}: not written (its metadata pins no torch release)")
    rows.update((row["id"], row) for row in map(data_row, kept))
    data["wheels"] = sorted(rows.values(), key=lambda r: (version_key(r["torch"]), r.get("package", "torch"),
                                                          r["platform"]), reverse=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.write("\n")


def _py_key(tag: str) -> Tuple[int, str]:
    match = re.match(r"^cp3(\d+)(t?)$", tag)
    return (int(match.group(1)), match.group(2)) if match else (0, tag)


def index_wheels(index: str, spec: str) -> List[Tuple[str, str]]:
    """``NAME==VERSION[@PLATFORM]`` -> (url, sha256) of each wheel the index's PEP 691 page lists for it
    (one per platform, the newest CPython tag), read by name."""
    name, _, rest = spec.partition("==")
    version, _, platform = rest.partition("@")
    request = urllib.request.Request(f"{index.rstrip('/')}/{name.lower()}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.loads(response.read())["files"]
    chosen: Dict[str, Tuple[str, str, str]] = {}
    for file in files:
        filename = file["filename"]
        if not filename.endswith(".whl") or filename.split("-")[1].split("+")[0] != version:
            continue
        tags = _tags(filename)
        if tags["platform"] is None or (platform and tags["platform"] != platform):
            continue
        python = tags["python_tags"][0]
        if tags["platform"] not in chosen or _py_key(python) > _py_key(chosen[tags["platform"]][0]):
            chosen[tags["platform"]] = (python, file["url"], file.get("hashes", {}).get("sha256", ""))
    return [(url, sha) for _python, url, sha in chosen.values()]


def _report(row: Dict[str, Any], kb: Any) -> int:
    """Print what one wheel carries and each disagreement; the number of disagreements."""
    lib = _main_lib(row)
    carried = (f"SASS {' '.join(lib['sass'])}; PTX {' '.join(lib['ptx']) or 'none'}"
               + (f"; in few kernels: {' '.join(lib['sass_few'] + lib['ptx_few'])}"
                  if lib["sass_few"] or lib["ptx_few"] else "")) if lib else "no CUDA library"
    print(f"{row['file']} ({row['variant']}, {row['platform']}): {carried}")
    problems = disagreements(row, kb)
    for problem in problems:
        print(f"  disagrees: torch {row['torch']} {problem}")
    return len(problems)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", nargs="*", metavar="WHEEL|URL")
    parser.add_argument("--record", metavar="FILE", help="append each audit as one JSON line")
    parser.add_argument("--write-data", nargs="*", metavar="JSONL",
                        help="put the audits of these --record files, and this run's, in wheel_audits.json")
    parser.add_argument("--delete", action="store_true", help="delete each wheel once read")
    parser.add_argument("--kb", metavar="DIR", help="an overlay over the packaged data")
    parser.add_argument("--index", metavar="NAME==VERSION[@PLATFORM]", action="append", default=[],
                        help="audit the wheels the index lists for it (read by range requests)")
    parser.add_argument("--index-url", default=os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple")
    args = parser.parse_args(argv)
    from torchsmith.kb import load_kb

    kb = load_kb(args.kb, packaged_only=not args.kb)
    failed = 0
    audited: List[Dict[str, Any]] = []
    for recorded in args.write_data or ():
        with open(recorded, encoding="utf-8") as handle:
            audited.extend(json.loads(line) for line in handle if line.strip())
    for row in audited:
        failed += _report(row, kb)
    targets = [(given, None) for given in args.wheels]
    for spec in args.index:
        targets.extend(index_wheels(args.index_url, spec))
    for path, sha256 in targets:
        try:
            row = audit(path, sha256 or None)
        except BinaryError as exc:
            print(f"{os.path.basename(path)}: error[{exc.code}] {exc}")
            failed += 1
            continue
        finally:
            if args.delete and not re.match(r"^https?://", path):
                os.remove(path)
        failed += _report(row, kb)
        audited.append(row)
        if args.record:
            with open(args.record, "a", encoding="utf-8") as out:
                out.write(json.dumps(row, sort_keys=True) + "\n")
    if args.write_data is not None:
        write_data(audited)
        print(f"{len(audited)} audit(s) written to {AUDITS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
