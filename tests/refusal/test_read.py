"""One reader of resolver refusals (src/torchsmith/refusal/): what each installer's own words say,
read into one structure, and read the same way by ``explain`` and by ``plan --confirm``/``install``.

The texts under real/ are real pip 23.2.1, uv 0.13.9 and py-rattler 0.28.0 refusals, produced here
against the tests' local index and a local channel (tests/support); each names how in its first line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from tests.plan.test_confirm import UV_10604, UV_CHAIN, UV_REFUSED
from tests.plan.test_dependency_doors import PIP_CHAIN
from tests.support.fixtures import isolated_environ
from tests.support.pkgindex import build_wheel, serve_index

from torchsmith.explain.extract import extract
from torchsmith.kb import load_kb
from torchsmith.plan.conflict_words import parse_failure
from torchsmith.refusal import read

KB = load_kb(packaged_only=True)
HERE = Path(__file__).resolve().parent
EXPLAIN = HERE.parent / "explain"
REAL = HERE / "real"


def _real(name: str) -> str:
    return (REAL / f"{name}.txt").read_text()


def _needs(text: str) -> List[Tuple[str, str, str, str, str]]:
    return [(r.who, r.who_version, r.what, r.spec, r.markers) for r in read(text).needs()]


def _asked(text: str) -> List[str]:
    return [r.what + r.spec for r in read(text).requested()]


# --- pip ----------------------------------------------------------------------------------------

def test_pips_range_said_with_and_is_one_range_and_its_markers_are_kept() -> None:
    # pip's format_for_error joins a range's parts with " and ": "gamma 1.0 depends on torch<2.0 and >=1.8"
    assert _needs(_real("pip-range")) == [("gamma", "1.0", "torch", "<2.0,>=1.8", "")]
    assert _asked(_real("pip-range")) == ["torch==2.6.0+cu126"]
    assert _needs(_real("pip-markers")) == [("delta", "1.0", "torch", "==2.4.0", 'sys_platform == "linux"')]


def test_pips_chain_who_asked_and_the_conflict_list_without_its_user() -> None:
    # "Collecting beta>=2 (from alpha)" says alpha asked for beta; pip's list may hold no user line.
    assert _needs(_real("pip-chain")) == [("beta", "2.0", "torch", "==2.4.0", ""),
                                          ("alpha", "", "beta", ">=2", "")]
    assert _needs(_real("pip-companions")) == [("torchvision", "0.21.0", "torch", "==2.6.0", ""),
                                               ("torchaudio", "2.5.0", "torch", "==2.5.0", "")]


def test_pips_check_after_an_install_python_and_what_the_index_had() -> None:
    installed = read(_real("pip-installed"))
    assert _needs(_real("pip-installed")) == [("kappa", "1.0", "torch", "==2.4.0", "")]
    assert [(h.name, h.version) for h in installed.installed] == [("torch", "2.6.0+cu126")]
    python = read(_real("pip-python"))
    assert _needs(_real("pip-python")) == [("eps", "", "python", ">=3.99", "")]
    assert [(h.name, h.version) for h in python.installed] == [("python", "3.11.7")]
    # "Ignored the following versions that require a different python version: 1.0 Requires-Python >=3.99"
    assert _needs(_real("pip-requires-python")) == [("eta", "1.0", "python", ">=3.99", ""),
                                                    ("eta", "1.1", "python", ">=3.99", "")]
    version = read(_real("pip-version"))
    assert version.missing == ("torch==9.9",)
    assert [o.said for o in version.offers] == ["torch versions: 2.4.0, 2.6.0+cu126"]
    assert read(_real("pip-missing")).missing == ("nosuchpkg",)


def test_what_no_index_had_says_which_installer_said_so_and_what_pip_listed() -> None:
    pip = read(_real("pip-version")).unavailable
    assert [(m.installer, m.said, m.listed) for m in pip] == [
        ("pip", "torch==9.9", ("2.4.0", "2.6.0+cu126")), ("pip", "torch==9.9", ())]
    # pip names the requirements file between the requirement and its listing (factory.py "(from {parent})").
    parent = ("ERROR: Could not find a version that satisfies the requirement torch==9.9 (from -r req.txt "
              "(line 1)) (from versions: 2.4.0)\n")
    assert [m.listed for m in read(parent).unavailable] == [("2.4.0",)]
    assert [m.listed for m in read(parent.replace("2.4.0", "none")).unavailable] == [()]
    # A listing cut short (a log or report that ends inside it) keeps its whole items only.
    cut = parent.replace("2.4.0)\n", "2.4.0, 2.6")
    assert [m.listed for m in read(cut).unavailable] == [("2.4.0",)]
    assert [(m.installer, m.said) for m in read(_real("uv-version")).unavailable] == [("uv", "torch==9.9")]


# --- uv -----------------------------------------------------------------------------------------

def test_uvs_premises_are_read_and_its_conclusions_are_not() -> None:
    # "we can conclude that all versions of alpha depend on torch==2.4.0" is uv's inference.
    assert _needs(_real("uv-chain")) == [("beta", ">=2.0", "torch", "==2.4.0", ""),
                                         ("alpha", "", "beta", ">=2", "")]
    assert _asked(_real("uv-chain")) == ["alpha", "torch==2.6.0+cu126"]
    assert _needs(_real("uv-range")) == [("gamma", "", "torch", ">=1.8,<2.0", "")]
    assert _needs(_real("uv-markers")) == [("delta", "", "torch", "==2.4.0", "sys_platform == 'linux'")]
    assert ("torch", "==2.4.0") not in [(r.what, r.spec) for r in read(_real("uv-markers")).requested()]


def test_uvs_missing_python_and_available_versions() -> None:
    assert read(_real("uv-missing")).missing == ("nosuchpkg",)
    assert read(_real("uv-version")).missing == ("torch==9.9",)
    assert _needs(_real("uv-requires-python")) == [("eta", "", "python", ">=3.99", "")]
    requested = read(_real("uv-requires-python")).installed  # "the requested Python version (>=3.11)"
    assert [(h.name, h.version) for h in requested] == [("python", ">=3.11")]
    python = read(_real("uv-python"))
    assert _needs(_real("uv-python")) == [("eps", "==1.0", "python", ">=3.99", "")]
    assert [o.said for o in python.offers] == ["only eps==1.0 is available"]
    wheels = read((EXPLAIN / "corpus" / "uv-no-matching-wheel--1.txt").read_text())
    assert [o.said.split(" (")[0] for o in wheels.offers] == [
        "torch==2.6.0 has no wheels with a matching platform tag", "Wheels are available for `torch`"]
    wrapped = read(UV_10604)  # markers in braces, wrapped inside them
    markers = "platform_machine == 'x86_64' and sys_platform == 'linux'"
    assert [(r.who, r.what, r.spec, r.markers) for r in wrapped.needs()] == [
        ("torch", "nvidia-cudnn-cu12", "==9.1.0.70", markers)]


def test_uvs_range_of_several_segments_and_the_versions_it_found() -> None:
    # report.rs writes a range with holes as "one of:" and one segment a line; either holds.
    assert _needs(_real("uv-hole")) == [("zeta", "", "torch", "<2.4.0||>2.4.0", "")]
    assert _asked(_real("uv-hole")) == ["zeta", "torch==2.4.0"]
    assert _needs(_real("pip-hole")) == [("zeta", "1.0", "torch", "!=2.4.0", "")]
    offers = [o.said for o in read(_real("uv-wheels")).offers]
    assert offers[:2] == [
        "only the following versions of torch are available: torch<=2.3.0 torch>=2.4",
        "torch<=2.3.0 has no wheels with a matching Python implementation tag (e.g., `cp311`)"]
    assert offers[2].startswith("You require CPython 3.11 (`cp311`), but we only found wheels for `torch` "
                                "(v2.3.0)")


def test_explain_says_the_structure_in_words() -> None:
    from torchsmith.explain.readout import read_lines

    lines = read_lines(extract(_real("pip-markers"), KB))
    assert 'pip: delta 1.0 needs torch==2.4.0 (where sys_platform == "linux")' in lines
    assert "pip: the request needs torch==2.6.0+cu126" in lines
    assert "pip: installed: torch 2.6.0+cu126" in read_lines(extract(_real("pip-installed"), KB))
    assert "pip: torch versions: 2.4.0, 2.6.0+cu126" in read_lines(extract(_real("pip-version"), KB))


def test_explain_concludes_from_a_range_as_from_a_pin() -> None:
    from torchsmith.explain.reason import conclusions

    assert conclusions(extract(_real("pip-range"), KB), {}, KB) == [
        "gamma 1.0 requires torch<2.0,>=1.8, which torch 2.6.0+cu126 is outside"]
    assert conclusions(extract(_real("uv-range"), KB), {}, KB) == [
        "gamma requires torch>=1.8,<2.0, which torch 2.6.0+cu126 is outside"]
    assert conclusions(extract(_real("pip-chain"), KB), {}, KB) == ["beta 2.0 pins torch==2.4.0"]


def test_a_name_or_specifier_wrapped_inside_the_word_is_one_word() -> None:
    # pixi (prefix-dev/pixi#3193) wraps with the textwrap crate, which also breaks after a hyphen.
    text = (" Error: \n  × failed to solve the pypi requirements of 'default' 'linux-64'\n"
            "  ╰─▶ Because there is no version of pytorch-triton{platform_machine == 'x86_64' and "
            "sys_platform == 'linux'}\n      ==3.2.0+git0d4682f0 and torch>=2.7.0.dev20250105+cu124 "
            "depends on pytorch-\n      triton{platform_machine == 'x86_64'}==3.2.0+git0d4682f0, we can "
            "conclude that\n      torch>=2.7.0.dev20250105+cu124 cannot be used.\n")
    refusal = read(text)
    assert refusal.missing == ("pytorch-triton==3.2.0+git0d4682f0",)
    assert _needs(text) == [("torch", ">=2.7.0.dev20250105+cu124", "pytorch-triton", "==3.2.0+git0d4682f0",
                             "platform_machine == 'x86_64'")]
    # Counter-case: a marker's own operator at a line start stays apart from the word before it.
    wrapped_marker = text.replace("pytorch-triton{platform_machine == 'x86_64'}",
                                  "pytorch-triton{platform_machine\n      == 'x86_64'}")
    assert _needs(wrapped_marker)[0][4] == "platform_machine == 'x86_64'"


def test_a_coloured_refusal_reads_as_a_plain_one() -> None:
    # uv under FORCE_COLOR colours its labels, tags and package names in its hints
    coloured = read(_real("uv-color"))
    assert "\x1b[" in _real("uv-color") and "\x1b[36mtorch\x1b[39m" in _real("uv-color-hint")
    assert [(r.who, r.what, r.spec, r.markers) for r in coloured.requirements] == [
        ("delta", "torch", "==2.4.0", "sys_platform == 'linux'"), ("", "delta", "", ""),
        ("", "torch", "==2.5.0", "")]
    offers = [o.said for o in read(_real("uv-color-hint")).offers]
    assert offers[-1].startswith("You require CPython 3.11 (`cp311`), but we only found wheels for `torch` "
                                 "(v2.3.0)")


def test_prose_that_says_depends_on_is_no_requirement() -> None:
    text = ("I have a CI pipeline that depends on the Linux CPU version of PyTorch and downloads from "
            "https://download.pytorch.org/whl/cpu. The CI script failed.\n")
    assert read(text).requirements == ()


# --- conda, mamba, pixi ---------------------------------------------------------------------------

def test_libmambas_tree_names_who_requires_what() -> None:
    text = (EXPLAIN / "corpus" / "conda-pytorch-cuda-unavailable--1.txt").read_text()
    refusal = read(text)
    assert ("pytorch-cuda", "11.7**", "cuda", "11.7.*") in [(r.who, r.who_version, r.what, r.spec)
                                                           for r in refusal.needs()]
    assert [r.said for r in refusal.requested()] == ["pytorch-cuda 11.7**"]
    assert "cuda 11.7.*" in refusal.missing  # "which does not exist (perhaps a missing channel)"


def test_libsolvs_constraint_and_the_virtual_package_the_system_has() -> None:
    refusal = read((EXPLAIN / "corpus" / "conda-cuda-driver-too-old--1.txt").read_text())
    assert [(r.who, r.who_version, r.what, r.spec) for r in refusal.needs()] == [
        ("cudatoolkit", "11.0.3", "__cuda", ">=11.0")]
    assert [(h.name, h.version) for h in refusal.installed] == [("__cuda", "10.2")]


def test_resolvos_tree_from_py_rattler() -> None:
    cuda = read(_real("rattler-cuda"))
    assert [(r.installer, r.who, r.who_version, r.what, r.spec) for r in cuda.requirements] == [
        ("rattler", "", "", "pytorch", "==2.5.1 cuda*"), ("rattler", "pytorch", "2.5.1", "__cuda", ">=12.6")]
    assert cuda.missing == ("__cuda >=12.6",)
    companion = read(_real("rattler-companion"))
    assert ("torchvision", "0.20.1", "pytorch", "==2.5.1 cuda*") in [
        (r.who, r.who_version, r.what, r.spec) for r in companion.needs()]
    assert "pytorch 2.5.1" in [o.said for o in companion.offers]


def test_condas_chains_say_who_requires_what() -> None:
    # conda's own words (conda/exceptions.py UnsatisfiableError), as in pytorch/test-infra#4564
    text = (EXPLAIN / "public" / "none--8.txt").read_text()
    assert [(r.who, r.what, r.spec) for r in read(text).requirements] == [
        ("", "pytorch", "==2.2.0.dev20230910"), ("pytorch", "pytorch-mutex", "==1.0[build='cuda|cpu']")]


# --- one reading for both callers -------------------------------------------------------------------

def _texts() -> Iterator[Tuple[str, str]]:
    """Every text the tests hold that a resolver may have written (the sealed field part is not read)."""
    for folder in ("corpus", "public", "negative"):
        for path in sorted((EXPLAIN / folder).glob("*.txt")):
            yield f"{folder}/{path.name}", path.read_text()
    dev = (EXPLAIN / "field" / "dev" / "texts.jsonl").read_text().splitlines()
    for number, line in enumerate(dev):
        if line.strip():
            yield f"dev:{number}", json.loads(line)["text"]
    for path in sorted(REAL.glob("*.txt")):
        yield f"real/{path.name}", path.read_text()
    yield from (("UV_10604", UV_10604), ("UV_CHAIN", UV_CHAIN), ("UV_REFUSED", UV_REFUSED),
                ("PIP_CHAIN", PIP_CHAIN))


def _both(text: str) -> Tuple[Dict[str, Set[object]], Dict[str, Set[object]]]:
    """What explain and what plan read from one text, in the same terms."""
    extracted = extract(text, KB)
    failure = parse_failure(text)
    explained = {
        "needs": {(c.who_name, c.who_version, c.what, c.spec, c.markers) for c in extracted.conflicts
                  if c.who not in ("user", "installed")},
        "asked": {c.wants for c in extracted.conflicts if c.who == "user"},
        "missing": set(extracted.not_found)}
    planned = {"needs": {(n.who, n.who_version, n.what, n.spec, n.markers) for n in failure.needs},
               "asked": set(failure.required), "missing": set(failure.missing)}
    return explained, planned


def test_every_refusal_the_tests_hold_is_read_the_same_by_explain_and_plan() -> None:
    read_any = 0
    for name, text in _texts():
        explained, planned = _both(text)
        assert explained == planned, name
        read_any += any(explained.values())
    assert read_any >= 70  # the texts above hold this many refusals with facts


@pytest.mark.slow
def test_real_pip_and_uv_refusals_are_read_the_same_by_both(tmp_path: Path, uv_bin: str) -> None:
    build_wheel(tmp_path / "simple", "torch", "2.4.0")
    build_wheel(tmp_path / "simple", "gamma", "1.0", requires=["torch>=1.8,<2.0; sys_platform == 'linux'"])
    env = isolated_environ(tmp_path / "cache", dict(__import__("os").environ))
    with serve_index(tmp_path) as server:
        asked = "gamma\ntorch==2.4.0\n"
        uv = subprocess.run([uv_bin, "pip", "compile", "-", "--index-url", server.index_url("simple"),
                             "--python-version", "3.11"], input=asked, capture_output=True, text=True,
                            env=env, check=False)
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                              "--index-url", server.index_url("simple"), "gamma", "torch==2.4.0"],
                             capture_output=True, text=True, env=env, check=False)
    assert uv.returncode and pip.returncode
    # uv: "torch{sys_platform == 'linux'}>=1.8,<2.0"; pip: "torch<2.0 and >=1.8; sys_platform == "linux""
    expected = {"uv": ("", ">=1.8,<2.0", "sys_platform == 'linux'"),
                "pip": ("1.0", "<2.0,>=1.8", 'sys_platform == "linux"')}
    for text in (uv.stderr, pip.stdout + pip.stderr):
        explained, planned = _both(text)
        assert explained == planned, text
        (need,) = read(text).needs()
        assert (need.who, need.what) == ("gamma", "torch"), text
        assert (need.who_version, need.spec, need.markers) == expected[need.installer], text
        assert [r.what + r.spec for r in read(text).requested()][-1] == "torch==2.4.0", text
