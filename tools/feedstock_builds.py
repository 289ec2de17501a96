"""Read which builds a conda-forge feedstock published, per release, from its own git history.

    python tools/feedstock_builds.py MIRROR.git PACKAGE [--since 2.0]

For every commit that changed the recipe, the recipe's version and the ``.ci_support/*.yaml``
file names of that commit (one per build configuration: platform, CUDA compiler version, arm
variant) say what the feedstock built; a version's builds are the union over its commits (Windows
and tegra builds were added on later commits, or branches, of the same version). Prints JSON:
``{"package", "feedstock_commit", "releases": {version: {platform: [cuda or "cpu" or
"tegra-<cuda>"]}}}``, the cache the data files and the conda solve tests are made from.
Reads only the local mirror (``git``); it is a tool, not part of torchsmith.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from typing import Dict, List, Optional, Set

_PLATFORMS = {"linux_64": "linux-64", "linux_aarch64": "linux-aarch64", "osx_64": "osx-64",
              "osx_arm64": "osx-arm64", "win_64": "win-64"}
_VERSION = re.compile(r'(?:set version = "|^\s*version: ")(\d+(?:\.\d+)+)"', re.M)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True,
                          check=False).stdout


def _version(repo: str, commit: str) -> Optional[str]:
    for path in ("recipe/recipe.yaml", "recipe/meta.yaml"):
        match = _VERSION.search(_git(repo, "show", f"{commit}:{path}"))
        if match:
            return match.group(1)
    return None


def _builds(repo: str, commit: str) -> Dict[str, List[str]]:
    out: Dict[str, Set[str]] = {}
    for name in _git(repo, "ls-tree", "--name-only", f"{commit}:.ci_support").split():
        prefix = next((p for p in _PLATFORMS if name.startswith(p + "_")), None)
        if prefix is None:
            continue
        cuda = re.search(r"cuda_compiler_version(None|\d+\.\d+)", name)
        kind = "cpu" if cuda is None or cuda.group(1) == "None" else cuda.group(1)
        if "tegra" in name and kind != "cpu":
            kind = f"tegra-{kind}"
        out.setdefault(_PLATFORMS[prefix], set()).add(kind)
    return {k: sorted(v) for k, v in sorted(out.items())}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", help="the feedstock's git directory")
    parser.add_argument("package")
    parser.add_argument("--since", default="0", help="oldest version to report")
    args = parser.parse_args(argv)
    head = _git(args.repo, "rev-parse", "HEAD").strip()
    commits = _git(args.repo, "log", "--format=%H", "--", "recipe", ".ci_support").split()
    releases: Dict[str, Dict[str, List[str]]] = {}
    for commit in commits:
        version = _version(args.repo, commit)
        if version is None:
            continue
        if tuple(int(p) for p in version.split(".")) < tuple(int(p) for p in args.since.split(".")):
            continue
        seen = releases.setdefault(version, {})
        for platform, kinds in _builds(args.repo, commit).items():
            seen[platform] = sorted(set(seen.get(platform, [])) | set(kinds))
    json.dump({"package": args.package, "feedstock_commit": head, "releases": releases}, sys.stdout,
              indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
