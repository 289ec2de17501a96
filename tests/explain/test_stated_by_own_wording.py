"""Causes a tool's own message states (each wording read from that tool's source), and the texts
that look alike but do not state it: dyld's remark that a binary was built for a newer macOS, R
torch's list of the CUDA builds it publishes, a setup.py's CUDA_HOME check, xFormers' bfloat16
reason (only where the query is on a CUDA GPU); and a CPU-only torch on a machine whose kernel is
Jetson Linux's."""

from __future__ import annotations

from typing import List, Optional, Tuple

from torchsmith.explain.extract.gpunames import gpu_names, named_gpus
from torchsmith.explain.matcher import explain_report

from .test_signatures import CATALOG, KB, stated


def test_dyld_says_the_binary_was_built_for_a_newer_macos() -> None:
    # dyld4 (dyld/Loader.cpp tooNewErrorAddendum) and dyld2 (ImageLoaderMachOCompressed.cpp) add the
    # remark only when the binary's minimum OS is newer than the running one.
    new = ("ImportError: dlopen(/opt/venv/lib/python3.11/site-packages/pkg/_core.so, 0x0002): "
           "Symbol not found: _cblas_sgemm$NEWLAPACK\n"
           "  Referenced from: <4C4C44E5-5555-3144-A1B2-0123456789AB> "
           "/opt/venv/lib/python3.11/site-packages/pkg/libcore.dylib "
           "(built for macOS 13.4 which is newer than running OS)\n"
           "  Expected in:     <0A1B2C3D-0000-1111-2222-333344445555> "
           "/System/Library/Frameworks/Accelerate.framework/Versions/A/Accelerate\n")
    (found,) = explain_report(new, CATALOG, kb=KB).explanations
    assert found.signature.id == "macos-too-old-for-binary"
    assert found.facts["built_for"] == "13.4"
    assert found.facts["expected_in"].endswith("Accelerate")
    old = ("dyld: Symbol not found: ___cxa_thread_atexit\n"
           "  Referenced from: /usr/local/lib/libthing.dylib (which was built for Mac OS X 10.14)\n"
           "  Expected in: /usr/lib/libc++.1.dylib\n")
    assert stated(old) == ["macos-too-old-for-binary"]
    # Counter-case: the same missing symbol without dyld's remark proves nothing about macOS.
    plain = ("dyld: Symbol not found: ___cxa_thread_atexit\n"
             "  Referenced from: /usr/local/lib/libthing.dylib\n"
             "  Expected in: /usr/lib/libc++.1.dylib\n")
    assert "macos-too-old-for-binary" not in stated(plain)


def test_r_torch_lists_the_cuda_builds_it_publishes() -> None:
    # mlverse/torch R/install.R: a CUDA not among the release's builds, so it installs the CPU one.
    text = "Cuda 12.6 detected but torch only supports: cpu, 11.8, 12.4\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-cuda-build-not-published"
    assert "cpu, 11.8, 12.4" in found.cause and "falls back" in found.cause
    assert "torch-cuda-build-not-published" not in stated("Cuda 12.4 detected, installing the 12.4 build\n")


def test_a_setup_py_that_found_no_cuda_home() -> None:
    # setup.py files that check torch.utils.cpp_extension.CUDA_HOME (None: no toolkit found).
    text = ('  File "/src/kernels/setup.py", line 40, in <module>\n'
            '    raise RuntimeError("Cannot find CUDA_HOME. CUDA must be available to build the package.")\n'
            "RuntimeError: Cannot find CUDA_HOME. CUDA must be available to build the package.\n")
    assert stated(text) == ["cuda-home-not-set"]
    rocm = "RuntimeError: Cannot find ROCM_HOME. ROCm must be available to build the package.\n"
    assert "cuda-home-not-set" not in stated(rocm)


_XFORMERS = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
             "     query       : shape=(1, 1024, 16, 64) (torch.bfloat16)\n"
             "     key         : shape=(1, 1024, 16, 64) (torch.bfloat16)\n"
             "`fa2F@2.5.7-pt` is not supported because:\n"
             "{device}"
             "    bf16 is only supported on A100+ GPUs\n")


def test_xformers_bf16_reason_on_a_cuda_gpu_but_not_on_another_device() -> None:
    # xformers/ops/fmha/common.py adds the reason for a bfloat16 query on an older GPU, and on any
    # device that is not CUDA (then its own device= reason says so).
    too_old = "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
    on_gpu = _XFORMERS.format(device=too_old)
    assert stated(on_gpu) == ["bf16-unsupported-gpu"]
    on_cpu = _XFORMERS.format(device="    device=cpu (supported: {'cuda'})\n")
    report = explain_report(on_cpu, CATALOG, kb=KB)
    assert "bf16-unsupported-gpu" not in [e.signature.id for e in report.explanations]
    assert any(sid == "bf16-unsupported-gpu" and "device=cpu" in why for sid, why in report.contradicted)


NAMES = gpu_names(KB.gpus, KB.gfx_targets)


def _read(text: str) -> List[Tuple[str, Optional[str]]]:
    return [(gpu.name, gpu.capability) for gpu in named_gpus(text, NAMES)]


def test_a_gpu_named_as_a_lower_bound_is_not_a_gpu_present() -> None:
    assert _read("bf16 is only supported on A100+ GPUs") == []
    assert _read("this kernel needs a V100 or newer GPU") == []
    assert _read("needs an RTX 3090 and above") == []
    # the same names as the machine's GPU still count
    assert _read("training on my A100 GPU") == [("A100", "8.0")]
    assert _read("an RTX 3090 + an RTX 4090 in one box") == [("RTX 3090", "8.6"), ("RTX 4090", "8.9")]


def test_a_cpu_only_torch_on_a_kernel_of_jetson_linux() -> None:
    # Jetson Linux kernels carry the local version -tegra (uname -r; platform.platform()).
    report = ("- Platform: Linux-5.10.216-tegra-aarch64-with-glibc2.31\n"
              "- Python version: 3.8.10\n"
              "- PyTorch version: 2.4.1+cpu\n")
    assert stated(report) == ["jetson-cpu-wheel"]
    # Counter-cases: the same build on a desktop kernel stays the CPU-build family; NVIDIA's own
    # Jetson build (nvXX.YY) with CUDA is no CPU-only torch.
    desktop = report.replace("5.10.216-tegra-aarch64-with-glibc2.31",
                             "5.15.0-105-generic-x86_64-with-glibc2.35")
    assert stated(desktop) == ["torch-not-compiled-with-cuda"]
    jetson_build = (report.replace("2.4.1+cpu", "2.3.0a0+40ec155e58.nv24.05")
                    + "- CUDA used to build PyTorch: 12.4\n")
    assert "jetson-cpu-wheel" not in stated(jetson_build)


def test_torchao_skipping_its_extensions_for_another_torch() -> None:
    # torchao/__init__.py (0.13 to 0.16): its prebuilt extensions are skipped for a torch they were
    # not built for.
    text = ("Skipping import of cpp extensions due to incompatible torch version 2.6.0+cu124 for torchao "
            "version 0.14.1         Please see https://github.com/pytorch/ao/issues/2919 for more info\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "companion-needs-other-torch"
    assert (found.facts["companion"], found.facts["companion_version"]) == ("torchao", "0.14.1")
    # its own debug line for an extension that failed to load names no torch at all
    assert "companion-needs-other-torch" not in stated(
        "DEBUG:torchao:Skipping import of cpp extensions: libcudart.so.13: cannot open shared object file\n")


def test_windows_entry_point_of_torch_missing_from_a_companion_module() -> None:
    # NTSTATUS STATUS_ENTRYPOINT_NOT_FOUND's text, for a torch function (c10/at/torch/caffe2) that a
    # companion's compiled module imports: the companion was built for another torch.
    text = ("The procedure entry point ?device@TensorBase@at@@QEBA?AUDevice@c10@@XZ could not be located in "
            "the dynamic link library C:\\venv\\Lib\\site-packages\\torchaudio\\lib\\libtorchaudio.pyd\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "companion-needs-other-torch"
    assert found.facts["companion"] == "torchaudio"
    # Counter-cases: a function of another library (the C++ runtime), and a torch function missing
    # from a project's own extension (not a torch companion).
    runtime = ("The procedure entry point ?_Throw_Cpp_error@std@@YAXH@Z could not be located in the dynamic "
               "link library C:\\venv\\Lib\\site-packages\\torchvision\\_C.pyd\n")
    assert "companion-needs-other-torch" not in stated(runtime)
    own = text.replace("torchaudio\\lib\\libtorchaudio.pyd", "myproject\\_ext.pyd")
    assert "companion-needs-other-torch" not in stated(own)


def test_a_package_saying_its_own_extension_was_not_built() -> None:
    # horovod/common/util.py check_extension (the file is absent); lmdeploy/archs.py after a swallowed
    # ImportError of turbomind.
    horovod = ("ImportError: Extension horovod.torch has not been built: /usr/lib/python3/site-packages/"
               "horovod/torch/mpi_lib_v2.cpython-310-x86_64-linux-gnu.so not found\n")
    (found,) = explain_report(horovod, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-not-built" and found.facts["package"] == "horovod"
    lmdeploy = ("2025-01-07 10:00:00,000 - lmdeploy - WARNING - archs.py:48 - Fallback to pytorch engine "
                "because turbomind engine is not installed correctly. If you insist to use turbomind engine, "
                "you may need to reinstall lmdeploy from pypi or build from source and try again.\n")
    assert stated(lmdeploy) == ["extension-not-built"]
    # Counter-case: the import that lmdeploy swallowed is shown failing to load (the file is there).
    loaded = ("ImportError: /opt/lmdeploy/lib/_turbomind.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
              "cudaFreeAsync, version libcudart.so.11.0\n" + lmdeploy)
    assert "extension-not-built" not in stated(loaded)
