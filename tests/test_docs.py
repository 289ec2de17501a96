"""The docs keep up with the code: every command has help, a README row and a page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchsmith.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

# command -> the page under docs/ that documents it in depth
PAGES = {
    "probe": "host-profile.md", "plan": "plan.md", "matrix": "plan.md", "install": "install.md",
    "guard": "guard.md", "doctor": "doctor.md", "explain": "explain.md", "kb": "kb.md",
    "fleet": "cluster.md", "build-env": "cluster.md", "export": "install.md", "watch": "watch.md",
}


@pytest.mark.parametrize("name", [c[0] for c in COMMANDS])
def test_every_command_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    assert f"usage: torchsmith {name}" in capsys.readouterr().out


@pytest.mark.parametrize("name", [c[0] for c in COMMANDS if c[0] != "summary"])
def test_every_command_is_in_the_readme_and_has_a_page(name: str) -> None:
    assert re.search(rf"`torchsmith {re.escape(name)}\b", README), name
    page = ROOT / "docs" / PAGES[name]
    assert page.is_file(), page
    assert f"torchsmith {name}" in page.read_text()


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    assert any("pip install" in b and "torchsmith" in b for b in blocks)
    assert any(b.strip() == "./scripts/test" for b in blocks)
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_docs_links_point_at_files_that_exist() -> None:
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).resolve().is_file(), (doc, target)


@pytest.mark.parametrize("field", ["confirmed_by", "contradicted_by"])
def test_explain_page_names_every_check_a_signature_may_name(field: str) -> None:
    from torchsmith.explain.catalog import CONFIRMATIONS, CONTRADICTIONS

    page = (ROOT / "docs" / "explain.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith(f"| `{field}` |"))
    known = CONFIRMATIONS if field == "confirmed_by" else CONTRADICTIONS
    assert sorted(name for name in known if f"`{name}`" not in row) == []
