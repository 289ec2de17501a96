"""The installer's own resolver confirms the whole plan (install/confirm.py, cli/plan_confirm.py)
and a refusal is said in plain words (plan/conflict_words.py).

Refusal texts are real: pip's from public threads (tests/explain/corpus/, cited there), uv's from
a public uv issue (cited below) and from the real uv run by the slow tests against the local
index they start (synthetic wheels; ``alpha`` publishes no PEP 658 file, so only a resolver sees
that it needs ``beta>=2``, which pins an old torch).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pytest
from tests.support.pkgindex import build_wheel, serve_index

from torchsmith.cli import main
from torchsmith.cli.plan_confirm import pairing_from
from torchsmith.host import CommandResult
from torchsmith.host.live import LiveHost
from torchsmith.install import confirm as confirm_mod
from torchsmith.install.confirm import confirm_plan, skip_reason
from torchsmith.kb import load_kb
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, parse_core_metadata
from torchsmith.plan.conflict_words import conflict_lines, parse_failure, unreachable_line
from torchsmith.plan.model import PackagePin, Plan, Request

KB = load_kb(packaged_only=True)
CORPUS = Path(__file__).resolve().parent.parent / "explain" / "corpus"
META = Path(__file__).resolve().parent / "published_meta"
H100_HOST = str(Path(__file__).resolve().parent.parent / "hosts" / "linux-x86_64-h100-drv535.json")

# https://github.com/astral-sh/uv/issues/10604 (uv 0.5.18): markers in braces, sentences wrapped.
MARKER = "{platform_machine == 'x86_64' and sys_platform =="
UV_10604 = (
    "  × No solution found when resolving dependencies:\n"
    f"  ╰─▶ Because there is no version of nvidia-cudnn-cu12{MARKER} 'linux'}}==9.1.0.70 and torch==2.4.1 "
    f"depends on nvidia-cudnn-cu12{MARKER}\n"
    "      'linux'}==9.1.0.70, we can conclude that torch==2.4.1 cannot be used.\n"
    "      And because you require torch==2.4.1, we can conclude that your requirements are unsatisfiable.\n")
# uv 0.13.9 on the slow tests' index: its own inference ("all versions of alpha depend on
# torch==2.4.0") is not a published requirement.
UV_CHAIN = (
    "error: No solution found when resolving dependencies\n"
    "  cause: Because beta>=2.0 depends on torch==2.4.0 and all versions of alpha depend on beta>=2, we can "
    "conclude that all versions of alpha depend on torch==2.4.0.\n"
    "         And because you require torch==2.6.0+cu126 and alpha, we can conclude that your requirements "
    "are unsatisfiable.\n")
# uv 0.13.9 on the local index (tests/refusal/real/uv-markers.txt): delta's need applies on Linux only.
UV_MARKERS = (
    "error: No solution found when resolving dependencies\n"
    "  cause: Because all versions of delta depend on torch{sys_platform == 'linux'}==2.4.0 and you require "
    "delta, we can conclude that you require torch==2.4.0.\n"
    "         And because you require torch==2.6.0+cu126, we can conclude that your requirements are "
    "unsatisfiable.\n")
UV_REFUSED = """error: Request failed after 3 retries in 4.9s
  cause: Failed to fetch: http://127.0.0.1:9/simple/alpha/
  cause: error sending request for url (http://127.0.0.1:9/simple/alpha/)
  cause: client error (Connect)
  cause: tcp connect error
  cause: Connection refused (os error 111)
"""


def _pairs(table: Dict[Tuple[str, str], str]):  # type: ignore[no-untyped-def]
    def pairing(name: str, torch: str, within: str) -> Optional[Tuple[str, str]]:
        found = table.get((name, torch))
        return (found, "test table") if found else None

    return pairing


# --- the words ------------------------------------------------------------------------------

def test_pips_refusal_names_who_pins_what_and_the_release_that_pairs() -> None:
    text = (CORPUS / "torch-pin-conflict--1.txt").read_text()  # InvokeAI: torch==1.12.1 + torchvision 0.13.0
    failure = parse_failure(text)
    assert ("torchvision", "0.13.0", "torch", "==1.12.0") in [(n.who, n.who_version, n.what, n.spec)
                                                            for n in failure.needs]
    assert "torch==1.12.1" in failure.required
    lines = conflict_lines(failure, {"torch": "1.12.1"}, "pip", _pairs({("torchvision", "1.12.1"): "0.13.1"}))
    assert lines == ["pip refused the whole request: torchvision 0.13.0 requires torch==1.12.0, but the plan "
                     "installs torch 1.12.1; the newest torchvision that pairs with torch 1.12.1 is "
                     "torchvision==0.13.1 [source: test table]."]  # kornia's torch>=1.8.1 is met: not named


def test_a_local_version_in_pips_refusal_is_no_package() -> None:
    # pip's list names a local build ("torchvision 0.16.1+cu118 depends on ..."): "cu118" is its
    # version's label, not a package that requires torch.
    text = ("ERROR: Cannot install torch==2.6.0+cu126 and torchvision==0.16.1+cu118 because these package "
            "versions have conflicting dependencies.\n\nThe conflict is caused by:\n"
            "    The user requested torch==2.6.0+cu126\n"
            "    torchvision 0.16.1+cu118 depends on torch==2.1.1+cu118\n")
    failure = parse_failure(text)
    assert [(n.who, n.who_version, n.what + n.spec) for n in failure.needs] == [
        ("torchvision", "0.16.1+cu118", "torch==2.1.1+cu118")]
    assert conflict_lines(failure, {"torch": "2.6.0+cu126"}, "pip") == [
        "pip refused the whole request: torchvision 0.16.1+cu118 requires torch==2.1.1+cu118, but the plan "
        "installs torch 2.6.0+cu126."]


def test_uvs_refusal_is_read_through_its_markers_and_wrapped_lines() -> None:
    failure = parse_failure(UV_10604)
    assert [(n.who, n.who_version, n.what, n.spec) for n in failure.needs] == [
        ("torch", "==2.4.1", "nvidia-cudnn-cu12", "==9.1.0.70")]
    assert failure.missing == ("nvidia-cudnn-cu12==9.1.0.70",)
    lines = conflict_lines(failure, {"torch": "2.4.1"}, "uv")
    assert lines[0] == "uv refused the whole request: torch==2.4.1 requires nvidia-cudnn-cu12==9.1.0.70."
    assert "nvidia-cudnn-cu12==9.1.0.70 is on none of the indexes given." in lines


def test_a_chain_names_the_package_that_pins_torch_and_who_asks_for_it() -> None:
    failure = parse_failure(UV_CHAIN)
    assert [(n.who, n.what + n.spec) for n in failure.needs] == [("beta", "torch==2.4.0"),
                                                                 ("alpha", "beta>=2")]
    lines = conflict_lines(failure, {"torch": "2.6.0+cu126"}, "uv pip compile", _pairs({}))
    assert lines == ["uv pip compile refused the whole request: beta>=2.0 requires torch==2.4.0, but the "
                     "plan installs torch 2.6.0+cu126 (alpha asks for beta>=2); no release of beta within "
                     "beta>=2 whose metadata torchsmith read pairs with torch 2.6.0."]


def test_an_unreachable_index_is_told_apart_from_a_conflict() -> None:
    assert unreachable_line(UV_REFUSED) == ("Failed to fetch: http://127.0.0.1:9/simple/alpha/ "
                                            "(Connection refused (os error 111))")
    assert unreachable_line(UV_CHAIN) == ""
    assert unreachable_line((CORPUS / "torch-pin-conflict--2.txt").read_text()) == ""


def test_the_pairing_release_comes_from_published_metadata() -> None:
    path = next(META.glob("torch_tensorrt-*.metadata"))
    requires, python = parse_core_metadata(path.read_text("utf-8"))
    record = PackageRecord("torch-tensorrt", "https://index/torch-tensorrt/", "2026-11-26", (
        ReleaseRecord("2.14.0", requires, python, ("py3-none-any",), metadata="pep658"),
        ReleaseRecord("2.13.0", ("torch<2.14.0,>=2.13.0",), python, ("py3-none-any",), metadata="pep658"),
    ), live=True)
    pairing = pairing_from(Request(published=(record,)), KB)
    assert pairing("torch-tensorrt", "2.14.1", "") == ("2.14.0", "https://index/torch-tensorrt/, read now")
    assert pairing("torch-tensorrt", "2.13.0", "") == ("2.13.0", "https://index/torch-tensorrt/, read now")
    assert pairing("torch-tensorrt", "2.13.0", ">=2.14") is None
    assert pairing("not-read-anywhere", "2.13.0", "") is None


# --- when it runs, and what it is given -------------------------------------------------------

def test_the_torch_stack_alone_starts_no_resolver_unless_asked() -> None:
    plain = Request()
    assert "shipped data" in skip_reason("auto", plain, reached=False)
    assert skip_reason("always", plain, reached=False) == ""
    assert "--no-confirm" in skip_reason("never", plain, reached=True)
    read = Request(requirements=("alpha",), published=(PackageRecord("alpha", "u", "d", ()),))
    assert skip_reason("auto", read, reached=True) == ""
    offline = Request(requirements=("alpha",), unread=(("alpha", "http://x could not be read (refused)"),))
    assert "could not be read (refused)" in skip_reason("auto", offline, reached=False)


class _Resolver(LiveHost):
    """The live host, with the resolver's answer scripted; what it was given is kept."""

    def __init__(self, answer: CommandResult) -> None:
        super().__init__(environ={"PATH": "/usr/bin"})
        self.answer = answer
        self.calls: List[Tuple[List[str], Optional[str], float]] = []

    def run(self, argv: Sequence[str], timeout: float = 5.0,
            env: Optional[Mapping[str, Optional[str]]] = None, stdin: Optional[str] = None) -> CommandResult:
        self.calls.append((list(argv), stdin, timeout))
        return CommandResult(list(argv), self.answer.returncode, self.answer.stdout, self.answer.stderr,
                             self.answer.timed_out)


PLAN = Plan(status="ok", platform="linux-x86_64", python="3.12", packages=(
    PackagePin("torch", "2.6.0", "cu126", index_url="http://idx/cu126", local_version="+cu126"),
    PackagePin("alpha", "1.0")), unplanned=("ftfy>=6",))


def test_uv_is_given_every_pin_the_torch_index_first_and_the_described_machine() -> None:
    host = _Resolver(CommandResult([], 0, stdout="alpha==1.0\nftfy==6.3.0\ntorch==2.6.0+cu126\n"))
    outcome = confirm_plan(host, PLAN, Request(), glibc="2.28", index=("http://mine/simple", "/etc/pip.conf"),
                           timeout=7)
    argv, stdin, timeout = host.calls[0]
    assert argv[1:4] == ["pip", "compile", "-"] and timeout == 7
    assert stdin == "torch==2.6.0+cu126\nalpha==1.0\nftfy>=6\n"
    for flag, value in (("--python-version", "3.12"), ("--python-platform", "x86_64-manylinux_2_28"),
                        ("--index", "http://idx/cu126"), ("--default-index", "http://mine/simple")):
        assert argv[argv.index(flag) + 1] == value
    assert outcome.status == "confirmed" and dict(outcome.resolved)["ftfy"] == "6.3.0"


def test_a_resolver_that_runs_too_long_or_cannot_reach_the_index_is_said() -> None:
    slow = confirm_plan(_Resolver(CommandResult([], None, timed_out=True)), PLAN, Request(), timeout=3)
    assert slow.status == "not-confirmed" and "did not finish within 3 s" in slow.reason
    offline = confirm_plan(_Resolver(CommandResult([], 2, stderr=UV_REFUSED)), PLAN, Request())
    assert offline.status == "not-confirmed" and "could not be reached" in offline.reason
    missing = confirm_plan(_Resolver(CommandResult([], 1, stderr=UV_10604)), PLAN, Request())
    assert missing.status == "not-confirmed" and "is on none of the indexes given" in missing.reason
    refused = confirm_plan(_Resolver(CommandResult([], 1, stderr=UV_CHAIN)), PLAN, Request(),
                           pairing=_pairs({}))
    assert refused.status == "conflict" and refused.pairs[0].package == "beta"
    assert refused.to_json()["needs"][0] == {"package": "beta", "version": ">=2.0",
                                             "requires": "torch==2.4.0"}
    marked = confirm_plan(_Resolver(CommandResult([], 1, stderr=UV_MARKERS)), PLAN, Request())
    assert marked.to_json()["needs"] == [{"package": "delta", "version": "", "requires": "torch==2.4.0",
                                          "markers": "sys_platform == 'linux'"}]


def test_without_uv_pip_resolves_in_a_dry_run_for_the_described_python(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("torchsmith.install.installers.uv.find_uv", lambda host: None)
    host = _Resolver(CommandResult([], 0, stdout="Would install alpha-1.0 torch-2.6.0+cu126\n"))
    described = Plan(status="ok", platform="linux-x86_64", python="3.7", packages=PLAN.packages)
    outcome = confirm_plan(host, described, Request())
    argv = host.calls[0][0]
    assert argv[1:5] == ["-m", "pip", "install", "--dry-run"] and "--target" in argv
    assert argv[argv.index("--python-version") + 1] == "3.7" and "--only-binary" in argv
    assert argv[argv.index("--extra-index-url") + 1] == "http://idx/cu126"
    assert outcome.status == "confirmed" and outcome.by == "pip install --dry-run"
    assert dict(outcome.resolved) == {"alpha": "1.0", "torch": "2.6.0+cu126"}
    assert confirm_mod.CONFIRM_SECONDS >= 30


def test_plan_json_of_the_torch_stack_says_it_was_not_confirmed_and_why(capsys: pytest.CaptureFixture[str]
                                                                        ) -> None:
    assert main(["plan", "--json", "--host", H100_HOST]) == 0
    confirmation = json.loads(capsys.readouterr().out)["data"]["confirmation"]
    assert confirmation["status"] == "skipped" and confirmation["command"] == []
    assert "--confirm" in confirmation["reason"]


def test_a_bad_confirm_timeout_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--host", H100_HOST, "--confirm-timeout", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--confirm-timeout must be more than 0 seconds, not -1" in err and "Traceback" not in err


def test_an_unreachable_index_is_a_could_not_confirm_without_starting_a_resolver(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")  # the discard port: refused
    code = main(["plan", "--json", "--host", H100_HOST, "some-unknown-kernels"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)["data"]
    assert code == 0 and data["confirmation"]["status"] == "not-confirmed"
    assert data["confirmation"]["command"] == [] and "could not be read" in data["confirmation"]["reason"]
    assert any(w.startswith("could not confirm the plan with the installer's resolver")
               for w in data["warnings"])


# --- the real resolvers, against the local index ------------------------------------------------

def _index(root: Path, torch: str, variant: str) -> None:
    """torch and torchvision as planned, plus alpha (no PEP 658 file) -> beta>=2 -> torch==2.4.0."""
    build_wheel(root / "pytorch" / variant, "torch", f"{torch}+{variant}")
    build_wheel(root / "simple", "alpha", "1.0", requires=["beta>=2"])
    for version, needs in (("2.0", "torch==2.4.0"), ("1.0", "torch>=2.0")):
        wheel = build_wheel(root / "simple", "beta", version, requires=[needs])
        wheel.with_name(wheel.name + ".metadata").write_text(
            f"Metadata-Version: 2.1\nName: beta\nVersion: {version}\nRequires-Dist: {needs}\n")


def _planned_torch(capsys: pytest.CaptureFixture[str]) -> Tuple[str, str]:
    assert main(["plan", "--json", "--no-confirm", "--host", H100_HOST, "torch"]) == 0
    data = json.loads(capsys.readouterr().out)["data"]
    return data["packages"][0]["version"], data["variant"]


@pytest.mark.slow
@pytest.mark.parametrize("resolver", ["uv", "pip"])
def test_the_real_resolver_finds_the_conflict_the_metadata_hid(
        resolver: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    torch, variant = _planned_torch(capsys)
    _index(tmp_path, torch, variant)
    if resolver == "pip":
        monkeypatch.setattr("torchsmith.install.installers.uv.find_uv", lambda host: None)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    with serve_index(tmp_path) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.index_url("simple"))
        monkeypatch.setenv("TORCHSMITH_TORCH_INDEX", f"{server.url}/pytorch")
        code = main(["plan", "--json", "--host", H100_HOST, "alpha"])
        data = json.loads(capsys.readouterr().out)["data"]
    confirmation = data["confirmation"]
    assert code == 3 and confirmation["status"] == "conflict", confirmation
    assert data["blocker"]["code"] == "resolver-conflict"
    first = confirmation["conflict"][0]
    assert f"beta 2.0 requires torch==2.4.0, but the plan installs torch {torch}+{variant}" in \
        first.replace("beta>=2.0", "beta 2.0")
    assert "no release of beta within beta>=2" in first or "pip" in first
    assert {d["change"] for d in data["alternatives"]} & {"add torch==2.4.0", "add beta==1.0"}
    # Metadata and wheels of the resolver's own reading only: nothing was installed.
    assert not (tmp_path / "target").exists()


@pytest.mark.slow
def test_a_plan_that_fits_is_confirmed_and_an_unreachable_index_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _index(tmp_path, "2.4.0", "cu121")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    with serve_index(tmp_path) as server:
        monkeypatch.setenv("PIP_INDEX_URL", server.index_url("simple"))
        monkeypatch.setenv("TORCHSMITH_TORCH_INDEX", f"{server.url}/pytorch")
        # beta's own metadata caps torch at 2.4.0: the plan fits, and uv says so.
        code = main(["plan", "--json", "--host", H100_HOST, "alpha", "beta", "torch"])
        data = json.loads(capsys.readouterr().out)["data"]
        assert code == 0 and data["confirmation"]["status"] == "confirmed", data["confirmation"]
        assert data["confirmation"]["resolved"]["beta"] == "2.0"
        assert any("resolved the whole request" in r for r in data["reasons"])
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    code = main(["plan", "--json", "--confirm", "--confirm-timeout", "30", "--host", H100_HOST, "alpha"])
    confirmation = json.loads(capsys.readouterr().out)["data"]["confirmation"]
    assert code == 0 and confirmation["status"] == "not-confirmed"
    assert "could not be reached" in confirmation["reason"] or "did not finish" in confirmation["reason"]
