"""Mends of the assertions the held-out batches 20 and 22 showed wrong when filed (2026-11-27), each
with the case the old statement served. uv's "no wheels with a matching ..." and its lock-file
refusal say that no wheel installs here, not why: the release may have none for this platform or
Python, the build may live on an index uv did not read, the index may be one PyTorch never
published, or the lock may have been resolved without this platform. An undefined torch symbol in an
extension says the installed torch does not export it, not which build went wrong: a companion's
wheel made for another torch, a local build against another torch, or a source that calls an API
this torch no longer exports (a fresh build fails the same way). Each is now a family whose
candidates carry those causes' ids and a check that tells them apart."""

from __future__ import annotations

from typing import List, Tuple

from tests.explain.test_signatures import CATALOG, KB

from torchsmith.explain.matcher import explain_report


def spoken(text: str) -> List[Tuple[str, bool, List[str]]]:
    """(id, whether it spoke as a family, its candidates' ids) for each explanation, in order."""
    return [(e.signature.id, bool(e.signature.candidates), [c.id for c in e.signature.candidates])
            for e in explain_report(text, CATALOG, kb=KB).explanations]


# uv's pubgrub report (crates/uv-resolver/src/pubgrub/report.rs) for a Python ABI tag with no wheel
_ABI_TAG = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because all versions of torch have no wheels with a matching Python ABI tag\n"
            "      (e.g., `cp312`)\n"
            "      and you require torch, we can conclude that your requirements are unsatisfiable.\n")
# uv sync --frozen installing from uv.lock (crates/uv-installer: a locked distribution with no file here)
_LOCKED = ("error: Distribution `av==17.0.1 @ registry+https://pypi.org/simple` can't be installed because "
           "it doesn't have a source distribution or wheel for the current platform\n")


def test_uv_finding_no_wheel_here_lists_why_it_may_be_and_asserts_none() -> None:
    for text in (_ABI_TAG, _LOCKED):
        [(sig_id, family, candidates)] = spoken(text)
        assert sig_id == "uv-no-matching-wheel" and family
        assert {"package-platform-unsupported", "package-python-version-unsupported",
                "pytorch-index-not-given", "torch-cuda-build-not-published",
                "uv-lock-resolved-without-platform"} <= set(candidates)


_SYMBOL = ("ImportError: /workspace/kernels/conv1d/conv1d_cuda.cpython-310-x86_64-linux-gnu.so: "
           "undefined symbol: _ZN3c104cuda9SetDeviceEab\n")


def test_an_undefined_torch_symbol_lists_the_builds_that_lead_to_it() -> None:
    [(sig_id, family, candidates)] = spoken(_SYMBOL)
    assert sig_id == "extension-abi-mismatch" and family
    assert candidates == ["companion-needs-other-torch", "extension-built-for-other-torch",
                          "extension-source-uses-changed-torch-api"]


def test_a_symbol_of_another_library_is_still_not_torchs() -> None:
    other = _SYMBOL.replace("_ZN3c104cuda9SetDeviceEab", "_ZN4mmcv3ops8nms_implEv")
    assert "extension-abi-mismatch" not in [sig_id for sig_id, _, _ in spoken(other)]


def test_each_python_tag_uv_names_is_the_same_family() -> None:
    # uv-distribution-types' IncompatibleTag display: implementation, ABI and version tags
    for tag in ("implementation", "ABI", "version"):
        text = _ABI_TAG.replace("Python ABI tag", f"Python {tag} tag")
        [(sig_id, family, _)] = spoken(text)
        assert sig_id == "uv-no-matching-wheel" and family, tag
    assert spoken(_ABI_TAG.replace("Python ABI tag", "Python flavour tag")) == []


# Batch 22's three at filing. poetry's header (mixology/failure.py) names the project's range and
# each package's; where they share no Python, the package supports none of the project's Pythons.
_POETRY = ("The current project's supported Python range ({project}) is not compatible with some of the "
           "required packages Python requirement:\n"
           "  - tts requires Python >=3.9.0, <3.12, so it will not be satisfied for Python {uncovered}\n")


def test_a_project_range_the_package_shares_no_python_with_is_not_called_open_ended() -> None:
    assert "project-python-range-open-ended" not in [
        i for i, _, _ in spoken(_POETRY.format(project=">=3.12,<3.13", uncovered=">=3.12,<3.13"))]
    assert [i for i, _, _ in spoken(_POETRY.format(project=">=3.9", uncovered=">=3.12"))] == [
        "project-python-range-open-ended"]


def test_a_cuda_checkpoint_where_cuda_is_unavailable_lists_both_readings() -> None:
    text = ("RuntimeError: Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
            "please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.\n")
    [(sig_id, family, candidates)] = spoken(text)
    assert sig_id == "checkpoint-saved-on-cuda" and family
    assert candidates == ["checkpoint-loaded-without-gpu", "torch-sees-no-cuda-gpu"]
