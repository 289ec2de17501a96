"""The resolver confirmation is given the user's whole pip configuration (uv reads none of it),
and a confirmed plan says so in its why without -v (cli/plan_confirm.py, cli/plan_text.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from tests.plan.test_confirm import H100_HOST, PLAN, _Resolver

from torchsmith.cli import main
from torchsmith.host import CommandResult
from torchsmith.install.confirm import Confirmation, confirm_plan
from torchsmith.kb.pipsources import pip_sources
from torchsmith.plan.model import Request

GLOBAL_CONF = ("[global]\nextra-index-url = http://mirror-a/simple\n  http://mirror-b/simple\n"
               "find-links = /opt/w1\n")
USER_CONF = "[install]\nfind-links = /home/me/wheels https://me.example/links/\n"


def _files(files: Dict[str, str]):  # type: ignore[no-untyped-def]
    return files.get


def test_pips_sources_are_read_as_pip_reads_them() -> None:
    env = {"HOME": "/home/me", "XDG_CONFIG_DIRS": "/etc/xdg"}
    files = {"/etc/xdg/pip/pip.conf": GLOBAL_CONF, "/home/me/.config/pip/pip.conf": USER_CONF}
    # A later file wins per option; a value is a whitespace-separated list (continuation lines too).
    assert pip_sources(env, _files(files)) == (("http://mirror-a/simple", "http://mirror-b/simple"),
                                               ("/home/me/wheels", "https://me.example/links/"))
    # The environment wins over every file; PIP_CONFIG_FILE=/dev/null reads none.
    env_only = {**env, "PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": "/srv/wheels",
                "PIP_EXTRA_INDEX_URL": "http://x/simple http://y/simple"}
    assert pip_sources(env_only, _files(files)) == (("http://x/simple", "http://y/simple"), ("/srv/wheels",))
    assert pip_sources({"PIP_CONFIG_FILE": "/dev/null"}, _files(files)) == ((), ())
    assert pip_sources(env, _files({"/etc/pip.conf": "[global\nbroken"})) == ((), ())
    # A PIP_CONFIG_FILE that exists replaces the user's files only: the global ones still apply
    # beneath it, and it wins where both set an option.
    own = {**files, "/srv/pip.conf": "[global]\nextra-index-url = http://own/simple\n"}
    assert pip_sources({**env, "PIP_CONFIG_FILE": "/srv/pip.conf"}, _files(own)) == (
        ("http://own/simple",), ("/opt/w1",))
    # One that does not exist is passed over, as pip does: the user's files are read again.
    assert pip_sources({**env, "PIP_CONFIG_FILE": "/srv/none.conf"}, _files(files)) == (
        ("http://mirror-a/simple", "http://mirror-b/simple"), ("/home/me/wheels", "https://me.example/links/"))


def test_uv_is_given_pips_extra_indexes_after_the_planned_ones_and_its_find_links() -> None:
    host = _Resolver(CommandResult([], 0, stdout="alpha==1.0\n"))
    confirm_plan(host, PLAN, Request(), pip_sources=(("http://mirror-a/simple",), ("/opt/w1", "/opt/w2")))
    argv = host.calls[0][0]
    assert argv.index("--index") < argv.index("--extra-index-url")
    assert argv[argv.index("--extra-index-url") + 1] == "http://mirror-a/simple"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--find-links"] == ["/opt/w1", "/opt/w2"]
    bare = _Resolver(CommandResult([], 0, stdout="alpha==1.0\n"))
    confirm_plan(bare, PLAN, Request())
    assert "--extra-index-url" not in bare.calls[0][0] and "--find-links" not in bare.calls[0][0]


class _Seen:
    def __init__(self, answer: Confirmation) -> None:
        self.answer = answer
        self.kwargs: List[Dict[str, Any]] = []

    def __call__(self, host: Any, plan: Any, request: Any, **kwargs: Any) -> Confirmation:
        self.kwargs.append(kwargs)
        return self.answer


CONFIRMED = Confirmation("confirmed", "uv pip compile resolved the whole request with the planned pins",
                         by="uv pip compile", resolved=(("torch", "2.9.1"), ("numpy", "2.3.0")), seconds=0.4)


def _plan(monkeypatch: pytest.MonkeyPatch, argv: List[str], seen: _Seen) -> int:
    monkeypatch.setattr("torchsmith.install.confirm.confirm_plan", seen)
    return main(["plan", "--confirm", "--host", H100_HOST, *argv])


def test_the_cli_passes_pips_configuration_unless_uv_has_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(GLOBAL_CONF)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("PIP_FIND_LINKS", "/srv/wheels")
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    seen = _Seen(CONFIRMED)
    assert _plan(monkeypatch, ["--json", "torch"], seen) == 0
    assert seen.kwargs[-1]["pip_sources"] == (("http://mirror-a/simple", "http://mirror-b/simple"),
                                              ("/srv/wheels",))
    capsys.readouterr()
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://uv-own/simple")  # uv reads its own configuration
    assert _plan(monkeypatch, ["--json", "torch"], seen) == 0
    assert seen.kwargs[-1]["pip_sources"] == ((), ())
    assert json.loads(capsys.readouterr().out)["data"]["confirmation"]["status"] == "confirmed"


def test_a_confirmed_plan_says_so_first_in_its_why_without_verbose(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    assert _plan(monkeypatch, ["torch"], _Seen(CONFIRMED)) == 0
    out = capsys.readouterr().out
    why = out.split("Why:\n", 1)[1].splitlines()
    assert why[0] == "  - uv pip compile resolved the whole request (2 packages, 0.4 s)"
    # One line, said once, and the why still ends within five lines plus its "-v" line.
    assert out.count("resolved the whole request") == 1
    assert _plan(monkeypatch, ["-v", "torch"], _Seen(CONFIRMED)) == 0
    assert capsys.readouterr().out.count("resolved the whole request") == 1


def test_a_plan_not_confirmed_has_no_such_line(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    outcome: Optional[Confirmation] = Confirmation("not-confirmed", "uv pip compile failed: exit 2",
                                                   by="uv pip compile")
    assert outcome is not None
    assert _plan(monkeypatch, ["torch"], _Seen(outcome)) == 0
    out = capsys.readouterr()
    assert "resolved the whole request" not in out.out
