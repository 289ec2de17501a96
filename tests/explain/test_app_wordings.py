"""Messages that users of generation and LLM apps paste (ComfyUI, InvokeAI, text-generation-webui):
torch's own Windows DLL loader and NumPy's ABI warning, read in their sources' words. What each
proves, and the look-alike texts that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

# torch/__init__.py _load_dll_libraries: LoadLibraryExW over torch\lib\*.dll, in name order
_LOADER = ('OSError: [WinError 126] The specified module could not be found. Error loading '
           '"C:\\app\\python_embeded\\Lib\\site-packages\\torch\\lib\\{dll}" or one of its dependencies.\n')


def test_a_torch_hip_dll_failing_on_windows_is_the_rocm_family_not_the_generic_dll_one() -> None:
    (found,) = explain_report(_LOADER.format(dll="c10_hip.dll"), CATALOG, kb=KB).explanations
    assert found.signature.id == "rocm-library-missing" and len(found.candidates) == 4
    assert any("amdhip64" in c.cause for c in found.candidates)
    assert stated(_LOADER.format(dll="torch_hip.dll")) == ["rocm-library-missing"]
    # Counter-cases: a CUDA build's DLL, or torch's CPU DLL, is the generic Windows family.
    for dll in ("c10_cuda.dll", "torch_cpu.dll"):
        assert stated(_LOADER.format(dll=dll)) == ["windows-dll-load-failed"]
    # A *_hip.dll outside torch's lib directory is not torch's loader speaking.
    other = _LOADER.format(dll="c10_hip.dll").replace("\\torch\\lib\\", "\\other\\bin\\")
    assert "rocm-library-missing" not in stated(other)


def test_numpys_abi_warning_is_read_without_its_first_word_and_for_any_numpy_2() -> None:
    quoted = ("module that was compiled using NumPy 1.x cannot be run in NumPy 2.1.2 as it may crash. "
              "To support both 1.x and 2.x versions of NumPy, modules must be compiled with NumPy 2.0.\n")
    (found,) = explain_report(quoted, CATALOG, kb=KB).explanations
    assert found.signature.id == "numpy2-abi" and found.facts["numpy"] == "2.1.2"
    assert stated("A " + quoted) == ["numpy2-abi"]
    # Counter-case: a module built for NumPy 2 is not this failure.
    assert stated(quoted.replace("NumPy 1.x", "NumPy 2.x")) == []


# pip's warning after an install (pip/_internal/commands/install.py) and torchao's own check
_WARNED = ("Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= "
           "2.11.0 (found 2.10.0+cu130).\n"
           "unsloth 2026.6.8 requires torch<2.11.0,>=2.4.0, but you have torch 2.11.0+cu130 which is "
           "incompatible.\n")


def test_a_cap_on_torch_below_what_another_package_needs_is_a_pin_conflict() -> None:
    (found,) = explain_report(_WARNED, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-pin-conflict" and "torch<2.11.0,>=2.4.0" in found.cause
    assert stated(_WARNED.replace("torch<2.11.0,>=2.4.0", "torch>=2.4.0,<=2.10.9")) == ["torch-pin-conflict"]


def test_requirements_that_a_torch_release_meets_are_no_pin_conflict() -> None:
    # Counter-cases: the cap lies above the floor, or no other requirement is in the text.
    report = explain_report(_WARNED.replace("torch >= 2.11.0", "torch >= 2.9.0"), CATALOG, kb=KB)
    assert "torch-pin-conflict" not in [e.signature.id for e in report.explanations]
    assert any(sid == "torch-pin-conflict" for sid, _ in report.contradicted)
    alone = _WARNED.split("\n", 1)[1]
    assert "torch-pin-conflict" not in stated(alone)


def test_an_extension_kernels_own_no_kernel_image_status_is_the_extensions_arch_list() -> None:
    # flashinfer's and sgl-kernel's TORCH_CHECK: "<Kernel> failed with error code " + cudaGetErrorString
    text = ("RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution "
            "on the device\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-arch-not-compiled" and found.facts["kernel"] == "GemmaRMSNorm"
    assert "TORCH_CUDA_ARCH_LIST" in " ".join(found.fix)
    # Counter-cases: the same status from torch's own call is the family; another status is not this.
    assert stated("RuntimeError: CUDA error: no kernel image is available for execution on the device\n") == [
        "no-kernel-image"]
    assert "extension-arch-not-compiled" not in stated(
        "RuntimeError: GemmaRMSNorm failed with error code out of memory\n")


def test_a_procedure_missing_on_import_is_its_own_family_in_any_windows_language() -> None:
    # Python's dynload_win.c: "DLL load failed while importing %s: " + FormatMessage(error 127)
    for words in ("The specified procedure could not be found.", "找不到指定的程序。"):
        (found,) = explain_report(f"ImportError: DLL load failed while importing exllamav2_ext: {words}\n",
                                  CATALOG, kb=KB).explanations
        assert found.signature.id == "windows-dll-procedure-missing" and len(found.candidates) == 2
        assert "exllamav2_ext" in found.cause
    # Counter-case: a module not found (error 126) is the missing-DLL family.
    missing = "ImportError: DLL load failed while importing _C: The specified module could not be found.\n"
    assert stated(missing) == ["windows-dll-load-failed"]
