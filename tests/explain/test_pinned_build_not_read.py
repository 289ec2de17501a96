"""uv's report that it found no version of the local build (pytorch-triton==X+gitHASH) a torch from a
PyTorch index pins (crates/uv-resolver/src/pubgrub/report.rs: "there is no version of ... and torch
... depends on ..."), wrapped as uv prints it. Texts written from that format; counter-cases where
torch could come from PyPI, the pinned version is a plain one, or the names differ."""

from __future__ import annotations

from typing import List

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract

_MARK = "{{platform_machine == 'x86_64' and sys_platform == 'linux'}}"  # braces doubled for format
_UV = ("  × No solution found when resolving dependencies:\n"
       "  ╰─▶ Because there is no version of pytorch-triton" + _MARK + "\n"
       "      ==3.2.0+git0d4682f0 and {torch} depends on pytorch-\n"
       "      triton" + _MARK + "=={pinned}, we can conclude that {torch} cannot be used.\n"
       "      And because your project depends on torch, we can conclude that your project's requirements\n"
       "      are unsatisfiable.\n")
_NIGHTLY = "torch>=2.7.0.dev20250105+cu124,<=2.7.0.dev20250124+cu124"


def kinds(text: str) -> List[str]:
    return [e.kind for e in extract(text, KB).installer_errors]


def test_a_local_build_a_pytorch_index_torch_pins_that_uv_found_nowhere_is_an_index_not_read() -> None:
    for torch in (_NIGHTLY, "torch==2.6.0+cu124", "torch>=2.8.0.dev20250601"):
        text = _UV.format(torch=torch, pinned="3.2.0+git0d4682f0")
        assert "index-not-given" in kinds(text), torch
        assert stated(text) == ["pytorch-index-not-given"], torch


def test_torch_from_pypi_a_plain_pin_or_another_package_proves_nothing() -> None:
    plain_torch = _UV.format(torch="torch==2.6.0", pinned="3.2.0+git0d4682f0")
    plain_pin = _UV.format(torch=_NIGHTLY, pinned="3.2.0").replace("==3.2.0+git0d4682f0", "==3.2.0")
    other = _UV.format(torch=_NIGHTLY, pinned="3.2.0+git0d4682f0").replace("pytorch-\n      triton",
                                                                        "triton", 1)
    for text in (plain_torch, plain_pin, other):
        assert "index-not-given" not in kinds(text)
        assert "pytorch-index-not-given" not in stated(text)
