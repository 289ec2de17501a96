"""GPU run-time and library messages whose wording several causes share: the family speaks (with its
candidates) unless the text's facts, read with the shipped data, prove one cause."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report

NO_KERNEL = ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
             "GPU: {gpu}\nPyTorch Version: {torch} (Nightly)\n")


def test_no_kernel_image_is_the_torch_build_when_its_cuda_cannot_compile_for_the_gpu() -> None:
    # pytorch/pytorch#180101: an RTX 5080 (sm_120) and a CUDA 12.4 nightly; CUDA 12.4 compiles up to sm_90.
    text = NO_KERNEL.format(gpu="NVIDIA GeForce RTX 5080", torch="2.7.0.dev20250310+cu124")
    env = extract(text, KB).environment
    assert (env.torch, env.torch_cuda) == ("2.7.0.dev20250310+cu124", "12.4")
    report = explain_report(text, CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "arch-not-compiled"
    assert any("sm_120" in r and "CUDA 12.4" in r for r in found.reasoning)


def test_no_kernel_image_stays_the_family_where_the_build_could_carry_the_arch() -> None:
    for gpu, torch in (("NVIDIA GeForce RTX 5080", "2.7.0.dev20250310+cu128"),  # 12.8 compiles sm_120
                       ("NVIDIA GeForce RTX 3090", "2.7.0.dev20250310+cu124"),  # 12.4 compiles sm_86
                       ("NVIDIA GeForce RTX 5080", "")):  # no build named
        report = explain_report(NO_KERNEL.format(gpu=gpu, torch=torch), CATALOG, kb=KB)
        (found,) = report.explanations
        assert found.signature.id == "no-kernel-image" and len(found.candidates) == 2, (gpu, torch)
        # neither the build's missing arch nor a GPU below the build is shown, nor (a nightly the data
        # does not list, or no build) a build that carries the GPU
        assert {c for c, _ in report.contradicted} == {"arch-not-compiled", "gpu-too-old-for-torch",
                                                       "extension-arch-not-compiled"}


def test_no_kernel_image_reads_a_published_release_arch_list() -> None:
    # torch 2.0.1+cu118 was published without sm_120 (nor any Blackwell) code.
    text = NO_KERNEL.format(gpu="NVIDIA GeForce RTX 5090", torch="2.0.1+cu118")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "arch-not-compiled"
    assert any("2.0.1 (cu118)" in r for r in found.reasoning)


def test_onnxruntime_on_windows_not_loading_its_cuda_provider_is_the_extensions_family() -> None:
    # onnxruntime's own Windows wording (core/platform/windows/env.cc: LoadLibraryExW failed; 126 is
    # ERROR_MOD_NOT_FOUND, a DLL the provider links is missing: CUDA's or cuDNN's of its build).
    text = ('[E:onnxruntime:Default, provider_bridge_ort.cc:1534 onnxruntime::ProviderLibrary::Get] '
            '[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" when trying to load '
            '"C:\\Python310\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"\n')
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-cuda-library-missing" and len(found.candidates) == 2
    assert "a CUDA library" in found.cause
    # Counter-cases: another error (193: a DLL of the wrong architecture) or another DLL.
    for other in (text.replace("error 126", "error 193"),
                  text.replace("providers_cuda", "providers_openvino")):
        assert "extension-cuda-library-missing" not in stated(other)


def test_torch_capability_warning_still_proves_arch_not_compiled_alone() -> None:
    text = ("NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 is not compatible with the current "
            "PyTorch installation.\n")
    assert stated(text) == ["arch-not-compiled"]


def test_a_cudnn_library_an_extension_asked_for_is_the_extensions_family() -> None:
    # microsoft/onnxruntime#25609: onnxruntime's CUDA provider asked for cuDNN 9, not torch.
    text = ("[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with "
            "error: libcudnn.so.9: cannot open shared object file: No such file or directory\n")
    assert stated(text) == ["extension-cuda-library-missing"]
    # Torch's own cuDNN warning keeps the cuDNN family.
    torch = ("torch/nn/modules/conv.py:456: UserWarning: Attempt to open cnn_infer failed: handle=0 error: "
             "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory\n")
    assert stated(torch) == ["cudnn-library-missing"]


def test_a_library_that_failed_itself_is_not_its_own_requester() -> None:
    # CTranslate2 prints "Could not load library X. Error: X: ..." (SYSTRAN/faster-whisper#297).
    text = ("Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open "
            "shared object file: No such file or directory\n")
    (library,) = extract(text, KB).libraries
    assert library.needed_by is None
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cudnn-library-missing" and len(found.candidates) == 3
    assert "does not show which" in found.cause


def test_a_bare_cuda_or_torch_library_miss_names_no_single_cause() -> None:
    for text, sig, count in (
            ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
             "cuda-runtime-library-missing", 3),
            ("OSError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory",
             "torch-library-missing", 3)):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == sig and len(found.candidates) == count


def test_wget_refused_wheel_is_a_missing_url_not_an_installed_cpu_build() -> None:
    # pytorch/pytorch#118732: wget's own lines (GNU Wget src/http.c) for a wheel the host answers 403 for.
    url = "https://download.pytorch.org/whl/cpu/torch-1.2.0+cpu-cp27-cp27m-manylinux1_x86_64.whl"
    text = (f"--2024-01-31 00:23:03--  {url}\n"
            "Resolving download.pytorch.org (download.pytorch.org)... 13.33.165.36\n"
            "Connecting to download.pytorch.org (download.pytorch.org)|13.33.165.36|:443... connected.\n"
            "HTTP request sent, awaiting response... 403 Forbidden\n"
            "2024-01-31 00:23:03 ERROR 403: Forbidden.\n")
    assert not extract(text, KB).environment.torch_cpu_only
    assert stated(text) == ["wheel-url-gone"]
    # A file that is not a wheel is not a pinned wheel URL; a 200 is no failure.
    assert stated(text.replace(".whl", ".tar.gz")) == []
    assert stated(text.replace("403 Forbidden", "200 OK")) == []
    # A CPU build that was installed is still one.
    installed = "Successfully installed torch-2.0.1+cpu\n"
    assert extract(installed, KB).environment.torch_cpu_only


def test_nvidia_container_cli_without_nvml_is_the_family_not_a_missing_libcuda() -> None:
    # canonical/docker-snap#148, AbdBarho/stable-diffusion-webui-docker#129: the toolkit's hook, not the
    # container's process, missed the driver's NVML; the text does not show why.
    text = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open "
            "shared object file: no such file or directory: unknown.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "nvidia-container-cli-driver-library" and len(found.candidates) == 3
    # Inside a container or a program, a missing driver library is still libcuda-missing.
    assert stated("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n") \
        == ["libcuda-missing"]


def test_no_driver_inside_a_docker_build_step_is_the_build_not_the_host() -> None:
    text = ('Docker build fails on pytorch master since Aug 15, 2019 with '
            '"AssertionError: Found no NVIDIA driver on your system"\n')
    assert stated(text) == ["gpu-not-available-during-docker-build"]
    buildkit = ("#12 [stage-1 4/6] RUN pip install -v --no-cache-dir ./apex\n"
                "#12 41.2 AssertionError: Found no NVIDIA driver on your system. Please check that you "
                "have an NVIDIA GPU and installed a driver\n")
    assert stated(buildkit) == ["gpu-not-available-during-docker-build"]
    # Without a build in sight it is the driver.
    assert stated("AssertionError: Found no NVIDIA driver on your system.\n") == ["no-nvidia-driver"]


WARNING = ("UserWarning:\n    Found GPU0 NVIDIA {gpu} which is of cuda capability {cc}.\n"
           "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
           "    ({low}) - ({high})\n")


def test_capability_warning_for_a_gpu_of_the_builds_newest_major_is_a_false_positive() -> None:
    # pytorch/pytorch#172629: GB10 (12.1) runs the build's sm_120 cubins.
    report = explain_report(WARNING.format(gpu="GB10", cc="12.1", low="8.0", high="12.0"), CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["capability-warning-false-positive"]
    # Torchrun's rank prefixes between the lines (pytorch/pytorch#164596).
    prefixed = ("0: UserWarning:  0:     Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. "
                "0:     Minimum and Maximum cuda capability supported by this version of PyTorch is "
                "0:     (8.0) - (12.0)\n")
    assert stated(prefixed) == ["capability-warning-false-positive"]
    # Another major (no 12.x cubin runs on 13.0) or below the minimum: not a false positive.
    for gpu, cc, low, high in (("Future", "13.0", "8.0", "12.0"), ("Tesla K80", "3.7", "5.0", "9.0"),
                               ("RTX 5090", "12.0", "5.0", "9.0")):
        report = explain_report(WARNING.format(gpu=gpu, cc=cc, low=low, high=high), CATALOG, kb=KB)
        assert "capability-warning-false-positive" not in [e.signature.id for e in report.explanations]
        assert "capability-warning-false-positive" in [c for c, _ in report.contradicted]
        # Below the minimum the GPU is too old for the build (its own test below).
        too_old = ["gpu-too-old-for-torch"] if cc == "3.7" else []
        assert [e.signature.id for e in report.explanations] == too_old


def test_windows_loader_messages_state_no_single_cause() -> None:
    # pytorch/pytorch#181375: a nightly wheel without its cuDNN DLLs gave the same WinError 126.
    text = ('OSError: [WinError 126] The specified module could not be found. Error loading '
            '"F:\\Python314\\install\\Lib\\site-packages\\torch\\lib\\shm.dll" or one of its dependencies.\n')
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and len(found.candidates) == 4
    # Windows' ERROR_COMMITMENT_LIMIT in Simplified Chinese (pytorch/pytorch#12711) is the paging file.
    paging = "ImportError: DLL load failed: 页面文件太小，无法完成操作`\n"
    assert stated(paging) == ["windows-paging-file-too-small"]


def test_sigill_in_the_words_of_the_shell_python_and_uv() -> None:
    for text in ("$ python3 -c 'import torch'\nIllegal instruction\n",
                 "subprocess.CalledProcessError: Command '['python', 'x.py']' died with "
                 "<Signals.SIGILL: 4>.\n",
                 "DEBUG Command exited with signal: Some(4)\n"):
        assert stated(text) == ["illegal-instruction"], text
    # CUDA's own "illegal instruction" is a GPU kernel fault, and another signal is not SIGILL.
    for text in ("RuntimeError: CUDA error: an illegal instruction was encountered\n",
                 "DEBUG Command exited with signal: Some(9)\n"):
        assert "illegal-instruction" not in stated(text), text


def test_glibc_symbol_version_message_reads_as_a_cuda_library_of_another_release() -> None:
    # microsoft/onnxruntime#8594: an older libcublasLt.so.11 loaded first (glibc's elf/dl-lookup.c wording).
    text = ("OSError: /env/lib/libcublas.so.11: symbol free_gemm_select version libcublasLt.so.11 "
            "not defined in file libcublasLt.so.11 with link time reference\n")
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.kind, library.problem) == ("libcublasLt.so.11", "cuda", "incompatible")
    assert stated(text) == ["cuda-library-shadowed"]
    # The same library plainly missing is not another release.
    missing = "OSError: libcublasLt.so.11: cannot open shared object file: No such file or directory\n"
    assert "cuda-library-shadowed" not in stated(missing)


def test_a_mangled_cuda_library_symbol_with_its_version_reads_as_a_shadowed_library() -> None:
    # pytorch/pytorch#119989: a C++ symbol in cuDNN's namespace, versioned with the library it comes
    # from (glibc's "undefined symbol: S, version V"): another copy of that library was loaded.
    text = ("Could not load library libcudnn_cnn_train.so.8. Error: /usr/local/cuda-12.3/lib64/"
            "libcudnn_cnn_train.so.8: undefined symbol: _ZN5cudnn3cnn34layerNormFwd_execute_internal_"
            "implERKNS_7backend11VariantPackEP11CUstream_st, version libcudnn_cnn_infer.so.8\n")
    assert stated(text) == ["cuda-library-shadowed"]
    # Counter-cases: a symbol of another namespace; the library itself missing.
    other = text.replace("_ZN5cudnn3cnn", "_ZN5torch3cnn")
    assert "cuda-library-shadowed" not in stated(other)
    missing = ("Could not load library libcudnn_cnn_train.so.8. Error: libcudnn_cnn_train.so.8: cannot open "
               "shared object file: No such file or directory\n")
    assert stated(missing) == ["cudnn-library-missing"]


def test_torch_not_compiled_with_cuda_is_a_family_of_where_the_cpu_torch_comes_from() -> None:
    # patientx-cfz/comfyui-rocm#131: a CPU torch in the user site shadowed the env's ROCm build; the
    # assertion alone proves a CPU-only torch was imported, not how it got first on sys.path.
    text = "AssertionError: Torch not compiled with CUDA enabled\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-not-compiled-with-cuda"
    causes = " ".join(c.cause for c in found.candidates)
    assert "installed in this environment" in causes and "user site-packages" in causes
    checks = " ".join(c.check for c in found.candidates)
    assert "torch.__file__" in checks
    # Counter-case: a GPU torch that sees no GPU is not this family.
    assert "torch-not-compiled-with-cuda" not in stated("RuntimeError: No CUDA GPUs are available\n")


def test_build_and_distributed_messages_in_their_tools_own_words() -> None:
    cases = (
        ("C:\\CUDA\\v11.8\\include\\crt/host_config.h(153): fatal error C1189: #error:  -- unsupported "
         "Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) are "
         "supported!",
         "unsupported-msvc"),
        ("CMake Error at CMakeLists.txt:20 (enable_language):\n  No CMAKE_CUDA_COMPILER could be found.\n",
         "cmake-cuda-compiler-not-found"),
        ("LINK : fatal error LNK1181: cannot open input file 'aio.lib'\n", "libaio-missing"),
        ("/usr/bin/ld: cannot find -laio: No such file or directory\n", "libaio-missing"),
        ("RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build "
         "PyTorch from source on a host that has MPI installed.\n", "mpi-backend-not-built"),
        ("ImportError: libmpi_cxx.so.40: cannot open shared object file: No such file or directory\n",
         "mpi-library-missing"),
    )
    for text, sig in cases:
        assert sig in stated(text), (sig, stated(text))
    # Counter-cases: another library, another backend, the gcc refusal.
    assert "libaio-missing" not in stated("/usr/bin/ld: cannot find -laiofoo\n")
    assert "mpi-library-missing" not in stated("ImportError: libmpfr.so.6: cannot open shared object file\n")
    nccl = "RuntimeError: Distributed package doesn't have NCCL built in\n"
    assert "mpi-backend-not-built" not in stated(nccl)
    gcc = "#error -- unsupported GNU version! gcc versions later than 10 are not supported!\n"
    assert "unsupported-msvc" not in stated(gcc)


def test_musl_loader_words_and_torch_api_compile_errors() -> None:
    musl = ("ImportError: Error loading shared library ld-linux-x86-64.so.2: No such file or directory "
            "(needed by /usr/lib/python3.5/site-packages/torch/_C.cpython-35m-x86_64-linux-gnu.so)\n")
    assert stated(musl) == ["musl-libc-unsupported"]
    relocating = ("ImportError: Error relocating /site-packages/torch/lib/libcudnn.so.6: __strtod_internal: "
                  "symbol not found\n")
    assert stated(relocating) == ["musl-libc-unsupported"]
    # glibc's own loader missing another library is not musl.
    glibc = "libfoo.so.1: cannot open shared object file: No such file\n"
    assert "musl-libc-unsupported" not in stated(glibc)
    for text in ('csrc/type_shim.h(13): error: class "at::Type" has no member "scalarType"\n',
                 "csrc/x.cpp:9:13: error: 'deprecated_AT_CHECK' is not a member of 'at'\n",
                 "csrc/layer_norm_cuda_kernel.cu:4:37: fatal error: ATen/cuda/DeviceUtils.cuh: "
                 "No such file or directory\n"):
        assert "extension-source-needs-other-torch" in stated(text), text
    # torch's entry header missing: torch not found at all; a name outside torch's namespaces: not torch's.
    for text in ("fatal error: ATen/ATen.h: No such file or directory\n",
                 "error: 'optional' is not a member of 'std'\n"):
        assert "extension-source-needs-other-torch" not in stated(text), text


def test_cuda_python_failed_dlopen_is_a_missing_driver_library() -> None:
    # NVIDIA/cuda-python#17 (WSL: libcuda.so lives in /usr/lib/wsl/lib).
    assert stated("RuntimeError: Failed to dlopen libcuda.so\n") == ["libcuda-missing"]


def test_driver_api_symbols_ipex_pins_and_mig_asserts() -> None:
    # sgl-project/sglang#8131: a driver API name (cuXxx) the installed libcuda lacks.
    driver = "ImportError: /x/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate\n"
    assert stated(driver) == ["call-requires-newer-driver"]
    # cuBLAS' and the runtime's names are not the driver API's.
    for other in ("ImportError: /x/ext.so: undefined symbol: cublasLtMatmul\n",
                  "ImportError: /x/ext.so: undefined symbol: cudaGetDriverEntryPointByVersion\n"):
        assert "call-requires-newer-driver" not in stated(other), other
    ipex = ("ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.2.*, but PyTorch 2.1.0+cu121 "
            "is found. Please switch to the matching version and run again.\n")
    assert stated(ipex) == ["companion-needs-other-torch"]
    mig = ('"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" with torch 2.5.0 on 2 GPU '
           "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb\n")
    assert stated(mig) == ["mig-single-instance"]
    assert "mig-single-instance" not in stated("device >= 0 && device < num_gpus INTERNAL ASSERT FAILED\n")


def test_onnxruntime_cuda_provider_refusal_is_the_extensions_library_family() -> None:
    # microsoft/onnxruntime#21769: onnxruntime prints this only after its CUDA provider library failed
    # to load (onnxruntime_pybind_state.cc); Windows' error 126 names no DLL.
    text = ('[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" when trying to load '
            '"C:\\env\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"\n'
            "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965] Failed to create "
            "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-cuda-library-missing" and len(found.candidates) == 2
    assert stated("Failed to create TensorrtExecutionProvider. Please reference the docs\n") == []


def test_xformers_without_cuda_kernels_is_a_family_unless_its_build_line_is_shown() -> None:
    text = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "`cutlassF-pt` is not supported because:\n    xFormers wasn't build with CUDA support\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "xformers-cuda-kernels-unavailable" and len(found.candidates) == 2
    built = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
             "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\n")
    assert stated(built + text) == ["xformers-torch-mismatch"]


def test_mmcv_range_from_mmdets_check_cut_short_and_from_pip() -> None:
    cut = '"MMCV==2.2.0 is used but incompatible." \n'
    pip = ('mmdet 3.3.0 requires mmcv<2.2.0,>=2.0.0rc4; extra == "mim", but you have mmcv 2.2.0 which is '
           "incompatible.\n")
    for text in (cut, pip):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "mmcv-version-incompatible" and found.facts["mmcv_version"] == "2.2.0"
    assert "mmcv-version-incompatible" not in stated("mmdet 3.3.0 requires numpy<2, but you have numpy 2.1.0 "
                                                     "which is incompatible.\n")


def test_capability_warning_below_the_builds_oldest_arch_is_a_gpu_too_old_for_torch() -> None:
    # Kaggle/docker-python#1546: a P100 (6.0) under a cu128 build whose range starts at 7.0; torch's
    # third warning names sm_60 too, but the cause is the GPU's age, not a missing arch of its era.
    text = (WARNING.format(gpu="Tesla P100-PCIE-16GB", cc="6.0", low="7.0", high="12.0")
            + "Tesla P100-PCIE-16GB with CUDA capability sm_60 is not compatible with the current PyTorch "
              "installation.\nThe current PyTorch install supports CUDA capabilities sm_70 sm_75 sm_80 "
              "sm_86 sm_90 sm_100 sm_120.\n")
    report = explain_report(text, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["gpu-too-old-for-torch"]
    assert "arch-not-compiled" in [c for c, _ in report.contradicted]
    # Above the range, or an arch list that holds an older arch than the GPU: not too old.
    above = WARNING.format(gpu="Future", cc="13.0", low="8.0", high="12.0")
    assert "gpu-too-old-for-torch" not in stated(above)
    inside = ("RTX 3050 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
              "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75.\n")
    assert stated(inside) == ["arch-not-compiled"]


def test_nccls_driver_api_check_reads_the_cuda_error_by_its_code_and_message() -> None:
    # NCCL's CUCHECK (src/include/checks.h) prints "Cuda failure %d '%s'" (hiyouga/LlamaFactory#8968).
    text = "[rank3]: Cuda failure 802 'system not yet initialized'\n"
    assert stated(text) == ["fabric-manager-not-running"]
    assert "fabric-manager-not-running" not in stated("[rank3]: Cuda failure 2 'out of memory'\n")


def test_nvrtc_builtins_missing_reads_as_a_cuda_library_of_its_major() -> None:
    # NVRTC opens libnvrtc-builtins.so.<major>.<minor> at run time; nvidia-cuda-nvrtc-cu12's wheel
    # ships it in nvidia/cuda_nvrtc/lib/ (p-gueguen/rctd-py#17).
    text = ("import torch ...\nnvrtc: error: failed to open libnvrtc-builtins.so.13.0.\n"
            "  Make sure that libnvrtc-builtins.so.13.0 is installed correctly.\n")
    (library,) = extract(text, KB).libraries
    assert (library.kind, library.major, library.pip) == ("cuda", "13", "nvidia-cuda-nvrtc-cu13")
    assert stated(text) == ["cuda-runtime-library-missing"]
    # libnvrtc itself keeps its own row.
    (plain,) = extract("OSError: libnvrtc.so.12: cannot open shared object file\n", KB).libraries
    assert plain.library == "NVRTC"


def test_ctranslate2s_own_wording_for_a_library_it_cannot_open_is_the_extensions_library() -> None:
    # OpenNMT/CTranslate2 src/cuda/cublas_stub.cc:
    # "Library " CUBLAS_LIBNAME " is not found or cannot be loaded"
    text = ('  File "D:\\env\\lib\\site-packages\\faster_whisper\\transcribe.py", line 629, in encode\n'
            "    return self.model.encode(features, to_cpu=to_cpu)\n"
            "RuntimeError: Library cublas64_12.dll is not found or cannot be loaded\n")
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.kind, library.major) == ("cublas64_12.dll", "cuda", "12")
    # the extension's CUDA library family (a Windows DLL's family may speak beside it)
    assert "extension-cuda-library-missing" in stated(text)
    assert set(stated(text)) <= {"extension-cuda-library-missing", "windows-dll-load-failed"}
    # the same words about a file that is no library
    assert extract("RuntimeError: Library model.bin is not found or cannot be loaded\n", KB).libraries == []


def test_tensorflows_dso_loader_not_opening_cudnn_is_the_cudnn_family() -> None:
    # tensorflow/tensorflow#5591: TensorFlow 1.x opened the unversioned names and logged each
    text = (">>> import tensorflow\n"
            "I tensorflow/stream_executor/dso_loader.cc:111] successfully opened CUDA library "
            "libcublas.so locally\n"
            "I tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA library libcudnn.so. "
            "LD_LIBRARY_PATH: \n")
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.kind) == ("libcudnn.so", "cudnn")
    assert stated(text) == ["cudnn-library-missing"]
    # a library opened is no failure; one an extension asked for is the extension's cause
    assert stated(text.splitlines(keepends=True)[1]) == []
    extension = ('  File "/v/lib/python3.10/site-packages/onnxruntime/capi/_pybind_state.py", line 3\n'
                 "OSError: Couldn't open CUDA library libcudnn.so.8\n")
    assert stated(extension) == ["extension-cuda-library-missing"]


def test_onnxruntimes_cuda_provider_not_loaded_is_the_extensions_cuda_library_family() -> None:
    # onnxruntime/python/onnxruntime_pybind_state.cc: the CUDA provider library did not load, CUDA_PATH set
    text = ("RuntimeError: D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:739 "
            "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasn't able "
            "to be loaded. Please install the correct version of CUDA and cuDNN as mentioned in the GPU "
            "requirements page\n")
    assert stated(text) == ["extension-cuda-library-missing"]
    assert stated("ROCM_PATH is set but ROCM wasn't able to be loaded.\n") == []


def test_a_torch_library_an_extension_cannot_open_cut_after_shared_is_still_that_family() -> None:
    # pyg-team/pytorch_geometric#8365: the report stops after "cannot open shared"
    text = ("---> [20] from torch_sparse import SparseTensor\n"
            "OSError: libtorch_cuda_cu.so: cannot open shared\n")
    assert stated(text) == ["torch-library-missing"]
    assert stated("OSError: libtorch_cuda_cu.so: cannot open shared memory segment for the cache\n") == []


def test_the_loaders_undefined_symbol_without_its_library_is_the_undefined_symbol_family() -> None:
    # dlerror's "<library>: undefined symbol: S" pasted from the symbol on, a torch C++ symbol (whose
    # library the text does not name: an extension's or a companion's) (sgl-project/sglang#30562)
    assert stated("undefined symbol: c10::MessageLogger::stream[abi:cxx11]()\n") == ["undefined-symbol"]
    assert stated("ImportError: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs\n") == \
        ["undefined-symbol"]
    # another library's symbol without its library is read by that library's signatures
    assert "undefined-symbol" not in stated("undefined symbol: cudaGraphInstantiateWithFlags, version "
                                            "libcudart.so.11.0\n")
    # the words inside a sentence are no loader message
    assert stated("I think the build left an undefined symbol: foo somewhere\n") == []


def test_insufficient_driver_is_the_driver_too_old_where_the_text_shows_driver_and_build() -> None:
    smi = "| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |\n"
    error = "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
    assert stated(smi + "PyTorch version: 2.3.0+cu121\n" + error) == ["driver-too-old"]
    # nvidia-smi's CUDA Version alone tells it too: 11.4 runs no CUDA 12 build
    assert stated("CUDA Version: 11.4\nPyTorch version: 2.3.0+cu121\n" + error) == ["driver-too-old"]
    # a CUDA 11.8 build runs on driver 470 (minor-version compatibility); no driver or no build
    # shown: the family, whose candidates include a driver the process cannot reach
    for text in (smi + "PyTorch version: 2.3.0+cu118\n" + error, "PyTorch version: 2.3.0+cu121\n" + error,
                 smi + error):
        assert stated(text) == ["driver-insufficient-for-runtime"], text


def test_a_hardware_xid_in_the_kernel_log_states_the_gpu_fault_over_the_kernel_fault() -> None:
    # NVIDIA's Xid catalog: 79 the GPU fell off the bus, 48/63/64/92/94/95 ECC, 74 NVLink
    fault = "RuntimeError: CUDA error: unspecified launch failure\n"
    for log in ("[ 8123.442] NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, GPU has fallen off the bus.",
                "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping",
                "XID 48 An uncorrectable double bit error (DBE) has been detected on GPU (0000:3b:00)"):
        (error,) = extract(log, KB).gpu_errors
        assert (error.api, error.kind) == ("xid", "hardware"), log
        assert stated(fault + log) == ["gpu-hardware-fault"], log
    # an application's Xid (13: graphics engine exception; 31: its own page fault) is no hardware fault
    for log in ("NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception",
                "NVRM: Xid (PCI:0000:01:00): 31, pid=9"):
        assert extract(log, KB).gpu_errors == [] and stated(fault + log) == ["cuda-kernel-fault"], log


def test_npp_is_a_cuda_library_of_its_cuda_major() -> None:
    # nvidia-npp-cu12 ships nvidia/npp/lib/libnppicc.so.12 (its wheel's file list)
    (library,) = extract("OSError: libnppicc.so.12: cannot open shared object file\n", KB).libraries
    assert (library.kind, library.major, library.pip) == ("cuda", "12", "nvidia-npp-cu12")
    # said in words, no importer shown (meta-pytorch/torchcodec#1257): the CUDA library family
    text = "the root cause turned out to be that I couldn't load `libnppicc.so`\n"
    assert stated(text) == ["cuda-runtime-library-missing"]
    (dll,) = extract("Could not locate nppicc64_12.dll\n", KB).libraries
    assert (dll.kind, dll.major) == ("cuda", "12")
