"""NumPy's own words when a compiled module cannot import its C API (numpy/_core/code_generators/
generate_numpy_api.py: "numpy.core.multiarray failed to import", "module compiled against API/ABI
version 0x.. but this version of numpy is 0x.."), torch's "Numpy is not available"
(torch/csrc/utils/tensor_numpy.cpp), and the NumPy version the text shows installed. Texts written
from those format strings; counter-cases where the version points the other way or is absent."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_FAILED = "ImportError: numpy.core.multiarray failed to import\n"
_TORCH = "RuntimeError: Numpy is not available\n"


def test_the_import_failure_alone_is_a_family() -> None:
    for text in (_FAILED, _TORCH, "ImportError: numpy._core.multiarray failed to import\n"):
        assert stated(text) == ["numpy-c-api-import-failed"], text


def test_numpy_2_shown_installed_makes_it_a_numpy_1_build_under_numpy_2() -> None:
    assert stated("Successfully installed numpy-2.0.1\n" + _TORCH) == ["numpy2-abi"]
    assert stated("numpy==2.1.0\n" + _FAILED) == ["numpy2-abi"]
    # NumPy 1.x shown: the family stays a family
    assert stated("numpy==1.26.4\n" + _TORCH) == ["numpy-c-api-import-failed"]


def test_numpys_version_lines_say_which_side_is_newer() -> None:
    older = "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe\n"
    assert stated(older + _FAILED) == ["numpy-older-than-build"]
    abi = ("RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy is "
           "0x2000000\n")
    assert stated(abi + _FAILED) == ["numpy2-abi"]
    # a module built against NumPy 2 under NumPy 1.x is not NumPy 2's ABI break
    reverse = ("RuntimeError: module compiled against ABI version 0x2000000 but this version of numpy is "
               "0x1000009\n")
    assert "numpy2-abi" not in stated(reverse + _FAILED)
