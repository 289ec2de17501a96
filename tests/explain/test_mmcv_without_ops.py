"""mmcv's missing ops (``No module named 'mmcv._ext'``) are a family: a lite package, a checkout whose
ops were never built, and a checkout imported instead of the install each end in that message. A
text that shows the lite package installed says so first. Texts written for these tests."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB

from torchsmith.explain.matcher import Explanation, explain_report

_MISSING = ("Traceback (most recent call last):\n"
            '  File "tools/train.py", line 9, in <module>\n'
            "    from mmcv.ops import nms\n"
            "ModuleNotFoundError: No module named 'mmcv._ext'\n")


def _only(text: str) -> Explanation:
    [found] = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "mmcv-without-ops"
    return found


def test_the_message_alone_is_the_family_with_a_check_for_each_setup() -> None:
    found = _only(_MISSING)
    assert [c.id for c in found.candidates] == ["mmcv-lite-installed", "mmcv-ops-never-built",
                                                "mmcv-checkout-shadows-install"]
    causes = " ".join(c.cause for c in found.candidates)
    assert "mmcv-lite" in causes and "MMCV_WITH_OPS=1" in causes and "PYTHONPATH" in causes
    assert all("python -c" in c.check or "pip list" in c.check for c in found.candidates)
    assert "lite_package" not in found.facts


def test_a_lite_package_shown_installed_is_named_first_in_the_fix() -> None:
    for shown, package in (("$ pip list | grep mmcv\nmmcv-lite          2.1.0\n", "mmcv-lite          2.1.0"),
                           ("Successfully installed mmcv-1.7.2 yapf-0.40.1\n", "mmcv-1.7.2"),
                           ("I installed it with `mim install mmcv==1.6.0`.\n", "mmcv==1.6.0")):
        found = _only(shown + _MISSING)
        assert found.facts["lite_package"] == package
        assert found.fix[0].startswith(f"The text shows {' '.join(package.split())} installed")


def test_a_full_package_or_a_checkout_named_by_its_version_is_no_lite_package() -> None:
    for shown in ("Successfully installed mmcv-full-1.7.2\n",  # 1.x's full package
                  "mmcv                2.1.0\n",  # 2.x's mmcv is the full one
                  # a checkout named by its version
                  '  File "/home/ana/mmcv-1.6.0/mmcv/utils/ext_loader.py", line 13, in load_ext\n'):
        found = _only(shown + _MISSING)
        assert "lite_package" not in found.facts, shown
        assert len(found.candidates) == 3
