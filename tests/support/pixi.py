"""A pixi manifest read the way pixi reads it, and solved per platform with py-rattler (pixi's solver).

pixi >= 0.71 declares virtual packages on ``[workspace].platforms`` entries: friendly keys
(``cuda``, ``glibc``, ``archspec``, ``linux``, ``macos``/``osx``, ``windows``), ``cuda = { driver, arch }``
for ``__cuda`` with ``__cuda_arch``, raw ``__name`` keys (prefix-dev/pixi v0.71.0
crates/pixi_manifest/src/toml/platform.rs). A feature's ``platforms`` names the entries it is solved
for; an environment is solved for the platforms its features allow (docs/workspace/
multi_platform_configuration.md). The channel holds the conda-forge pytorch builds torchsmith's
data records (conda-forge/pytorch-cpu-feedstock), per subdir.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

from torchsmith.kb import KnowledgeBase

__all__ = ["SOLVED", "conda_forge_channel", "conda_record", "conda_specs", "environment_platforms",
           "pixi_specs", "pixi_virtual_packages", "solve", "solve_environment", "write_channel"]

FRIENDLY = {"cuda": "__cuda", "glibc": "__glibc", "archspec": "__archspec", "linux": "__linux",
            "macos": "__osx", "osx": "__osx", "windows": "__win"}
SUBDIRS = {"linux-x86_64": "linux-64", "linux-aarch64": "linux-aarch64"}
SOLVED = ("python", "pytorch", "pytorch-gpu", "cuda-version")


def pixi_virtual_packages(entry: Union[str, Mapping[str, Any]]) -> Dict[str, str]:
    """``{"__cuda": "12", "__cuda_arch": "8.0", "__glibc": "2.35"}`` from one platforms entry."""
    if isinstance(entry, str):
        return {}
    out: Dict[str, str] = {}
    for key, value in entry.items():
        if key == "cuda" and isinstance(value, dict):
            out["__cuda"] = value["driver"]
            if "arch" in value:
                out["__cuda_arch"] = value["arch"]
        elif key in FRIENDLY:
            out[FRIENDLY[key]] = value
        elif key.startswith("__"):
            out[key] = value
    return out


def _platform_name(entry: Union[str, Mapping[str, Any]]) -> str:
    return entry if isinstance(entry, str) else str(entry.get("name") or entry["platform"])


def environment_platforms(doc: Mapping[str, Any], environment: str) -> List[Tuple[str, str, Dict[str, str]]]:
    """(platform name, subdir, declared virtual packages) an environment is solved for."""
    entries = {_platform_name(e): e for e in doc["workspace"]["platforms"]}
    features = doc.get("environments", {}).get(environment, [])
    names: List[str] = list(entries)
    for feature in features:
        names = [n for n in names if n in doc["feature"][feature].get("platforms", names)]
    out = []
    for name in names:
        entry = entries[name]
        subdir = entry if isinstance(entry, str) else entry["platform"]
        out.append((name, subdir, pixi_virtual_packages(entry)))
    return out


def pixi_specs(deps: Mapping[str, Any], solved: Sequence[str] = SOLVED) -> List[str]:
    """Match specs of a pixi ``dependencies`` table, for the ``solved`` packages."""
    specs = []
    for name, value in deps.items():
        if name not in solved:
            continue
        if isinstance(value, dict):
            specs.append(f"{name} {value['version']} {value['build']}")
        else:
            specs.append(f"{name} {value}")
    return specs


def conda_specs(environment_yml: str, solved: Sequence[str] = SOLVED) -> List[str]:
    """environment.yml's conda-style ``name=version=build`` as match specs (``name version.* build``)."""
    import yaml

    specs = []
    for dep in yaml.safe_load(environment_yml)["dependencies"]:
        if isinstance(dep, str) and dep.split("=")[0] in solved:
            name, _, rest = dep.partition("=")
            version, _, build = rest.partition("=")
            specs.append(" ".join(x for x in (name, version and f"{version}.*", build) if x))
    return specs


def environment_specs(doc: Mapping[str, Any], environment: str) -> List[str]:
    """The conda specs torchsmith's data can solve, from the default feature and the environment's."""
    deps: Dict[str, Any] = dict(doc.get("dependencies", {}))
    for feature in doc.get("environments", {}).get(environment, []):
        deps.update(doc["feature"][feature].get("dependencies", {}))
    return pixi_specs(deps)


def conda_record(name: str, version: str, build: str, subdir: str, depends: Sequence[str] = (),
            constrains: Sequence[str] = ()) -> Dict[str, Any]:
    return {"name": name, "version": version, "build": build, "build_number": 0, "depends": list(depends),
            "constrains": list(constrains), "subdir": subdir, "timestamp": 1700000000000}


def _records(kb: KnowledgeBase, platform: str, subdir: str) -> List[Dict[str, Any]]:
    records: List[Dict[str, Any]] = []
    cudas = set()
    for row in kb.conda_builds:
        if platform not in row.platforms:
            continue
        for release in row.releases:
            records.append(conda_record("pytorch", release, "cpu_generic_h0", subdir))
            if row.cuda_versions:
                records.append(conda_record("pytorch-gpu", release, "cuda_h0", subdir,
                                       [f"pytorch {release} cuda*"]))
            for cuda in row.cuda_versions:
                cudas.add(cuda)
                below = f"<{int(cuda.split('.')[0]) + 1}"
                records.append(conda_record("pytorch", release, f"cuda{cuda.replace('.', '')}_h0", subdir,
                                       [f"cuda-version >={cuda},{below}", "__cuda"]))
    for cuda in sorted(cudas):
        records.append(conda_record("cuda-version", cuda, "h0", subdir,
                               constrains=[f"__cuda >={cuda.split('.')[0]}"]))
    for python in ("3.9", "3.10", "3.11", "3.12", "3.13"):
        records.append(conda_record("python", f"{python}.0", "h0", subdir))
    return records


def write_channel(root: Path, records: Mapping[str, Sequence[Mapping[str, Any]]]) -> Path:
    """A local conda channel: each subdir's records as its repodata.json, and an empty noarch."""
    for subdir, rows in {"noarch": (), **records}.items():
        (root / subdir).mkdir(parents=True, exist_ok=True)
        files = {f"{r['name']}-{r['version']}-{r['build']}.conda": r for r in rows}
        (root / subdir / "repodata.json").write_text(json.dumps(
            {"info": {"subdir": subdir}, "packages": {}, "packages.conda": files}))
    return root


def conda_forge_channel(root: Path, kb: KnowledgeBase) -> Path:
    """A local channel of conda-forge's pytorch builds as the data records them, per subdir."""
    return write_channel(root, {subdir: _records(kb, platform, subdir)
                                for platform, subdir in SUBDIRS.items()})


def solve(channel: Path, subdir: str, specs: List[str], declared: Mapping[str, str]) -> List[str]:
    """``name=version=build`` of what the solver picks for ``subdir`` with these virtual packages."""
    import rattler

    sparse = [rattler.SparseRepoData(rattler.Channel(channel.as_uri()), sub,
                                     str(channel / sub / "repodata.json")) for sub in (subdir, "noarch")]
    virtual = [rattler.GenericVirtualPackage(rattler.PackageName(name), rattler.Version(version),
                                             rattler.BuildString("0"))
               for name, version in {"__glibc": "2.28", **declared}.items()]
    records = asyncio.run(rattler.solve_with_sparse_repodata(specs, sparse, virtual_packages=virtual))
    return sorted(f"{r.name.normalized}={r.version}={r.build}" for r in records)


def solve_environment(channel: Path, doc: Mapping[str, Any], environment: str) -> Dict[str, List[str]]:
    """platform name -> what is locked for ``environment`` there, as ``pixi lock`` solves it."""
    specs = environment_specs(doc, environment)
    return {name: solve(channel, subdir, specs, declared)
            for name, subdir, declared in environment_platforms(doc, environment)}
