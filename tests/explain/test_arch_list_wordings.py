"""The architecture list of an extension or torch build, as torch's own tools refuse it
(torch.utils.cpp_extension, torch's bundled select_compute_arch.cmake), and CMake's find_package
of torch: what each wording proves, and the look-alikes that must not be read the same way."""

from __future__ import annotations

import json
from pathlib import Path

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report
from torchsmith.kb.documents import DATA_DIR


def test_cpp_extension_refusing_an_arch_newer_torch_knows_is_a_torch_that_predates_it() -> None:
    for entry in ("8.6", "9.0+PTX", "12.0a", "10.3+PTX"):
        text = f"ValueError: Unknown CUDA arch ({entry}) or GPU not supported\n"
        assert stated(text) == ["torch-predates-arch-in-list"], entry
    (found,) = explain_report("ValueError: Unknown CUDA arch (8.6) or GPU not supported\n", CATALOG,
                              kb=KB).explanations
    assert "8.6 is among the architectures the newest torch's cpp_extension accepts" in found.cause


def test_cpp_extension_refusals_the_data_cannot_date_are_not_stated() -> None:
    # 3.0 (a GPU older than any torch supports), a misspelt entry, an arch no release lists:
    # nothing proves the installed torch predates them.
    for entry in ("3.0", "sm_86", "8.6;", "13.5", "Ampere"):
        text = f"ValueError: Unknown CUDA arch ({entry}) or GPU not supported\n"
        assert "torch-predates-arch-in-list" not in stated(text), entry
    # spconv's cumm copies the check, with its own list (CUMM_CUDA_ARCH_LIST)
    cumm = ('  File "/usr/lib/python3.10/site-packages/cumm/common.py", line 233, in _get_cuda_arch_flags\n'
            '    raise ValueError(\n'
            "ValueError: Unknown CUDA arch (8.9) or GPU not supported\n")
    assert "torch-predates-arch-in-list" not in stated(cumm)


def test_torchs_cmake_rewriting_12_1_to_compute_20_is_its_arch_detection() -> None:
    text = ("-- Added CUDA NVCC flags for: -gencode;arch=compute_20,code=sm_121\n"
            "nvcc fatal   : Unsupported gpu architecture 'compute_20'\n")
    assert stated(text) == ["torch-cmake-arch-detection-bug"]
    # Counter-cases: a list that really asks for an old architecture is the toolkit having dropped it
    for pair in ("arch=compute_20,code=sm_20", "arch=compute_20,code=sm_21", "arch=compute_35,code=sm_35"):
        arch = pair.split(",")[0].split("=")[1]
        old = f"nvcc -gencode {pair} -c a.cu\nnvcc fatal   : Unsupported gpu architecture '{arch}'\n"
        assert stated(old) == ["nvcc-arch-dropped"], pair


def test_torchs_cmake_refusing_an_arch_name_is_its_arch_detection_and_cmakes_own_module_is_not() -> None:
    torch_module = ("CMake Error at cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake:225 "
                    "(message):\n  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS\n")
    newer = ("CMake Error at /opt/libtorch/share/cmake/Caffe2/Modules_CUDA_fix/upstream/FindCUDA/"
             "select_compute_arch.cmake:232 (message):\n"
             "  Found Unknown CUDA Architecture Name in CUDA_SELECT_NVCC_ARCH_FLAGS: 12.0f\n")
    for text in (torch_module, newer):
        assert stated(text) == ["torch-cmake-arch-detection-bug"], text
    # CMake's own (deprecated) FindCUDA module, and a name that is no architecture: not torch's module
    cmake_own = ("CMake Error at /usr/share/cmake-3.22/Modules/FindCUDA/select_compute_arch.cmake:197 "
                 "(message):\n  Unknown CUDA Architecture Name 9.0a in CUDA_SELECT_NVCC_ARCH_FLAGS\n")
    typo = torch_module.replace("9.0a", "sm_86")
    # shaped like a name, but no CUDA release compiles for it (cuda.json arch_support): a mistyped entry
    never = torch_module.replace("9.0a", "7.7")
    for text in (cmake_own, typo, never):
        assert "torch-cmake-arch-detection-bug" not in stated(text), text


def test_find_package_torch_failing_is_a_family_of_three() -> None:
    text = ("CMake Error at CMakeLists.txt:43 (find_package):\n"
            '  Could not find a package configuration file provided by "Torch" with any of\n'
            "  the following names:\n\n    TorchConfig.cmake\n    torch-config.cmake\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-cmake-config-not-found" and len(found.candidates) == 3
    assert any("isolated build environment" in c.cause for c in found.candidates)


def test_torch_cpp_names_removed_from_torch_undeclared_in_each_compilers_words() -> None:
    for line in ("nms_cuda.cpp:4:23: error: \u2018AT_CHECK\u2019 was not declared in this scope\n",
                 "roi.cpp:9:5: error: 'THCudaCheck' was not declared in this scope\n",
                 'roi_kernel.cu(31): error: identifier "THCState" is undefined\n',
                 "roi.cpp:12:3: error: use of undeclared identifier 'AT_CHECK'\n",
                 "roi.cpp(12): error C3861: 'AT_CHECK': identifier not found\n"):
        assert stated(line) == ["extension-source-needs-other-torch"], line
    # Counter-cases: torch's current macro, or the extension's own, undeclared (a missing include)
    for line in ("nms.cpp:4:23: error: \u2018TORCH_CHECK\u2019 was not declared in this scope\n",
                 "nms.cpp:4:23: error: 'CHECK_CUDA' was not declared in this scope\n",
                 'kernel.cu(3): error: identifier "THRESHOLD" is undefined\n'):
        assert "extension-source-needs-other-torch" not in stated(line), line


def test_the_cpp_extension_list_is_not_short_of_the_newest_cuda_architecture() -> None:
    # The list is a cache of torch's source: it must reach the newest architecture cuda.json knows.
    arches = KB.document("buildreqs")["cpp_extension_arches"]["arches"]
    rows = json.loads((Path(DATA_DIR) / "cuda.json").read_text(encoding="utf-8"))["arch_support"]
    top = max(int(row["max_arch"][len("sm_"):]) for row in rows)
    assert f"{top // 10}.{top % 10}" in arches, top


def test_a_cuda_declared_name_undefined_is_a_family_of_three() -> None:
    for line in ('fused.cu(33): error: identifier "CUDA_R_16BF" is undefined\n',
                 'identifier "__nv_fp8_e8m0" is undefined\n',
                 "k.cu:5:1: error: \u2018__nv_bfloat16\u2019 does not name a type\n",
                 "k.cu:5:1: error: unknown type name '__nv_fp8_e4m3'\n"):
        (found,) = explain_report(line, CATALOG, kb=KB).explanations
        assert found.signature.id == "cuda-toolkit-lacks-declaration" and len(found.candidates) == 3, line
    # Counter-cases: the source's own names, and torch's (another torch release), are not CUDA's
    assert stated('k.cu(3): error: identifier "my_bfloat16_t" is undefined\n') == []
    torchs = 'k.cu(3): error: identifier "THCState" is undefined\n'
    assert stated(torchs) == ["extension-source-needs-other-torch"]
