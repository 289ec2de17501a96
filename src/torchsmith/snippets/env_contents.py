"""List everything an environment holds, for ``torchsmith export``: every installed Python
distribution (with the tool that installed it) and, in a conda environment, every conda package
(with its channel). Standard library only, no f-strings (runs on whatever Python the env has).
Prints one JSON object on the last line of stdout.
"""
import json
import os
import re
import sys
import sysconfig

SCHEMA = 1


def read(path, limit=1 << 22):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def field(text, name):
    for line in (text or "").splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def distributions(site):
    found = []
    for entry in listdir(site):
        if not entry.endswith(".dist-info"):
            continue
        path = os.path.join(site, entry)
        meta = read(os.path.join(path, "METADATA"), 64 * 1024)
        name, version = field(meta, "name"), field(meta, "version")
        if not name or not version:
            continue
        direct = {}
        try:
            direct = json.loads(read(os.path.join(path, "direct_url.json"), 64 * 1024) or "{}")
        except ValueError:
            direct = {}
        found.append({
            "name": re.sub(r"[-_.]+", "-", name).lower(), "version": version,
            "installer": (read(os.path.join(path, "INSTALLER"), 256) or "").strip() or None,
            "url": direct.get("url") if isinstance(direct, dict) else None,
            "editable": bool(isinstance(direct, dict) and (direct.get("dir_info") or {}).get("editable")),
        })
    return found


def conda_packages(prefix):
    packages = []
    meta = os.path.join(prefix, "conda-meta")
    for entry in listdir(meta):
        if not entry.endswith(".json"):
            continue
        try:
            record = json.loads(read(os.path.join(meta, entry)) or "{}")
        except ValueError:
            continue
        if not isinstance(record, dict) or not record.get("name"):
            continue
        packages.append({"name": record.get("name"), "version": record.get("version"),
                         "build": record.get("build"), "channel": record.get("channel") or "",
                         "subdir": record.get("subdir") or ""})
    return packages


def main():
    prefix = sys.prefix
    site = sysconfig.get_paths().get("purelib")
    sites = [p for p in (site, sysconfig.get_paths().get("platlib")) if p]
    dists, seen = [], set()
    for path in sites:
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        dists.extend(distributions(path))
    conda = os.path.isdir(os.path.join(prefix, "conda-meta"))
    print(json.dumps({
        "schema": SCHEMA, "prefix": prefix, "executable": sys.executable,
        "python": "%d.%d.%d" % sys.version_info[:3], "conda": conda,
        "distributions": dists, "conda_packages": conda_packages(prefix) if conda else [],
    }))


if __name__ == "__main__":
    main()
