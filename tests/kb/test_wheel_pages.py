"""Projects' own wheel pages as `kb refresh --wheel-pages` sources: pages shaped like PyG's,
OpenMMLab's, GitHub's release JSON and FlashInfer's simple index (tests/kb/data/wheel_pages,
sources in its SOURCES.txt), served on 127.0.0.1. Package names come from what the pages list."""

from __future__ import annotations

import functools
import http.server
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from tests.support.httpd import serving

from torchsmith.cli import main
from torchsmith.errors import FetchError
from torchsmith.kb.wheel_pages import expand, merge_records, read_wheel_pages, records_from_listed

DATA = Path(__file__).parent / "data"
PAGES = DATA / "wheel_pages"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    with serving(functools.partial(_Quiet, directory=str(DATA))) as address:
        yield f"http://{address}"


def _rows(base: str) -> List[Dict[str, Any]]:
    root = f"{base}/wheel_pages"
    return [
        {"id": "pyg", "url": root + "/whl/torch-{torch}+{variant}.html", "follow": 0, "lists": "x",
         "source": ["S"]},
        {"id": "mm", "url": root + "/mmcv/dist/{variant}/torch{series}.0/index.html", "follow": 0,
         "lists": "x", "source": ["S"]},
        {"id": "fa", "url": root + "/repos/Dao-AILab/flash-attention/releases?per_page=100",
         "shape": "github-releases", "lists": "x", "source": ["S"]},
        {"id": "fi", "url": root + "/flashinfer/whl/{variant}/torch{series}/", "follow": 1, "lists": "x",
         "source": ["S"]},
    ]


def _fetch_files(url: str, _timeout: float) -> str:
    """The fixture pages by URL path, as the server would give them (no socket: fast)."""
    path = PAGES / url.split("/wheel_pages/", 1)[1].split("?")[0].split("#")[0]
    path = path / "index.html" if url.endswith("/") else path
    if not path.is_file():
        raise FetchError(f"{url}: 404", status=404)
    return path.read_text("utf-8")


BUILDS = [("2.5.0", "cu124"), ("2.1.0", "cu121"), ("2.6.0", "cu124"), ("2.6.0", "cpu")]


def test_the_pages_name_the_packages_and_their_builds() -> None:
    read: List[Dict[str, Any]] = []
    listed = read_wheel_pages(_rows("http://pages.test"), _fetch_files, builds=BUILDS, timeout=1, read=read)
    records = {r.name: r for r in records_from_listed(listed, "2026-11-26")}
    # Every package is read from a page's files: none is named by the table or the test.
    assert set(records) == {"pyg-lib", "torch-scatter", "torch-sparse", "torch-smithgraph", "mmcv",
                            "flash-attn", "flashinfer-python"}
    scatter = records["torch-scatter"].releases[0]
    assert scatter.version == "2.1.2+pt25cu124" and scatter.url.endswith("/whl/torch-2.5.0+cu124.html")
    assert scatter.build is not None and scatter.build.label.startswith("torch 2.5")
    assert set(scatter.wheels) == {"cp311-cp311-linux_x86_64", "cp311-cp311-win_amd64"}
    mmcv = records["mmcv"].releases[0]  # no local label: the page's URL names the build
    assert mmcv.version == "2.1.0" and mmcv.build is not None and mmcv.build.cuda == "12.1"
    flash = {r.version: r.url for r in records["flash-attn"].releases}
    page = "https://github.com/Dao-AILab/flash-attention/releases/expanded_assets/v2.8.3"
    assert flash == dict.fromkeys(("2.8.3+cu12torch2.8cxx11abiTRUE", "2.8.3+cu12torch2.5cxx11abiFALSE"), page)
    infer = records["flashinfer-python"].releases[0]  # found one link below the entry page
    assert infer.version == "0.2.2.post1+cu124torch2.6"
    assert {r["status"] for r in read} >= {"ok", "not found"}  # absent builds are noted, not fatal
    assert not any(r["url"].endswith("/cu124/") for r in read)  # "../../" is above the entry: not followed


def test_templates_expand_over_builds_once_per_page() -> None:
    assert expand("https://x/{variant}/torch{series}.0/", BUILDS) == [
        "https://x/cu124/torch2.5.0/", "https://x/cu121/torch2.1.0/", "https://x/cu124/torch2.6.0/",
        "https://x/cpu/torch2.6.0/"]
    assert expand("https://x/releases", BUILDS) == ["https://x/releases"]


def test_merge_keeps_the_snapshot_and_adds_page_builds() -> None:
    listed = read_wheel_pages(_rows("http://pages.test")[:2], _fetch_files, builds=BUILDS, timeout=1, read=[])
    records = records_from_listed(listed, "2026-11-26")
    snapshot = {"packages": [{"name": "mmcv", "source": "https://pypi.org/simple/mmcv/", "retrieved": "d",
                              "releases": [{"version": "2.1.0", "sdist": True}]}]}
    merged = merge_records(snapshot, records)
    mmcv = next(p for p in merged["packages"] if p["name"] == "mmcv")
    assert [(r["version"], bool(r.get("url"))) for r in mmcv["releases"]] == [("2.1.0", False),
                                                                                ("2.1.0", True)]
    new = next(p for p in merged["packages"] if p["name"] == "torch-smithgraph")
    assert new["from_wheel_pages"] and new["source"].endswith("torch-2.5.0+cu124.html")
    assert merge_records(merged, records) == merged  # a second read adds nothing


@pytest.mark.slow
def test_refresh_reads_the_pages_and_plan_uses_their_wheels(
        server: str, tmp_path: Path, _own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "table"
    table.mkdir()
    (table / "wheel_pages.json").write_text(json.dumps({"about": "local", "sources": {"S": "fixture"},
                                                        "rows": _rows(server)}))
    overlay = tmp_path / "overlay"
    args = ["kb", "refresh", "--torch-index", f"{server}/whl", "--variant", "cu132", "--index-url",
            f"{server}/simple", "--wheel-pages", "--kb", str(table), "--overlay", str(overlay), "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    assert data["wheel_pages"]["torch-smithgraph"] == 1 and data["wheel_pages"]["torch-scatter"] == 1
    machine = ["--gpu", "8.6", "--driver", "550.54.14", "--python", "3.11", "--platform", "linux-x86_64",
               "--kb", str(overlay)]
    # A package in no table, named only by a page: planned with the torch build its wheel encodes.
    assert main(["plan", "--json", "torch-smithgraph", *machine]) == 0
    plan = json.loads(capsys.readouterr().out)["data"]
    pins = {p["name"]: p for p in plan["packages"]}
    assert pins["torch"]["version"].startswith("2.5.") and plan["variant"] == "cu124"
    assert pins["torch-smithgraph"]["find_links"].endswith("/whl/torch-2.5.0+cu124.html")
    # A table package: the page's prebuilt wheel is used, from the page that lists it.
    assert main(["plan", "--json", "torch-scatter", "torch<2.6", *machine]) == 0
    pins = {p["name"]: p for p in json.loads(capsys.readouterr().out)["data"]["packages"]}
    assert pins["torch-scatter"]["local_version"] == "+pt25cu124"
    # mmcv: the index has 2.2.0 as a source distribution only; the page has 2.1.0 wheels for
    # torch 2.1 + cu121. With source builds forbidden, the wheel decides the whole stack...
    assert main(["plan", "--json", "mmcv", "--only-binary", ":all:", *machine]) == 0
    plan = json.loads(capsys.readouterr().out)["data"]
    pins = {p["name"]: p for p in plan["packages"]}
    assert pins["mmcv"]["version"] == "2.1.0"
    assert pins["mmcv"]["find_links"].endswith("/torch2.1.0/index.html")
    assert pins["torch"]["version"].startswith("2.1.") and plan["variant"] == "cu121"
    # ...and a release with no wheel is a no-solution naming the nearest release that has one.
    assert main(["plan", "--json", "mmcv==2.2.0", "--only-binary", ":all:", *machine]) != 0
    plan = json.loads(capsys.readouterr().out)["data"]
    assert plan["status"] == "no-solution"
    assert any("mmcv==2.1.0" in r for r in plan["reasons"])


@pytest.mark.parametrize("torch, abi", [("2.5.1", "FALSE"), ("2.8.0", "TRUE")])
def test_a_page_wheel_with_the_c_abi_of_the_planned_torch_is_chosen(torch: str, abi: str) -> None:
    # flash-attention publishes each build twice (cxx11abiTRUE / FALSE); torch's own wheels use the
    # C++11 ABI from the manylinux 2.28 builds on (manylinux.json), so the other one fails to load.
    from tests.plan.plan_hosts import host

    from torchsmith.kb import load_kb
    from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord
    from torchsmith.plan.model import Request
    from torchsmith.plan.resolve import resolve

    page = "https://github.com/Dao-AILab/flash-attention/releases/expanded_assets/v2.8.3"
    tags = ("cp311-cp311-linux_x86_64",)
    releases = tuple(ReleaseRecord(f"2.8.3+cu12torch{series}cxx11abi{flag}", (), "", tags, False, "none", "",
                                   page)
                     for series in ("2.8", "2.5") for flag in ("TRUE", "FALSE"))
    record = PackageRecord("flash-attn", page, "2026-11-26", releases, live=True)
    plan = resolve(host(python="3.11", gpus=["8.6"], driver="570.86.10"),
                   Request(requirements=(f"torch=={torch}", "flash-attn"), explicit=True,
                           published=(record,)),
                   load_kb(packaged_only=True))
    pins = {p.name: p for p in plan.packages}
    assert plan.ok and (pins["flash-attn"].local_version or "").endswith(f"cxx11abi{abi}")


def test_natten_s_own_page_is_read_by_the_shipped_row_and_its_wheels_pair(server: str) -> None:
    """whl.natten.org (one find-links page of GitHub release assets), read by the shipped row on a
    local copy of its shape: the packed digits (torch2100, torch250) name the torch each wheel needs."""
    from tests.plan.plan_hosts import host

    from torchsmith.host.live import LiveHost
    from torchsmith.kb import load_kb
    from torchsmith.plan.model import Request
    from torchsmith.plan.resolve import resolve

    kb = load_kb(packaged_only=True)
    row = next(r for r in kb.document("wheel_pages")["rows"] if r["url"] == "https://whl.natten.org/")
    local = dict(row, url=row["url"].replace("https://whl.natten.org", f"{server}/wheel_pages/natten"))
    read: List[Dict[str, Any]] = []
    listed = read_wheel_pages([local], LiveHost().fetch_url, builds=[], timeout=5, read=read)
    (record,) = records_from_listed(listed, "2026-11-26")
    assert record.name == "natten"
    assert read == [{"url": local["url"], "status": "ok", "files": 8, "kind": "wheel page"}]
    assert all(r.url == local["url"] for r in record.releases)  # the page pip is given with -f
    request = Request(requirements=("natten",), explicit=True, published=(record,))
    plan = resolve(host(python="3.12", gpus=["9.0:NVIDIA H100"], driver="580.65.06"), request, kb)
    assert plan.ok, plan.reasons
    pins = {p.name: p for p in plan.packages}
    natten, torch = pins["natten"], pins["torch"]
    series = "".join(torch.version.split(".")[:2])
    assert natten.local_version == f"+torch{series}0{plan.variant}" and natten.find_links == local["url"]
    cpu = resolve(host(python="3.11"), request, kb)
    assert {p.name: p.local_version for p in cpu.packages}["natten"] == "+torch250cpu"


def test_a_closed_host_costs_one_try_and_the_rest_of_its_pages_are_counted_not_read() -> None:
    calls: List[str] = []

    def closed(url: str, _timeout: float) -> str:
        calls.append(url)
        raise FetchError(f"cannot reach {url}: [Errno -2] Name or service not known")  # no HTTP answer

    read: List[Dict[str, Any]] = []
    rows = _rows("http://closed.test")[:1]
    assert read_wheel_pages(rows, closed, builds=BUILDS, timeout=1, read=read, workers=1) == []
    assert len(calls) == 1
    assert read[0]["status"] == "failed"
    assert read[1] == {"url": rows[0]["url"], "status": "skipped 3 page(s): its host did not answer",
                       "kind": "wheel page"}
    calls.clear()  # read at once: at most one try per worker
    read_wheel_pages(_rows("http://closed.test")[:2], closed, builds=BUILDS * 20, timeout=1, read=[],
                     workers=4)
    assert 1 <= len(calls) <= 4


def test_one_deadline_bounds_every_page_and_a_404_is_not_a_closed_host() -> None:
    now = [0.0]

    def slow_404(url: str, _timeout: float) -> str:
        now[0] += 50.0
        raise FetchError(f"{url}: 404", status=404)

    read: List[Dict[str, Any]] = []
    rows = _rows("http://slow.test")[:1]
    read_wheel_pages(rows, slow_404, builds=BUILDS, timeout=20, read=read, seconds=120, clock=lambda: now[0],
                     workers=1)
    assert [r["status"] for r in read] == ["not found"] * 3 + ["skipped 1 page(s): past the deadline"]


def test_the_rows_take_turns_so_a_deadline_cuts_old_builds_not_the_last_rows() -> None:
    now = [0.0]

    def slow(url: str, _timeout: float) -> str:
        now[0] += 50.0
        return _fetch_files(url, _timeout)

    read: List[Dict[str, Any]] = []
    rows = _rows("http://pages.test")[:2]
    read_wheel_pages(rows, slow, builds=BUILDS, timeout=20, read=read, seconds=120, clock=lambda: now[0],
                     workers=1)
    first = [r["url"] for r in read if not r["status"].startswith("skipped")]
    assert first == ["http://pages.test/wheel_pages/whl/torch-2.5.0+cu124.html",  # each row's newest build
                     "http://pages.test/wheel_pages/mmcv/dist/cu124/torch2.5.0/index.html",
                     "http://pages.test/wheel_pages/whl/torch-2.1.0+cu121.html"]
    assert {r["url"] for r in read if r["status"].startswith("skipped")} == {rows[0]["url"], rows[1]["url"]}


@pytest.mark.parametrize("argv, reads", [
    ([], True),  # a plain refresh reads the projects' pages
    (["--torch-index", "http://mirror.test/whl"], False),  # a mirror: its network may not reach them
    (["--torch-index", "http://mirror.test/whl", "--wheel-pages"], True),
    (["--no-wheel-pages"], False),
])
def test_refresh_reads_the_pages_by_default(argv: List[str], reads: bool) -> None:
    from torchsmith.cli import build_parser, parse_command_line
    from torchsmith.cli.kb import _read_pages

    parser, _ = build_parser("kb")
    notes: List[str] = []
    assert _read_pages(parse_command_line(parser, ["refresh", *argv]), notes) is reads
    assert bool(notes) is (argv[:1] == ["--torch-index"] and not reads)
    assert main(["kb", "refresh", "--wheel-pages", "--no-wheel-pages"]) == 2  # one or the other


def test_the_human_refresh_says_the_pages_in_a_few_lines() -> None:
    from torchsmith.cli.kb import _pages_said

    read = [{"url": "https://download.test/whl/cu132/torch/", "status": "ok"}]
    read += [{"url": f"https://p.test/{i}.html", "status": "not found", "kind": "wheel page"}
             for i in range(300)]
    read += [{"url": "https://q.test/", "status": "failed", "kind": "wheel page"},
             {"url": "https://q.test/{variant}/", "status": "skipped 40 page(s): its host did not answer",
              "kind": "wheel page"}]
    said = _pages_said(read).splitlines()
    assert said[0] == "  projects' wheel pages: 1 failed, 300 not found, 1 skipped"
    assert said[1:] == ["    https://q.test/: failed",
                        "    https://q.test/{variant}/: skipped 40 page(s): its host did not answer"]
