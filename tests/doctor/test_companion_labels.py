"""The doctor reads companions' build labels with kb/buildlabel, the planner's one reader.

Packed torch digits (PyG's ``+pt210cu121``, NATTEN's ``+torch250cu124``) are read against the
data's torch releases; digits that name two releases (or none) are said to be unread, never
guessed. Label shapes: PyG's wheel index (https://data.pyg.org/whl/, ``torch_scatter-2.1.2+pt21cu121``),
NATTEN's v0.17.1 release notes (https://github.com/SHI-Labs/NATTEN/releases/tag/v0.17.1,
``torch210cu121``, ``torch210cpu``) and PyTorch 1.13's PyG wheels (``+pt113cu117``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from tests.doctor.envs import cpu_host, gpu_host, report

from torchsmith.doctor import diagnose_report
from torchsmith.doctor.build import companion_built_for
from torchsmith.doctor.checks import run_checks
from torchsmith.kb import KnowledgeBase, load_kb
from torchsmith.kb.buildlabel import torch_releases

KB = load_kb(packaged_only=True)


def companion(name: str, version: str) -> Dict[str, Any]:
    return {"name": name, "version": version, "torch_requires": [], "metadata": f"/site/{name}.dist-info",
            "url": None}


def codes(found: List[Any]) -> Dict[str, Any]:
    return {f.code: f for f in found}


def test_packed_digits_are_read_against_the_data_and_never_guessed() -> None:
    known = torch_releases(KB)
    # One reading: read without the data.
    assert companion_built_for(companion("torch-scatter", "2.1.2+pt24cu121")).wants == "==2.4.*"
    # 1.13 or 1.1.3: only 1.13 is a release.
    assert companion_built_for(companion("torch-scatter", "2.1.0+pt113cu117")).unread
    assert companion_built_for(companion("torch-scatter", "2.1.0+pt113cu117"), known).wants == "==1.13.*"
    # 2.1.0 and 2.10 are both releases; only 2.1.0 had cu121.
    assert companion_built_for(companion("natten", "0.17.1+torch210cu121"), known).wants == "==2.1.0"
    # Both had CPU builds: unread, and it says why.
    unread = companion_built_for(companion("natten", "0.17.1+torch210cpu"), known)
    assert (unread.wants, unread.variant) == (None, "cpu")
    assert unread.unread == "torch210: torch 2.10 or torch 2.1.0"


def test_an_ambiguous_label_is_said_unread_and_is_no_mismatch() -> None:
    # The old reader took pt210 as 2.10 and called this a mismatch with torch 2.1.0.
    rep = report("2.1.0+cpu", None, companions=[companion("torch-scatter", "2.1.2+pt210cpu")])
    found = codes(run_checks(rep, cpu_host(), KB))
    assert "companion-abi-mismatch" not in found
    hit = found["companion-build-unread"]
    assert hit.severity == "warning"
    assert hit.facts[1].text == ("could not read which torch torch-scatter 2.1.2+pt210cpu is built for "
                                 "(pt210: torch 2.10 or torch 2.1.0)")
    assert hit.facts[1].source == "/site/torch-scatter.dist-info (version 2.1.2+pt210cpu)"


def test_the_data_is_loaded_only_for_digits_with_two_readings() -> None:
    calls: List[int] = []

    def loader() -> Optional[KnowledgeBase]:
        calls.append(1)
        return KB

    plain = report("2.5.1+cpu", None, companions=[companion("torch-scatter", "2.1.2+pt25cpu")])
    assert codes(run_checks(plain, cpu_host(), loader)) == {}
    assert calls == []
    packed = report(companions=[companion("torch-scatter", "2.1.0+pt113cu117")])
    hit = codes(run_checks(packed, gpu_host(), loader))["companion-abi-mismatch"]
    assert calls
    said = "torch-scatter 2.1.0+pt113cu117 is built for torch ==1.13.*"
    assert any(f.text.startswith(said) for f in hit.facts)


def test_without_the_data_an_ambiguous_label_stays_unread() -> None:
    rep = report(companions=[companion("torch-scatter", "2.1.0+pt113cu117")])
    diagnosis = diagnose_report(rep, gpu_host(), lambda: None)
    found = codes(diagnosis.findings)
    assert "companion-build-unread" in found
    # Its CUDA build is still read; which torch it needs is not.
    assert [f.text for f in found["companion-abi-mismatch"].facts[1:]] == [
        "torch-scatter 2.1.0+pt113cu117 is a cu117 build, torch is cu124"]
    [entry] = diagnosis.environment["companions"]
    assert entry["built_for_torch"] is None
    assert entry["build_unread"] == "pt113: torch 1.13 or torch 1.1.3"
