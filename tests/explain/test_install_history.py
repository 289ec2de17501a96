"""What an install did before the error: a torch looked for on a find-links page that stopped at an
older release (the page's last release is data), and pip's record of removing a torch build."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.reason import CONFIRMATION_CHECKS

PAGE = "https://download.pytorch.org/whl/torch_stable.html"

def test_the_frozen_page_ends_at_the_release_the_data_names() -> None:
    page = KB.document("formats")["torch_stable_html"]
    assert page["last"] == "2.3.1" and page["sources"]
    report = explain_report(f"pip install torch==2.4.0+cpu -f {PAGE}\nERROR: No matching distribution found "
                            "for torch==2.4.0+cpu\n", CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "torch-stable-html-frozen"
    assert "2.4.0+cpu" in found.cause and "2.3.1" in found.cause


def test_a_release_the_page_lists_is_not_the_frozen_page() -> None:
    # 1.5.1+cpu is on the page: its failure is another (the family of no-matching-distribution)
    text = (f"pip install torch==1.5.1+cpu -f {PAGE}\nERROR: Could not find a version that satisfies the "
            "requirement torch==1.5.1+cpu (from versions: 0.1.2)\n")
    assert stated(text) == ["no-matching-distribution"]
    # the check reads the page's last release from the data
    check = CONFIRMATION_CHECKS["requested_after_torch_stable_html"]
    assert check(Extracted(), {"requested": "2.3.1+cpu"}, KB) is None
    assert check(Extracted(), {"requested": "2.4.x"}, KB) == (
        "torch 2.4.x is newer than 2.3.1, the newest torch torch_stable.html lists")
    assert check(Extracted(), {"requested": "2.4.0"}, None) is None


def test_the_newest_pin_named_around_the_page_is_the_one_asked_for() -> None:
    text = (f"`pip install -f {PAGE} torch==2.3.1+cpu` worked. However, "
            f"`pip install -f {PAGE} torch==2.5.1+cpu` does not work.\n")
    assert stated(text) == ["torch-stable-html-frozen"]
    # a PyPI version without a build label and no failure: the page played no part
    assert stated(f"pip install torch==2.5.1 -f {PAGE}\nSuccessfully installed torch-2.5.1\n") == []


def test_pip_removing_a_build_from_pytorch_index_is_the_family() -> None:
    text = ("  Attempting uninstall: torch\n    Found existing installation: torch 2.10.0+cu130\n"
            "    Uninstalling torch-2.10.0+cu130:\n      Successfully uninstalled torch-2.10.0+cu130\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "pip-replaced-torch-build" and len(found.candidates) == 2
    assert "2.10.0+cu130" in found.cause
    # a torch without a build label (conda's, or PyPI's) is not a build from PyTorch's index
    plain = text.replace("+cu130", "")
    assert "pip-replaced-torch-build" not in stated(plain)
    # nor is a `pip show`-like line without pip's uninstall step
    assert stated("Found existing installation: torch 2.10.0+cu130\n") == []
