"""Reading what the user asked for: requirement strings, -r files, pyproject.toml."""

from __future__ import annotations

import os

import pytest

from torchsmith.errors import KnowledgeBaseError, RequirementError
from torchsmith.kb import load_kb
from torchsmith.kb.documents import read_document
from torchsmith.plan.installed import parse_installed
from torchsmith.plan.request import (
    _dependencies_without_toml_parser,
    parse_requirement,
    parse_requirements,
    read_pyproject,
    read_requirements_file,
)
from torchsmith.plan.resolve import torch_index_url


def test_requirement_parts() -> None:
    want = parse_requirement("Torch_Scatter[full]>=2.1 ; python_version >= '3.8'")
    assert want.name == "torch-scatter"
    assert want.extras == frozenset({"full"})
    assert want.allows("2.1.2+pt25cu124")
    assert not want.allows("2.0.9")


@pytest.mark.parametrize("text", ["torch>>2", "torch==", "==2.1", "torch[", "torch @", "tor ch==1"])
def test_garbage_is_a_one_line_error(text: str) -> None:
    with pytest.raises(RequirementError) as info:
        parse_requirement(text)
    assert "\n" not in str(info.value)
    assert info.value.code == "requirement-invalid"


def test_direct_urls_are_refused() -> None:
    with pytest.raises(RequirementError, match="direct URL"):
        parse_requirement("torch @ https://example.invalid/torch.whl")


def test_two_lines_for_one_package_merge() -> None:
    (torch,) = parse_requirements(["torch>=2.1", "torch<2.5"])
    assert torch.allows("2.4.1") and not torch.allows("2.5.0") and not torch.allows("2.0.1")


def test_extra_only_requirements_are_skipped() -> None:
    wanted = parse_requirements(["numpy", "pytest; extra == 'test'"])
    assert [w.name for w in wanted] == ["numpy"]


def test_requirements_file_follows_includes_and_drops_options(tmp_path) -> None:
    (tmp_path / "base.txt").write_text("torchvision==0.16.*  # vision\n", encoding="utf-8")
    main = tmp_path / "requirements.txt"
    main.write_text(
        "--index-url https://example.invalid/simple\n"
        "-r base.txt\n"
        "# a comment\n"
        "torch<2.2 \\\n"
        "  ; python_version >= '3.8'\n"
        "-c constraints.txt\n",
        encoding="utf-8",
    )
    assert read_requirements_file(str(main)) == [
        "torchvision==0.16.*", "torch<2.2   ; python_version >= '3.8'"]


def test_requirements_file_garbage_names_the_line(tmp_path) -> None:
    path = tmp_path / "req.txt"
    path.write_text("torch\nthis is not ==== a requirement\n", encoding="utf-8")
    with pytest.raises(RequirementError, match=r"req\.txt:2"):
        read_requirements_file(str(path))


def test_missing_requirements_file(tmp_path) -> None:
    with pytest.raises(RequirementError, match="cannot read"):
        read_requirements_file(str(tmp_path / "nope.txt"))


def test_pyproject_dependencies(tmp_path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\ndependencies = [\n  "torch>=2.4",  # gpu\n'
                    '  "mmcv>=2.0.0,<2.2.0",\n]\n\n[tool.other]\nx = 1\n', encoding="utf-8")
    assert read_pyproject(str(path)) == ["torch>=2.4", "mmcv>=2.0.0,<2.2.0"]
    # The fallback reader used on Python < 3.11 without tomli agrees.
    assert _dependencies_without_toml_parser(path.read_text(encoding="utf-8"), str(path)) == [
        "torch>=2.4", "mmcv>=2.0.0,<2.2.0"]


def test_pyproject_problems(tmp_path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[project\nname=", encoding="utf-8")
    with pytest.raises(RequirementError):
        read_pyproject(str(bad))
    none = tmp_path / "none.toml"
    none.write_text('[tool.x]\na = 1\n', encoding="utf-8")
    with pytest.raises(RequirementError, match=r"no \[project\]"):
        read_pyproject(str(none))


def test_mirror_replaces_the_index_base() -> None:
    url = "https://download.pytorch.org/whl/cu126"
    assert torch_index_url(url, "http://127.0.0.1:8080/pytorch/") == "http://127.0.0.1:8080/pytorch/cu126"
    assert torch_index_url(url, None) == url
    assert torch_index_url("https://pypi.jetson-ai-lab.io/jp6/cu126", "http://m") == (
        "https://pypi.jetson-ai-lab.io/jp6/cu126")


def test_installed_report_parsing() -> None:
    report = ('{"torch": {"version": "2.5.1+cu124"}, "torch_installs": [], '
              '"companions": [{"name": "torchvision", "version": "0.20.1+cu124"}, {"name": ""}]}')
    assert parse_installed("noise\n" + report + "\n") == (("torch", "2.5.1+cu124"),
                                                         ("torchvision", "0.20.1+cu124"))
    assert parse_installed("not json") == ()
    assert parse_installed("") == ()
    assert parse_installed("[1, 2]") == ()


def test_plan_data_tables_are_sourced() -> None:
    for name in ("hsa_override", "companion_limits"):
        table = load_kb(packaged_only=True).document(name)
        for row in table["rows"]:
            assert all(table["sources"][i].startswith("https://") for i in row["source"])


def test_corrupt_plan_data_is_a_one_line_error(tmp_path) -> None:
    (tmp_path / "hsa_override.json").write_text('{"rows": [', encoding="utf-8")
    (tmp_path / "companion_limits.json").write_text('{"sources": {}, "rows": [{"source": ["nope"]}]}',
                                                    encoding="utf-8")
    (tmp_path / "downstream.json").write_text('[1, 2]', encoding="utf-8")
    with pytest.raises(KnowledgeBaseError, match="not valid JSON"):
        read_document("hsa_override", str(tmp_path), None)
    with pytest.raises(KnowledgeBaseError, match="row 0 field source"):
        read_document("companion_limits", str(tmp_path), None)
    with pytest.raises(KnowledgeBaseError, match="'rows' list"):
        read_document("downstream", str(tmp_path), None)
    with pytest.raises(KnowledgeBaseError, match="cannot read"):
        read_document("manylinux", str(tmp_path), None)


def test_docs_name_every_rejection_code() -> None:
    from torchsmith.plan import resolve as core

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "plan.md"), encoding="utf-8") as f:
        docs = f.read()
    codes = [core.ARCH, core.DRIVER, core.PYTHON, core.PLATFORM, core.CONFLICT, core.NO_GPU_BUILD,
             "cuda-libraries-not-needed"]
    assert all(f"`{code}`" in docs for code in codes)
