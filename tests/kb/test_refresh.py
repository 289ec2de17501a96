"""`kb refresh` against recorded simple-index pages served on 127.0.0.1 (tests/kb/data)."""

from __future__ import annotations

import functools
import http.server
import json
import socket
import urllib.parse
from pathlib import Path
from typing import Dict, Iterator

import pytest
from tests.support.httpd import serving

from torchsmith.cli import main
from torchsmith.host.live import LiveHost
from torchsmith.kb import load_kb
from torchsmith.kb.refresh import configured_indexes, parse_simple_page

PAGES = Path(__file__).parent / "data"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        # As a proxy the server is asked for absolute URLs; serve them by their path.
        return super().translate_path(urllib.parse.urlsplit(path).path if "://" in path else path)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def index_server() -> Iterator[str]:
    with serving(functools.partial(_Quiet, directory=str(PAGES))) as address:
        yield f"http://{address}"


def test_parse_simple_page() -> None:
    found = parse_simple_page((PAGES / "whl/cu132/torch/index.html").read_text())
    assert set(found) == {"2.15.0", "2.16.0", "2.17.0.dev20261120"}
    assert found["2.16.0"]["cu132"]["windows-x86_64"] == {"3.12", "3.13", "3.14", "3.14t", "3.15"}
    assert parse_simple_page("<a href='x'>not-a-wheel.tar.gz</a> garbage <a>torch-x-y.whl</a>") == {}
    # Some indexes label links differently; the href names the file (URL-quoted "+").
    page = ('<a href="../../pkgs/torch-2.9.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=00">'
            'download</a>')
    assert parse_simple_page(page) == {"2.9.0": {"cu128": {"linux-x86_64": {"3.12"}}}}


def test_configured_indexes(tmp_path: Path) -> None:
    read = LiveHost({}).read_text
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://mirror.example/simple\n")
    env: Dict[str, str] = {"PIP_CONFIG_FILE": str(conf), "HOME": str(tmp_path)}
    assert configured_indexes(env, read) == [("https://mirror.example/simple", str(conf))]
    both = tmp_path / "both.conf"  # pip install's own section wins over [global]
    both.write_text("[global]\nindex-url = https://mirror.example/simple\n"
                    "[install]\nindex-url = https://install.example/simple\n")
    assert configured_indexes({**env, "PIP_CONFIG_FILE": str(both)}, read) == [
        ("https://install.example/simple", str(both))]
    env["UV_DEFAULT_INDEX"] = "https://uv.example/simple"
    assert configured_indexes(env, read)[0] == ("https://uv.example/simple", "$UV_DEFAULT_INDEX")
    uv = tmp_path / ".config" / "uv"
    uv.mkdir(parents=True)
    (uv / "uv.toml").write_text('[[index]]\nurl = "https://corp.example/simple"\ndefault = true\n')
    assert ("https://corp.example/simple", str(uv / "uv.toml")) in configured_indexes(
        {"HOME": str(tmp_path), "PIP_CONFIG_FILE": "/dev/null"}, read)
    assert configured_indexes({"HOME": str(tmp_path / "empty"), "PIP_CONFIG_FILE": "/dev/null",
                               "XDG_CONFIG_DIRS": str(tmp_path / "none")}, read) == []


def test_configured_indexes_reads_the_files_through_the_host() -> None:
    # A recorded machine's files: nothing here is opened, and a garbled file is skipped.
    files = {"/home/u/.config/pip/pip.conf": "[global]\nindex-url = https://recorded.example/simple\n",
             "/etc/pip.conf": "not [an ini",
             "/etc/uv/uv.toml": 'index-url = "https://uv-recorded.example/simple"\n'}
    env = {"HOME": "/home/u", "XDG_CONFIG_DIRS": "/nowhere"}
    assert configured_indexes(env, files.get) == [
        ("https://recorded.example/simple", "/home/u/.config/pip/pip.conf"),
        ("https://uv-recorded.example/simple", "/etc/uv/uv.toml")]


@pytest.mark.slow
def test_refresh_writes_an_overlay_later_commands_use(
        index_server: str, _own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["kb", "refresh", "--torch-index", f"{index_server}/whl", "--variant", "cu132",
            "--variant", "cu140", "--variant", "cpu", "--variant", "cu999",
            "--index-url", f"{index_server}/simple", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    data = result["data"]
    assert data["newest_seen"] == "2.16.0" and data["new_releases"] == ["2.16.0"]
    assert {r["url"].rsplit("/", 3)[-3]: r["status"] for r in data["read"] if "/whl/" in r["url"]} == {
        "cu132": "ok", "cu140": "ok", "cpu": "ok", "cu999": "not found"}
    overlay = _own_cache / "kb-overlay"
    provenance = json.loads((overlay / "refresh.json").read_text())
    assert provenance["torch_index_base"] == f"{index_server}/whl"
    assert any(r["url"] == f"{index_server}/simple/torch/" for r in provenance["read"])
    # Later commands see the new release, its variants and Python tags, with the provenance.
    kb = load_kb()
    release = kb.release("2.16.0")
    assert release is not None and release.uncertain
    assert [v.name for v in release.variants] == ["cu132", "cu140", "cpu"]
    assert release.pythons("linux-x86_64") == ("3.12", "3.13", "3.14", "3.14t", "3.15", "3.15t")
    assert release.pythons("macos-arm64") == ("3.12", "3.13", "3.14", "3.14t", "3.15", "3.15t")
    cu132 = release.variant("cu132")
    template = kb.release("2.15.0").variant("cu132")  # type: ignore[union-attr]
    assert cu132 is not None and template is not None
    assert cu132.sass("linux-x86_64") == template.sass("linux-x86_64")
    assert cu132.index_url == f"{index_server}/whl/cu132"
    cu140 = release.variant("cu140")
    assert cu140 is not None and cu140.sass("linux-x86_64") == () and cu140.uncertain
    assert kb.cuda_release("14.0") is not None
    assert kb.sources[release.sources[0]].retrieved == provenance["refreshed"]
    assert release.pypi_default["linux-x86_64"] == "cu132"
    assert kb.warnings and "torch 2.16.0" in kb.warnings[0]
    assert main(["kb", "show", "releases"]) == 0
    captured = capsys.readouterr()
    first_row = captured.out.splitlines()[2]  # under the table's header and rule
    assert first_row.split()[:2] == ["?", "2.16.0"]  # newest first, marked unverified
    assert "hidden; -v shows" in captured.err  # the data's age is a note
    assert main(["kb", "info", "-v"]) == 0
    assert "warning: data is older than torch 2.16.0 seen by `kb refresh`" in capsys.readouterr().err


@pytest.mark.slow
def test_refresh_offline_fails_in_one_line(_own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["kb", "refresh", "--torch-index", f"http://127.0.0.1:{port}/whl", "--variant", "cu132",
            "--index-url", f"http://127.0.0.1:{port}/simple", "--timeout", "5"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"error[kb-refresh-failed]: cannot reach http://127.0.0.1:{port}/whl/cu132/torch/: ")
    assert "Traceback" not in err
    assert not (_own_cache / "kb-overlay").exists()
    assert load_kb().overlay is None


@pytest.mark.slow
def test_refresh_honours_the_proxy_environment(index_server: str, _own_cache: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Every request goes to the "proxy" (our server), which serves the pages by path.
    monkeypatch.setenv("http_proxy", index_server)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    args = ["kb", "refresh", "--torch-index", "http://pytorch-mirror.invalid/whl", "--variant", "cu140",
            "--index-url", "http://pypi-mirror.invalid/simple"]
    assert main(args) == 0, capsys.readouterr().err
    assert load_kb().release("2.16.0") is not None


def test_refresh_rereads_the_package_snapshot_from_the_index(
        index_server: str, _own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The index publishes a synthetic xformers 0.0.99 (its PEP 658 file pins torch==2.16.0) and no
    # metadata file for 0.0.35, which keeps what the packaged snapshot read of it.
    args = ["kb", "refresh", "--torch-index", f"{index_server}/whl", "--variant", "cu132",
            "--index-url", f"{index_server}/simple", "--json"]
    assert main(args) == 0
    capsys.readouterr()
    snapshot = json.loads((_own_cache / "kb-overlay" / "package_meta.json").read_text("utf-8"))
    assert snapshot["torch_newest"] == "2.16.0" and snapshot["index"] == f"{index_server}/simple"
    xformers = next(p for p in snapshot["packages"] if p["name"] == "xformers")
    versions = {r["version"]: r for r in xformers["releases"]}
    assert set(versions) == {"0.0.99", "0.0.35"}
    assert versions["0.0.99"]["requires"] == ["numpy", "torch==2.16.0"]
    assert versions["0.0.99"]["metadata"] == "pep658"
    assert "torch>=2.10" in versions["0.0.35"]["requires"]  # kept from the packaged snapshot
    vllm = next(p for p in snapshot["packages"] if p["name"] == "vllm")  # not on this index: as packaged
    assert len(vllm["releases"]) > 10
    # vllm's chains, not re-read here, keep their packaged readings in package_deps.json.
    deps = json.loads((_own_cache / "kb-overlay" / "package_deps.json").read_text("utf-8"))
    from torchsmith.kb.depchain import requirement_name

    named = {requirement_name(d) for r in vllm["releases"] for d in r.get("depends", ())}
    assert named and named <= {p["name"] for p in deps["packages"]}
    # The plan follows the index past the table (which stops at 0.0.35); validate says the table is stale.
    assert main(["plan", "--gpu", "9.0", "--driver", "580.65.06", "--python", "3.12",
                 "xformers"]) == 0
    out = capsys.readouterr().out
    assert "xformers==0.0.99" in out and "torch==2.16.0" in out
    assert main(["kb", "validate"]) == 1
    assert "the xformers torch pins stop at 0.0.35; its index has 0.0.99" in capsys.readouterr().err


def test_refresh_reads_the_variant_indexs_metadata_as_a_source(
        index_server: str, _own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The variant index (tests/kb/data/whl/variant/torch/) in the shape PyTorch publishes: the
    recorded torch-2.10.0-variants.json verbatim (wheelnext/variant-repack@e75a16d9
    configs/torch-2.10), and 2.15.0/2.16.0 files in the same shape (labels ``cuda13.2``, ``null``;
    ``{major}.0`` floors; providers with ``enable-if``; ``priority`` static properties)."""
    from torchsmith.plan.variant_labels import labels_of, recorded

    args = ["kb", "refresh", "--torch-index", f"{index_server}/whl", "--variant", "cu132",
            "--variant", "cu140", "--variant", "cpu", "--index-url", f"{index_server}/simple",
            "--variant-index", f"{index_server}/whl/variant", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    labels = data["variant_labels"]
    cu140 = labels["2.16.0"]["cuda14.0"]
    assert (cu140["build"], cu140["cuda_floor"], cu140["ptx"]) == ("cu140", "14.0", ["compute_120"])
    assert cu140["platforms"] == ["linux-x86_64", "windows-x86_64"]
    assert labels["2.16.0"]["cuda13.2"]["cuda_floor"] == "13.0"  # a driver floor, not the build's CUDA
    assert (labels["2.16.0"]["rocm7.2"]["rocm"], labels["2.16.0"]["rocm7.2"]["gfx"][-1]) == ("7.2", "gfx950")
    assert "12.55.8" in labels["2.16.0"]["xpu"]["device_ip"]
    assert labels["2.16.0"]["null"]["build"] == "cpu"
    # the packaged 2.15.0 cu132 row against what its label declares (its floor is not a disagreement)
    assert labels["2.15.0"]["cuda13.2"]["disagrees"] == [
        "linux-x86_64: PTX (none): the label declares compute_120"]
    assert labels["2.10.0"]["cuda12.8"]["cuda_floor"] == "12.0"
    assert main(args[:-1]) == 0  # the same, for people
    said = capsys.readouterr().out
    assert "variant labels of torch 2.16.0: null, cuda13.2, cuda14.0, xpu, rocm7.2" in said
    assert "cuda13.2 disagrees with the data: linux-x86_64: PTX (none): the label declares" in said

    # Written where `plan --variants` reads: variant_labels.json, each file with its URL and date.
    kb = load_kb()
    row = recorded(kb, "2.16.0")
    assert row is not None and row["url"] == f"{index_server}/whl/variant/torch/torch-2.16.0-variants.json"
    assert kb.document("variant_labels")["sources"][row["source"][0]]["retrieved"] == data["refreshed"]
    assert row["published"]["cuda13.2"] == ["linux-x86_64", "linux-aarch64"]
    release = kb.release("2.16.0")
    assert release is not None and sorted(labels_of(kb, release, "linux-x86_64")) == [
        "cuda13.2", "cuda14.0", "null", "rocm7.2", "xpu"]  # as the variant index lists their wheels
    # the cu132 index has 2.16.0 Windows wheels, the variant index none: a variant installer cannot take it
    assert "windows-x86_64" in release.variant("cu132").platforms  # type: ignore[union-attr]
    assert sorted(labels_of(kb, release, "windows-x86_64")) == ["cuda14.0", "null"]
    # the real 2.10.0 file, read from the index, is the row the packaged data recorded from its config
    packaged = recorded(load_kb(packaged_only=True), "2.10.0")
    read_back = recorded(kb, "2.10.0")
    assert packaged is not None and read_back is not None
    for key in ("variants", "providers", "default-priorities", "static-properties"):
        assert read_back[key] == packaged[key], key

    # A build refresh only inferred takes the targets its label declares.
    build = release.variant("cu140")
    assert build is not None and build.sass("linux-x86_64")[-1] == "sm_120"
    assert build.ptx("linux-x86_64") == ("compute_120",)
    assert build.sass("windows-x86_64") == ()  # the cu140 index itself lists no Windows wheel
    assert "torch-2.16.0-variants.json" in build.note

    # `plan --variants` picks among the labels read: cuda13.2 (floor 13.0) on a CUDA 13.0 driver, and
    # says that uv's own preview refuses this file.
    assert main(["plan", "--fresh", "--json", "--python", "3.12", "--platform", "linux-x86_64", "--variants",
                 "--gpu", "9.0", "--driver", "580.65.06", "torch==2.16.0"]) == 0
    plan = json.loads(capsys.readouterr().out)["data"]
    assert any("it takes cuda13.2 here" in c for c in plan["choices"]), plan["choices"]
    assert any("torch has invalid metadata" in w for w in plan["warnings"])
