"""Packed torch digits in local labels and file names (``+torch250cu118``, ``pt210``) read
against the torch releases the data knows: a reading that names a real release wins; two, or
none, leave the torch unread, and the plan says so instead of guessing.

Every label below is one a project publishes or people install (the page is cited beside it).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import pytest
from tests.plan.plan_hosts import host

from torchsmith.kb import load_kb
from torchsmith.kb.pkgmeta import PackageRecord, ReleaseRecord, TorchBuild, packed_torch, torch_build
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.published import torch_releases
from torchsmith.plan.resolve import resolve

KB = load_kb(packaged_only=True)
KNOWN = torch_releases(KB)
NATTEN_0171 = "https://github.com/SHI-Labs/NATTEN/releases (v0.17.1)"
NATTEN_0216 = "https://github.com/SHI-Labs/NATTEN/releases/tag/v0.21.6"
NATTEN_WINDOWS = "https://huggingface.co/lldacing/NATTEN-windows/tree/main"
COSMOS_15 = "https://nvidia-cosmos.github.io/cosmos-dependencies/v1.5.0/natten"
COSMOS_14 = "https://nvidia-cosmos.github.io/cosmos-dependencies/v1.4.0/simple/natten"
CRYOFM = "https://github.com/ByteDance-Seed/cryofm (README: natten==0.17.5+torch250cu124 -f whl.natten.org)"
PYG = "https://data.pyg.org/whl/torch-2.8.0+cu128.html"


@pytest.mark.parametrize(("label", "torch", "cuda", "source"), [
    ("natten==0.17.1+torch210cu121", "2.1.0", "12.1", NATTEN_0171),  # 2.10 had no cu121 build
    ("natten==0.17.1+torch210cu118", "2.1.0", "11.8", NATTEN_0171),
    ("natten==0.17.1+torch200cu117", "2.0.0", "11.7", NATTEN_0171),  # "2.00" is no version
    ("natten==0.17.1+torch230cu121", "2.3.0", "12.1", NATTEN_0171),
    ("natten==0.17.5+torch250cu124", "2.5.0", "12.4", CRYOFM),  # 2.50 is no release
    ("natten==0.21.6+torch2100cu130", "2.10.0", "13.0", NATTEN_0216),
    ("natten==0.21.6+torch2110cu128", "2.11.0", "12.8", NATTEN_0216),
    ("natten==0.21.6+torch2120cu132", "2.12.0", "13.2", NATTEN_0216),
    ("natten-0.17.3+torch241cu124-cp311-cp311-win_amd64.whl", "2.4.1", "12.4", NATTEN_WINDOWS),
    ("natten-0.17.5+torch260+cu126", "2.6.0", "12.6", NATTEN_WINDOWS),  # its newest upload's name
    ("natten-0.21.6.dev5+cu128.torch210-cp313-cp313-linux_x86_64.whl", "2.10", "12.8", COSMOS_15),
    ("natten-0.21.6.dev6+cu130.torch210-cp313-cp313-linux_aarch64.whl", "2.10", "13.0", COSMOS_15),
    ("natten-0.21.5.dev9+cu130.torch29-cp312-cp312-linux_x86_64.whl", "2.9", "13.0", COSMOS_14),
    ("torch_scatter-2.1.2+pt28cu128-cp311-cp311-linux_x86_64.whl", "2.8", "12.8", PYG),
])
def test_packed_digits_read_as_the_release_that_exists(label: str, torch: str, cuda: str,
                                                       source: str) -> None:
    build = torch_build(label, KNOWN)
    assert build is not None and not build.unread, source
    assert (build.torch, build.cuda) == (torch, cuda), source


@pytest.mark.parametrize(("label", "said"), [
    # torch 2.1.0 and 2.10 both have a CPU build: the digits name two real releases.
    ("natten==0.17.1+torch210cpu", "torch 2.10 or torch 2.1.0"),  # NATTEN v0.17.1's release notes
    ("demo-1.0+torch99cu121", "no torch release in the data"),
])
def test_digits_naming_two_releases_or_none_are_not_read(label: str, said: str) -> None:
    build = torch_build(label, KNOWN)
    assert build is not None and build.torch == "" and said in build.unread
    assert not build.fits("2.1.0", "cpu", None, None) and not build.fits("2.10.0", "cpu", None, None)
    assert "unread torch" in build.label


def test_without_the_data_only_digits_with_one_reading_are_read() -> None:
    assert packed_torch("28", "cu128", None) == ("2.8", ("2.8",))
    torch, readings = packed_torch("250", "cu124", None)
    assert torch == "" and set(readings) == {"2.50", "2.5.0"}


def test_a_newer_release_in_the_data_changes_the_reading() -> None:
    """Readings follow the data, not a fixed rule: torch 2.50 in the data makes ``torch250`` two."""
    from torchsmith.kb.pkgmeta import TorchReleases

    more = TorchReleases([("2.5.0", ["cu124", "cpu"]), ("2.50.0", ["cu124"])])
    assert packed_torch("250", "cu124", more)[0] == ""
    assert packed_torch("250", "cu124", TorchReleases([("2.5.0", ["cu124"])]))[0] == "2.5.0"


# --- planned -----------------------------------------------------------------------------------

def _natten(*labels: str) -> PackageRecord:
    releases = tuple(ReleaseRecord(f"0.17.1+{label}", (), ">=3.8", ("cp311-cp311-linux_x86_64",), False,
                                   "none", url="https://whl.natten.org/") for label in labels)
    return PackageRecord("natten", "https://whl.natten.org/", "2026-11-26", releases, live=True)


def _plan(machine: Dict[str, object], requirement: str, record: PackageRecord) -> Plan:
    request = Request(requirements=(requirement,), explicit=True, published=(record,))
    return resolve(host(**machine), request, KB)  # type: ignore[arg-type]


def _pin(plan: Plan, name: str) -> Optional[Tuple[str, str]]:
    found = next((p for p in plan.packages if p.name == name), None)
    return (found.version, found.local_version or "") if found is not None else None


def test_a_natten_wheel_pairs_with_the_torch_its_digits_name() -> None:
    record = _natten("torch230cu121", "torch210cu121", "torch210cu118")
    plan = _plan({"python": "3.11", "gpus": ["8.0:NVIDIA A100"], "driver": "550.54.15"}, "natten", record)
    assert plan.ok, plan.reasons
    torch = _pin(plan, "torch")
    assert torch is not None and torch[0].startswith("2.3.") and torch[1] == "+cu121"
    assert _pin(plan, "natten") == ("0.17.1", "+torch230cu121")


def test_a_wheel_whose_torch_is_unread_is_said_and_never_paired_by_a_guess() -> None:
    plan = _plan({"python": "3.11"}, "natten", _natten("torch210cpu"))
    assert plan.ok, plan.reasons
    assert _pin(plan, "natten") is None and "natten" in plan.unplanned
    warning = next(w for w in plan.warnings if "could not read which torch natten" in w)
    assert "torch210" in warning and "2.1.0" in warning and "2.10" in warning
    assert "installed last from your configured index" in warning
    # Beside a release that can be read, the unread one is only said: the readable one is planned.
    both = _plan({"python": "3.11"}, "natten", _natten("torch210cpu", "torch230cpu"))
    assert _pin(both, "natten") == ("0.17.1", "+torch230cpu")
    said = next(w for w in both.warnings if "could not read which torch natten" in w)
    assert "installed last" not in said


def test_an_unread_build_is_still_a_build() -> None:
    """It is a companion (its wheels encode a build), only its torch is unknown."""
    assert isinstance(torch_build("torch210cpu", KNOWN), TorchBuild)
    assert _natten("torch210cpu").read_against(KNOWN).companion
