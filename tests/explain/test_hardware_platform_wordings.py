"""Hardware and platform wordings: ptxas refusing a GPU architecture, glibc's static TLS block,
debuggers' SIGILL stops, torch's newer capability warning. Each with its counter-case."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_a_bare_ptxas_refusal_is_a_family_and_triton_s_own_marks_make_it_triton() -> None:
    # nvcc, Triton (backends/nvidia/compiler.py) and XLA all run ptxas: the line alone names none
    bare = "ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'\n"
    assert stated(bare) == ["ptxas-unknown-gpu-arch"]
    report = explain_report(bare, CATALOG, kb=KB)
    assert len(report.explanations[0].candidates) == 2
    raised = ("triton.runtime.errors.PTXASError: PTXAS error: `ptxas` failed with error code 255:\n"
              "ptxas fatal   : Value 'sm_110a' is not defined for option 'gpu-name'\n")
    assert stated(raised) == ["triton-predates-gpu-arch"]
    # an old architecture a newer ptxas dropped is another failure (nvcc-arch-dropped)
    dropped = "ptxas fatal   : Value 'sm_70' is not defined for option 'gpu-name'\n"
    assert "ptxas-unknown-gpu-arch" not in stated(dropped)


def test_glibc_static_tls_exhaustion_names_the_library_to_preload() -> None:
    # glibc elf/dl-reloc.c, _dl_allocate_static_tls
    text = ("OSError: /tmp/env/lib/python3.8/site-packages/torch/lib/libgomp-d22c30c5.so.1: cannot allocate"
            " memory in static TLS block\n")
    report = explain_report(text, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["aarch64-static-tls-exhausted"]
    assert "LD_PRELOAD=/tmp/env/lib/python3.8/site-packages/torch/lib/libgomp-d22c30c5.so.1" in " ".join(
        report.explanations[0].fix)
    assert "aarch64-static-tls-exhausted" not in stated("OSError: cannot allocate memory\n")


def test_lldb_s_sigill_stop_is_an_illegal_instruction() -> None:
    # lldb LinuxSignals.cpp: "signal SIGILL" and its description or code
    text = "* thread #1, name = 'python3', stop reason = signal SIGILL: illegal instruction\n"
    assert stated(text) == ["illegal-instruction"]
    assert "illegal-instruction" not in stated("* thread #1, stop reason = signal SIGSEGV: invalid address\n")


def test_an_illegal_instruction_cuda_reports_is_the_gpu_kernel_s_not_the_cpu_s() -> None:
    # CUDA's own status (cudaErrorIllegalInstruction, 715) beside the prose: a kernel fault on the GPU
    text = ("Our training job on the A100 now fails with an illegal instruction:\n"
            "RuntimeError: CUDA error: an illegal instruction was encountered\n")
    assert "illegal-instruction" not in stated(text)
    assert stated(text.splitlines()[0] + "\n") == ["illegal-instruction"]


def test_torch_s_newer_capability_warning_tells_too_old_from_too_new_by_the_named_build() -> None:
    # torch 2.1x: "Found GPU0 X which is of compute capability (CC) 6.1. ... Your installed torch==..."
    old_gpu = ("Found GPU0 NVIDIA GeForce GTX 1060 6GB which is of compute capability (CC) 6.1."
               " Your installed torch==2.14.0+cu130 does not include kernels for this GPU.\n")
    assert stated(old_gpu) == ["gpu-too-old-for-torch"]
    new_gpu = ("UserWarning: Found GPU0 NVIDIA GeForce RTX 5060 Ti which is of compute capability"
               " (CC) 12.0.\n"
               "...\nYour installed torch==2.9.0+cu126 does not include kernels for this GPU.\n")
    assert stated(new_gpu) == ["arch-not-compiled"]


def test_no_kernel_image_with_a_named_build_above_the_named_gpu_is_a_gpu_too_old() -> None:
    text = ("Your installed torch==2.14.0+cu130 on a GeForce GTX 1060\n"
            "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\n")
    assert "gpu-too-old-for-torch" in stated(text)
    same_gpu_old_build = text.replace("2.14.0+cu130", "2.4.0+cu121")
    assert "gpu-too-old-for-torch" not in stated(same_gpu_old_build)


def test_a_two_part_pin_is_read_as_pep_440_pads_it_to_tell_the_platform_from_pip_s_listing() -> None:
    listing = "1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2"
    text = ("ERROR: Could not find a version that satisfies the requirement torch==2.4"
            f" (from versions: {listing})\n"
            "ERROR: No matching distribution found for torch==2.4\n")
    assert "macos-x86-64-python" in stated(text)
    # a pin no newer than the listing says nothing of the platform
    older = text.replace("torch==2.4", "torch==2.1")
    assert "macos-x86-64-python" not in stated(older)


def test_a_name_torch_npu_lacks_is_a_torch_npu_not_paired_with_its_caller() -> None:
    text = "AttributeError: module 'torch_npu' has no attribute '_npu_flash_attention'\n"
    assert stated(text) == ["torch-npu-version-unpaired"]
    assert stated("ImportError: cannot import name 'npu_format_cast' from 'torch_npu.contrib'\n") == [
        "torch-npu-version-unpaired"]
    # another module's missing name stays the general family
    other = "AttributeError: module 'torch' has no attribute 'npu'\n"
    assert "torch-npu-version-unpaired" not in stated(other)
    # Python's "(unknown location)": torch_npu is an empty namespace folder, not an installed release
    empty = "ImportError: cannot import name 'npu_format_cast' from 'torch_npu' (unknown location)\n"
    assert "torch-npu-version-unpaired" not in stated(empty)


def test_a_missing_librocm_sysdeps_library_is_therock_s_rocm_off_the_loader_path() -> None:
    # TheRock renames the system libraries it bundles librocm_sysdeps_* (third-party/sysdeps)
    text = "ImportError: librocm_sysdeps_numa.so.1: cannot open shared object file: No such file or directory"
    assert stated(text) == ["rocm-sdk-wheel-libs-not-on-path"]
    system = "ImportError: libnuma.so.1: cannot open shared object file: No such file or directory\n"
    assert "rocm-sdk-wheel-libs-not-on-path" not in stated(system)


def test_uv_s_report_of_a_version_range_without_a_platform_wheel_is_read_like_one_version() -> None:
    # uv-resolver pubgrub/report.rs prints the range: "torch>=2.5.0 has no wheels with ..."
    text = ("  ╰─▶ Because torch>=2.5.0 has no wheels with a matching platform tag"
            " (e.g., `macosx_14_0_arm64`) and you require torch>=2.5.0, we can conclude that your"
            " requirements are unsatisfiable.\n")
    assert "uv-no-matching-wheel" in stated(text)
    assert "uv-no-matching-wheel" not in stated("torch>=2.5.0 has wheels for every platform tag\n")


def test_a_crash_told_in_words_as_an_illegal_instruction_is_one() -> None:
    text = "It installed pytorch 2.4\nMy detection program failed with an illegal instruction.\n"
    assert stated(text) == ["illegal-instruction"]
    assert "illegal-instruction" not in stated("The compiler warned about an illegal instruction encoding.\n")
