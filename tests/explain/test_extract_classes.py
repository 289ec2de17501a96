"""Whole classes of messages read by the extractors, and the causes reasoned from what they read.

Each text is quoted from the public thread named beside it (the development part of the field
corpus); each test asserts the class, not the one text: the same reading serves every member.
"""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.messages import plain_quotes


def test_typographic_quotes_read_as_ascii_one_for_one() -> None:
    text = "NVIDIA-SMI has failed because it couldn\u2018t communicate \u201clibcuda.so\u201d"
    plain = plain_quotes(text)
    assert plain == "NVIDIA-SMI has failed because it couldn't communicate \"libcuda.so\""
    assert len(plain) == len(text)


def test_the_loader_is_read_in_its_wordings() -> None:
    # tensorflow/tensorflow#5591, meta-pytorch/torchcodec#1257, pyg-team/pytorch_geometric#8365
    for text, soname in (
        ("I tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA library libcudnn.so. "
         "LD_LIBRARY_PATH: ", "libcudnn.so"),
        ("the root cause turned out to be that I couldn't load `libnppicc.so`, even though", "libnppicc.so"),
        ("OSError: libtorch_cuda_cu.so: cannot open shared", "libtorch_cuda_cu.so"),
        ("make[2]: *** No rule to make target '/usr/local/cuda/lib64/libnvToolsExt.so', needed by "
         "'foreach_cuda'.  Stop.", "libnvToolsExt.so"),
    ):
        assert [lib.soname for lib in extract(text, KB).libraries] == [soname], text
    # a line saying the library was opened is not a failure
    assert not extract("successfully opened CUDA library libcublas.so locally", KB).libraries


def test_the_library_that_asked_is_not_the_missing_one() -> None:
    # microsoft/onnxruntime#12540
    text = ("FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublas.so.11: "
            "cannot open shared object file: No such file or directory")
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.needed_by) == ("libcublas.so.11", "libonnxruntime_providers_cuda.so")


def test_a_library_found_without_the_procedure_asked_for_is_another_release() -> None:
    # PaddlePaddle/PaddleDetection#8265: Windows error 127 is "the specified procedure could not be found"
    text = "推理的时候出现：Could not load library cudnn_cnn_infer64_8.dll. Error code 127"
    (library,) = extract(text, KB).libraries
    assert (library.kind, library.problem) == ("cudnn", "incompatible")
    assert causes(text) == ["cudnn-version-incompatible"]
    assert "cudnn-library-missing" not in causes(text)


def test_a_symbol_version_names_whose_symbol_it_is() -> None:
    # pytorch/pytorch#166101; pyg-team/pytorch_geometric#506
    glibc = "/usr/bin/ld: libtorch_cpu.so: undefined reference to `hypot@GLIBC_2.35'"
    (symbol,) = extract(glibc, KB).symbols
    assert (symbol.symbol, symbol.version, symbol.owner_kind) == ("hypot", "GLIBC_2.35", "glibc")
    assert causes(glibc) == ["glibc-too-old"]
    std = 'I still met the problem that "undefined symbol: _ZNSt13runtime_errorC2EPKc"'
    assert extract(std, KB).symbols[0].owner_kind == "libstdcxx"
    assert "glibcxx-not-found" in causes(std)
    # a std:: container of torch's types is torch's interface, not libstdc++'s
    torch_vector = "undefined symbol: _ZNSt6vectorIN2at6TensorESaIS1_EE17_M_realloc_insertEv"
    assert extract(torch_vector, KB).symbols[0].owner_kind == "torch"


def test_a_cuda_library_of_another_major_than_the_cuda_named_is_mixed_cuda() -> None:
    # iSEE-Laboratory/LLMDet#32
    text = ("ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory\n"
            "我的系统ubuntu20.04+nvidia530.30+cuda12.1+cudnn12.X")
    assert extract(text, KB).environment.cuda == "12.1"
    assert "extension-cuda-mismatch" in causes(text)
    same_major = text.replace("cuda12.1", "cuda10.2")
    assert "extension-cuda-mismatch" not in causes(same_major)


def test_torch_imported_from_a_directory_that_is_no_installation() -> None:
    # pytorch/pytorch#26526 (a traceback), pytorch/pytorch#11222 (IPython's frames)
    windows = ('  File "D:\\Gaurav\\pytorch-master\\torch\\__init__.py", line 81, in <module>\n'
               "    from torch._C import *\nModuleNotFoundError: No module named 'torch._C'\n")
    ipython = ("----> 1 import torch\n\n/opt/pytorch/torch/__init__.py in <module>()\n     82     pass\n\n"
               "ModuleNotFoundError: No module named 'torch._C'\n")
    for text in (windows, ipython):
        assert causes(text) == ["source-tree-shadows-install"], text
    installed = windows.replace("D:\\Gaurav\\pytorch-master", "C:\\Python38\\Lib\\site-packages")
    assert "source-tree-shadows-install" not in causes(installed)


def test_pip_on_a_32_bit_python_finds_no_torch_wheel() -> None:
    # pytorch/pytorch#37379: pip fell back to building the placeholder sdist
    text = ("ERROR: Command errored out with exit status 1:\n     command: 'c:\\program files (x86)\\"
            "python38-32\\python.exe' -u -c 'import sys; sys.argv[0] = '\"'\"'C:\\\\Users\\\\lucky\\\\AppData"
            "\\\\Local\\\\Temp\\\\pip-install-_fpxa43a\\\\torch\\\\setup.py'\"'\"'\n")
    read = extract(text, KB)
    assert (read.environment.machine, read.source_builds) == ("x86", ["torch"])
    assert causes(text) == ["no-matching-distribution"]
    assert causes(text.replace("python38-32", "python38")) == []


def test_a_cxx11_abi_name_is_not_read_as_an_old_libstdcxx() -> None:
    # rusty1s/pytorch_scatter#234: std::__cxx11 names exist in every libstdc++ since GCC 5
    text = ("OSError: */_version.so: undefined symbol: "
            "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEC1Ev")
    assert extract(text, KB).symbols[0].owner_kind == "libstdcxx-abi"
    assert "glibcxx-not-found" not in causes(text)


def test_cublas_and_cudnn_statuses_are_read_from_their_enums() -> None:
    # opendatalab/MinerU#1508: a bf16 GEMM refused on a GPU without bf16 (Tesla M40)
    text = ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx("
            "handle, opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea)`")
    read = extract(text, KB)
    status = next(e for e in read.gpu_errors if e.api == "cublas")
    assert (status.name, status.code, status.kind) == ("CUBLAS_STATUS_NOT_SUPPORTED", 15, "unsupported")
    assert read.dtypes == ["bf16"]
    # no GPU named: the status also means a library without that call, so only the family speaks
    assert causes(text) == ["bf16-call-refused"]
    # a GPU below 8.0 shown (a Tesla T4, 7.5) proves the cause
    assert causes(text + "\nGPU 0: Tesla T4") == ["bf16-unsupported-gpu"]
    # the same refusal on a GPU with bf16 (an A100, 8.0) is not about bf16
    bf16 = {"bf16-unsupported-gpu", "bf16-call-refused"}
    assert not bf16 & set(causes(text + "\nGPU 0: NVIDIA A100-SXM4-80GB"))
    assert not bf16 & set(causes(text.replace("CUDA_R_16BF", "CUDA_R_32F")))
    cudnn = extract("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", KB).gpu_errors[0]
    assert (cudnn.api, cudnn.code, cudnn.kind) == ("cudnn", 1, "init")


def test_float32_results_that_differ_on_an_ampere_gpu_read_as_tf32() -> None:
    # pytorch/pytorch#58434 (RTX 3090), pytorch/pytorch#75778 ("A4000" is the RTX A4000)
    text = ("- RTX 3090 + PyTorch 1.8.1 with CUDA 11.1\n- GTX 1080 Ti + PyTorch 1.8.1 with CUDA 10.2\n"
            "The results from the last 3 were the same, whereas that from RTX 3090 were totally different.\n")
    assert "discrepancy" in extract(text, KB).symptoms
    assert causes(text) == ["tf32-precision"]
    a4000 = ("`torch.matmul` produces wrong result for matrices (n*m) with large m and small n.\n"
             "This bug is only seen on my A4000 devices but not on 2070 devices.\n")
    assert causes(a4000) == ["tf32-precision"]
    # no TF32 before Ampere; differing runs are nondeterminism; an error is not a precision surprise
    assert causes(text.replace("RTX 3090", "RTX 2080")) == []
    assert causes(text + "The results are different between runs.\n") == []
    assert causes(text + "RuntimeError: CUDA error: an illegal memory access was encountered\n") != [
        "tf32-precision"]


def test_nan_in_a_float16_run_reads_as_float16_overflow_where_inf_is_shown() -> None:
    # Lightning-AI/pytorch-lightning#12600
    text = "Using autograd.grad twice with 16bit mixed-precision always returns NaN values."
    assert {"nan", "fp16"} <= set(extract(text, KB).symptoms)
    # NaN alone is also divergence, data or one operation: the family, with checks
    assert causes(text) == ["fp16-nan"]
    # inf values or an overflow shown prove the range
    assert causes(text + " The loss goes to inf first.") == ["fp16-overflow"]
    assert causes(text.replace("16bit mixed-precision", "bf16")) == []


def test_a_torch_dll_windows_could_not_load_reads_as_a_dll_load_failure() -> None:
    # pytorch/pytorch#138986: torch's own message, cut before its WinError
    text = 'Error loading ".venv\\Lib\\site-packages\\torch\\lib\\c10_xpu.dll" or one of its dependencies'
    (library,) = extract(text, KB).libraries
    assert (library.soname, library.kind) == ("c10_xpu.dll", "torch")
    assert causes(text) == ["windows-dll-load-failed"]
    # the paging file (WinError 1455) is another failure, with its own family
    paging = "OSError: [WinError 1455] The paging file is too small for this operation to complete.\n" + text
    assert "windows-dll-load-failed" not in causes(paging)


def test_installer_messages_of_rust_tools_are_read_like_pips() -> None:
    # uv prints reqwest's and rustls' errors and Rust's io errors (astral-sh/uv#1819, uv's own
    # timeout message in crates/uv-distribution)
    gone = ("  ╰─▶ HTTP status client error (404 Not Found) for url\n"
            "      (https://download.pytorch.org/whl/nightly/cu121/torch-2.2.0.dev20231010%2Bcu121-cp310-cp310"
            "-linux_x86_64.whl)")
    read = extract(gone, KB)
    assert [h.status for h in read.http] == ["404"]
    assert "wheel-url-gone" in causes(gone)
    for text, cause in (
        ("error: invalid peer certificate: UnknownIssuer", "ssl-certificates-untrusted"),
        ("  ╰─▶ Failed to download distribution due to network timeout. Try increasing UV_HTTP_TIMEOUT "
         "(current value: 30s).", "download-timeout"),
        ("error: failed to write to file `/tmp/x`: No space left on device (os error 28)",
         "pip-no-space-left"),
    ):
        assert causes(text) == [cause], text


def test_cublas_and_cudnn_statuses_name_their_families() -> None:
    alloc = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
    assert causes(alloc) == ["cuda-out-of-memory"]
    assert "cudnn-version-incompatible" in causes("cuDNN error: CUDNN_STATUS_VERSION_MISMATCH")


def test_a_cause_of_one_gpu_vendor_does_not_fire_on_the_others_gpu() -> None:
    rocm_on_nvidia = ("GPU 0: NVIDIA GeForce RTX 3060 (UUID: GPU-1b2c)\n"
                      "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    report = explain_report(rocm_on_nvidia, CATALOG, kb=KB)
    # the NVIDIA GPU proves the other vendor's cause: a ROCm build on an NVIDIA machine
    assert [e.signature.id for e in report.explanations] == ["wrong-gpu-vendor-build"]
    assert "rocm-gfx-target-unsupported" in dict(report.contradicted)
    assert "hip-invalid-device-function" in causes(rocm_on_nvidia.split("\n", 1)[1])
    cuda_on_amd = ("AMD Radeon RX 6800 XT\nRuntimeError: Found no NVIDIA driver on your system. Please check "
                   "that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx")
    assert "no-nvidia-driver" not in causes(cuda_on_amd)
    assert "wrong-gpu-vendor-build" in causes(cuda_on_amd)
    assert "no-nvidia-driver" in causes(cuda_on_amd.split("\n", 1)[1])


def test_what_was_read_says_the_new_facts_when_nothing_is_recognised() -> None:
    from torchsmith.explain.readout import next_checks, read_lines

    read = extract("Could not load library foo64_8.dll. Error code 127\n"
                   "The results are different on the GPU, NaN values\n", KB)
    lines = read_lines(read)
    assert any("found foo64_8.dll, but not a procedure in it" in line for line in lines)
    assert any(line.startswith("The text reports, without an error:") for line in lines)
    assert any(check.startswith("where foo64_8.dll") for check in next_checks(read))
    glibc = extract("OSError: libfoo.so: undefined symbol: hypot, version GLIBC_2.35", KB)
    assert any("version GLIBC_2.35" in line for line in read_lines(glibc))


def test_a_library_missing_at_link_time_is_not_a_loader_failure() -> None:
    # a build's link step ("ld: cannot find -lcuda", make's "No rule to make target") is not the
    # run-time loader: libcuda-missing and the other run-time causes do not apply
    link = "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status"
    (library,) = extract(link, KB).libraries
    assert (library.soname, library.problem) == ("libcuda.so", "link")
    assert causes(link) == ["cuda-link-library-missing"]
    assert "libcuda-missing" in causes("ImportError: libcuda.so.1: cannot open shared object file")


def test_the_machine_is_not_read_from_a_marker_or_from_what_a_library_file_has() -> None:
    # A PEP 508 marker names machines a requirement is for, not this one; dyld names what the file has
    # and then what the process needs (the process is this Python).
    marker = ("  ╰─▶ Because torch{platform_machine == 'aarch64' or platform_machine == 'x86_64'}==2.5.1 "
              "has no wheels with a matching platform tag (e.g., `macosx_14_0_arm64`)")
    assert extract(marker, KB).environment.machine == "arm64"
    dyld = ("ImportError: dlopen(/Users/me/venv/lib/python3.12/site-packages/pkg/_ext.so, 0x0002): tried: "
            "'/Users/me/venv/lib/python3.12/site-packages/pkg/_ext.so' (mach-o file, but is an "
            "incompatible architecture (have 'x86_64', need 'arm64'))")
    assert extract(dyld, KB).environment.machine == "arm64"
    assert extract(dyld.replace("'x86_64'", "'arm64'", 1).replace("need 'arm64'", "need 'x86_64'"),
                   KB).environment.machine == "x86_64"
    assert extract("Platform: Linux-5.15.0-x86_64-with-glibc2.35", KB).environment.machine == "x86_64"
