"""`--kb DIR` reaches every table and every document: for each one, an overlay directory holding
only that file changes what the command that reads it prints (run in process, as a user would).

Each case writes one overlay file (rows replace packaged rows with the same key; a document
replaces the packaged one), then runs the same command with and without ``--kb``: the change is
seen only with it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Sequence

import pytest
from tests.plan.plan_hosts import host

from torchsmith.cli import main
from torchsmith.kb import DATA_DIR
from torchsmith.kb.documents import DOCUMENTS
from torchsmith.kb.model import TABLE_FILES

HOSTS = Path(__file__).resolve().parent.parent / "hosts"
H100 = str(HOSTS / "linux-x86_64-h100-drv535.json")  # driver 535: CUDA 12 by minor compatibility
ARC = str(HOSTS / "linux-x86_64-arc-a770.json")
RADEON = str(HOSTS / "linux-x86_64-rx7600xt-rocm6.2-override.json")
ORIN = str(HOSTS / "jetson-orin-jp6.2.json")
CONDA_LOG = str(HOSTS.parent / "explain" / "corpus" / "conda-pytorch-channel-ended--1.txt")
OLD_GPU_ERROR = ("NVIDIA GeForce GTX 680 with CUDA capability sm_30 is not compatible with the current "
                 "PyTorch installation.")
MARK = "smithtest"  # in every changed value: absent from the packaged data


def packaged(name: str) -> Dict[str, Any]:
    data = json.loads((Path(DATA_DIR) / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def row_of(rows: List[Dict[str, Any]], **match: Any) -> Dict[str, Any]:
    return copy.deepcopy(next(r for r in rows if all(r.get(k) == v for k, v in match.items())))


class Case(NamedTuple):
    overlay: Callable[[], Dict[str, Any]]  # file name -> its content
    argv: Callable[[Path], List[str]]  # the command; the Path is a scratch directory
    seen: Callable[[str], bool]  # what the changed output shows


def _release() -> Dict[str, Any]:
    newest = row_of(packaged("torch_releases.json")["releases"], version="2.14.1")
    newest.update(version="2.99.0", released="2030-01-01")
    return {"torch_releases.json": {"releases": [newest]}}


def _toolkit() -> Dict[str, Any]:
    # The H100 host's driver 535 now fully supports CUDA 12.6 (it ran it by minor compatibility).
    row = row_of(packaged("cuda.json")["toolkits"], version="12.6")
    row["min_driver_linux"] = "535.1"
    return {"cuda.json": {"toolkits": [row]}}


def _minor_compat() -> Dict[str, Any]:
    row = row_of(packaged("cuda.json")["minor_compat"], cuda_major="12")
    row["min_driver_linux"] = "536.1"  # above the host's 535: no CUDA 12 build runs there
    return {"cuda.json": {"minor_compat": [row]}}


def _driver_branch() -> Dict[str, Any]:
    row = copy.deepcopy(packaged("cuda.json")["driver_branches"][0])
    row["branch"] = "999"
    return {"cuda.json": {"driver_branches": [row]}}


def _gpu() -> Dict[str, Any]:
    return {"gpus.json": {"gpus": [{"name": "NVIDIA Smithtest 9000", "compute_capability": "8.6",
                                    "family": "Ampere", "source": ["NV_GPUS"]}]}}


def _jetpack() -> Dict[str, Any]:
    row = row_of(packaged("jetson.json")["jetpacks"], l4t="36.4.3")
    for wheel in row["wheels"]:
        wheel["url"] = f"https://{MARK}.example/jp6/" + wheel["url"].rsplit("/", 1)[-1]
    return {"jetson.json": {"jetpacks": [row]}}


def _gfx_target() -> Dict[str, Any]:
    row = row_of(packaged("rocm.json")["gfx_targets"], gfx="gfx1100")
    row["name"] = f"Radeon {MARK}"
    return {"rocm.json": {"gfx_targets": [row]}}


def _requirement() -> Dict[str, Any]:
    row = {"package": "xformers", "version": "9.9.9", "torch": "==2.14.1", "variants": ["cu126", "cu128"],
           "source": ["PYPI"], "uncertain": True}  # not read from an index's files
    return {"companions.json": {"torch_requirements": [row]}}


def _therock() -> Dict[str, Any]:
    row = dict(packaged("rocm.json")["therock_indexes"][0], extra=f"{MARK}-{{gfx}}")
    return {"rocm.json": {"therock_indexes": [row]}}


def _paired() -> Dict[str, Any]:
    row = row_of(packaged("companions.json")["paired_wheels"], package="mmcv", torch="2.4", variant="cu121")
    row["find_links"] = f"https://{MARK}.example/whl/torch-{row['torch']}+{row['variant']}.html"
    return {"companions.json": {"paired_wheels": [row]}}


def _channel() -> Dict[str, Any]:
    row = row_of(packaged("conda.json")["channels"], channel="pytorch", package="pytorch")
    row["last_version"] = "2.5.9"
    return {"conda.json": {"channels": [row]}}


def _conda_build() -> Dict[str, Any]:
    row = row_of(packaged("conda.json")["builds"], package="pytorch", version="2.13")
    row.update(version="2.14", releases=["2.14.1"], cuda_versions=["12.6"], note=MARK)
    row["platform_cuda"] = [f"{p}=12.6" if p.startswith("linux") else f"{p}=" for p in row["platforms"]]
    return {"conda.json": {"builds": [row]}}


def _arch_row() -> Dict[str, Any]:
    row = copy.deepcopy(packaged("cuda.json")["arch_support"][0])
    row.update(cuda="99.0", min_arch="sm_30", max_arch="sm_30", archs=["sm_30"], deprecated=[])
    return {"cuda.json": {"arch_support": [row]}}


def _framework() -> Dict[str, Any]:
    row = row_of(packaged("frameworks.json")["builds"], framework="tensorflow", extra="and-cuda")
    row["version"] = "9.9.9"
    return {"frameworks.json": {"builds": [row]}}


def _audit() -> Dict[str, Any]:
    row = copy.deepcopy(packaged("wheel_audits.json")["wheels"][0])
    row["id"] = f"{MARK}-audit"
    return {"wheel_audits.json": {"wheels": [row]}}


def _document(file_name: str, change: Callable[[Dict[str, Any]], None]) -> Callable[[], Dict[str, Any]]:
    def overlay() -> Dict[str, Any]:
        data = packaged(file_name)
        change(data)
        return {file_name: data}
    return overlay


def _limits(data: Dict[str, Any]) -> None:
    for row in data["rows"]:
        if row["package"] == "flash-attn":
            row["min_compute_capability"] = "9.5"  # the H100 (9.0) falls below


def _vllm(data: Dict[str, Any]) -> None:
    data["rows"].insert(0, {"package": "vllm", "version": "9.9.9", "torch": "==2.14.1", "cuda_only": True,
                            "source": ["vllm-meta"]})


def _published(data: Dict[str, Any]) -> None:
    data["packages"].append({"name": f"{MARK}-kernels", "source": f"https://{MARK}.example/simple/",
                             "retrieved": "2030-01-01", "releases": [
                                 {"version": "9.9.9", "requires": ["torch==2.12.0"], "metadata": "pep658",
                                  "wheels": ["py3-none-any"]}]})


def _chain() -> Dict[str, Any]:
    """A snapshot package whose dependency (in package_deps.json only) pins torch."""
    snapshot = packaged("package_meta.json")
    _published(snapshot)
    snapshot["packages"][-1]["releases"][0].update(requires=[], depends=[f"{MARK}-base>=1"])
    deps = packaged("package_deps.json")
    deps["packages"].append({"name": f"{MARK}-base", "source": f"https://{MARK}.example/simple/{MARK}-base/",
                             "retrieved": "2030-01-01", "releases": [
                                 {"version": "1.0", "requires": ["torch==2.12.0"], "metadata": "pep658"}]})
    return {"package_meta.json": snapshot, "package_deps.json": deps}


def _hsa(data: Dict[str, Any]) -> None:
    data["risk"] = f"{MARK} risk ({{runs_as}} on {{gfx}})"


def _glibc(data: Dict[str, Any]) -> None:
    for row in data["rows"]:
        row["min_glibc"], row["tag"] = "2.99", f"manylinux_2_99_{MARK}"


def _xpu(data: Dict[str, Any]) -> None:
    for row in data["rows"]:
        row["family"] = f"{MARK} {row['family']}"


def _variant_devices(data: Dict[str, Any]) -> None:
    # The Arc A770 now reports a device IP torch's xpu label does not list: the installer takes CPU.
    for row in data["intel_families"]["rows"]:
        if "Alchemist" in row["family"]:
            row["devices"] = {f"{MARK}-g10": ["99.9.9"]}


def _wheel_page(data: Dict[str, Any]) -> None:
    data["rows"][0]["url"] = f"https://{MARK}.example/whl/torch-{{torch}}+{{variant}}.html"


def _signature(data: Dict[str, Any]) -> None:
    sig = copy.deepcopy(data["signatures"][0])
    sig.update(id=f"{MARK}-failure", title=f"the {MARK} failure", patterns=["SMITHTEST-E42 happened"])
    sig.pop("supersedes", None)
    data["signatures"].append(sig)


def _torch_extra(data: Dict[str, Any]) -> None:
    data["releases"][0]["requires"].append(f'{MARK}mod; extra == "{MARK}-extra"')


OPTIONAL_IMPORT = ('  File "/v/lib/python3.11/site-packages/torch/utils/x.py", line 1, in <module>\n'
                   f"    import {MARK}mod\n"
                   f"ModuleNotFoundError: No module named '{MARK}mod'\n")


def _error_vocab(data: Dict[str, Any]) -> None:
    row = next(r for r in data["cuda"] if r["name"] == "cudaErrorNoKernelImageForDevice")
    row["meaning"] = f"the {MARK} meaning"


def _buildreqs(data: Dict[str, Any]) -> None:
    data["rocm"]["switches"].append([f"{MARK.upper()}_SWITCH", "1"])


def _pixi(data: Dict[str, Any]) -> None:
    data["pixi"]["platforms"]["linux-x86_64"] = f"{MARK}-64"


def _containers(data: Dict[str, Any]) -> None:
    for row in data["cuda_runtime"]:
        row["image"] = f"{MARK}/cuda:{row['cuda']}"


def _plan(*extra: str, path: str = H100) -> Callable[[Path], List[str]]:
    return lambda _tmp: ["plan", "--host", path, "-v", *extra]  # -v: every reason, with its sources


def _unknown_gpu(tmp: Path) -> List[str]:
    profile = tmp / "unknown-gpu.json"
    machine = host(driver="580.65.06", unknown_gpu="NVIDIA Smithtest 9000")
    profile.write_text(json.dumps(machine.to_json()), encoding="utf-8")
    return ["plan", "--host", str(profile), "--json"]


def _explain(text: str) -> Callable[[Path], List[str]]:
    return lambda _tmp: ["explain", "--no-probe", text]


def _show(table: str) -> Callable[[Path], List[str]]:
    return lambda _tmp: ["kb", "show", table, "--json"]


def _conda_2_14_known(out: str) -> bool:
    return '"pytorch-gpu": "2.14.1"' in out and "2.14 is not in torchsmith's data" not in out


def _has(text: str) -> Callable[[str], bool]:
    return lambda out: text in out



CASES: Dict[str, Any] = {
    # row tables (`kb show` names)
    "releases": Case(_release, _plan(), _has("torch==2.99.0+cu126")),
    "cuda": Case(_toolkit, _plan(), _has("CUDA 12.6 needs ≥ 535.1 for full support")),
    "minor-compat": Case(_minor_compat, _plan(), _has("≥ 536.1 (minor-version compatibility)")),
    "driver-branches": Case(_driver_branch, _show("driver-branches"), _has('"branch": "999"')),
    "arch-support": Case(_arch_row, _explain(OLD_GPU_ERROR), _has("CUDA 99.0 is the newest toolkit")),
    "gpus": Case(_gpu, _unknown_gpu, _has("NVIDIA Smithtest 9000 (compute capability 8.6")),
    "jetson": Case(_jetpack, _plan(path=ORIN), _has(f"https://{MARK}.example/jp6/torch-")),
    "rocm": Case(_gfx_target, _show("rocm"), _has(f"Radeon {MARK}")),
    "paired-wheels": Case(_paired, _plan("mmcv"), _has(f"https://{MARK}.example/whl/")),
    "torch-requirements": Case(_requirement, _plan("xformers"), _has("xformers==9.9.9")),
    "therock": Case(_therock, lambda _tmp: ["plan", "--platform", "windows-x86_64", "--rocm-gfx", "gfx1100",
                                            "--python", "3.12"], _has(f"torch[{MARK}-gfx1100]")),
    "conda-channels": Case(_channel, lambda _tmp: ["explain", "--no-probe", "--file", CONDA_LOG],
                           _has("its last release there is 2.5.9")),
    "conda-builds": Case(_conda_build, _plan("--json"), _conda_2_14_known),
    "frameworks": Case(_framework, _plan("tensorflow[and-cuda]"), _has("tensorflow[and-cuda]==9.9.9")),
    "wheel-audits": Case(_audit, _show("wheel-audits"), _has(f"{MARK}-audit")),
    # documents
    "companion_limits": Case(_document("companion_limits.json", _limits), _plan("flash-attn"),
                             _has("9.5")),
    "downstream": Case(_document("downstream.json", _vllm), _plan("vllm"), _has("vllm==9.9.9")),
    "package_meta": Case(_document("package_meta.json", _published), _plan(f"{MARK}-kernels"),
                         _has(f"{MARK}-kernels==9.9.9")),
    "package_deps": Case(_chain, _plan(f"{MARK}-kernels"),
                         _has(f"{MARK}-base>=1 (1.0), which needs torch==2.12.0")),
    # torch<2.14: the multi-arch rocm7.14 builds carry gfx1032 itself, so no override is needed there
    "hsa_override": Case(_document("hsa_override.json", _hsa), _plan("--rocm-gfx", "gfx1032", "torch<2.14",
                                                                     path=RADEON),
                         _has(f"{MARK} risk (gfx1030 on gfx1032)")),
    "manylinux": Case(_document("manylinux.json", _glibc), _plan("--glibc", "2.28"),
                      _has(f"manylinux_2_99_{MARK}")),
    "xpu": Case(_document("xpu.json", _xpu), _plan(path=ARC), _has(f"{MARK} Intel Arc A-Series")),
    "variant_labels": Case(_document("variant_labels.json", _variant_devices), _plan("--variants", path=ARC),
                           _has(f"{MARK}-g10 (device IP 99.9.9)")),
    "signatures": Case(_document("signatures.json", _signature),
                       lambda _tmp: ["explain", "--no-probe", "SMITHTEST-E42 happened"],
                       _has(f"the {MARK} failure")),
    "error_vocab": Case(_document("error_vocab.json", _error_vocab),
                        lambda _tmp: ["explain", "--no-probe", "--json", "CUDA error 209 happened"],
                        _has(f"the {MARK} meaning")),
    "torch_requires": Case(_document("torch_requires.json", _torch_extra),
                           lambda _tmp: ["explain", "--no-probe", OPTIONAL_IMPORT],
                           _has(f"torch[{MARK}-extra]")),
    "buildreqs": Case(_document("buildreqs.json", _buildreqs),
                      lambda _tmp: ["build-env", "--rocm", "--host", RADEON, "--json"],
                      _has(f"export {MARK.upper()}_SWITCH=1")),
    "formats": Case(_document("formats.json", _pixi), _plan("--format", "pixi"), _has(f"{MARK}-64")),
    "containers": Case(_document("containers.json", _containers), _plan("--format", "dockerfile"),
                       _has(f"FROM {MARK}/cuda:")),
    # what `kb refresh --wheel-pages` would read, as `kb info` lists it
    "wheel_pages": Case(_document("wheel_pages.json", _wheel_page), lambda _tmp: ["kb", "info", "--json"],
                        _has(f"https://{MARK}.example/whl/")),
}


def test_every_table_and_document_has_a_case() -> None:
    assert set(CASES) == set(TABLE_FILES) | set(DOCUMENTS)


def _run(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    # A plan may be a no-solution and a preflight may find errors; never a usage error.
    assert code is not None and code != 2, captured.err
    return captured.out + captured.err


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_an_overlay_reaches_what_reads_it(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHSMITH_COLUMNS", "1000")  # each reason on one line
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    for name, content in case.overlay().items():
        (overlay / name).write_text(json.dumps(content, indent=1), encoding="utf-8")
    argv = case.argv(tmp_path)
    assert not case.seen(_run(argv, capsys)), "the packaged data already shows the change"
    assert case.seen(_run([*argv, "--kb", str(overlay)], capsys))
