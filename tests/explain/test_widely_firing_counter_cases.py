"""Counter-cases for the assertions that fire most widely: an unseen text of the same shape whose
cause is another, where the older signature stated its own. Each keeps the shape it was written
for stating its cause."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_nvcc_not_found_answering_a_lookup_by_hand_is_not_a_failed_build() -> None:
    # an issue template's environment dump: the user typed `nvcc --version`; nothing was being built
    dump = ("Environment:\n - torch 2.1.0+cu118\n$ nvcc --version\nbash: nvcc: command not found\n\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert "cuda-home-not-set" not in stated(dump)
    assert "cuda-home-not-set" not in stated("-bash: nvcc: command not found\n")
    # the same lookup beside a build that needed nvcc, and a build script's own shell: the cause
    build = ("$ nvcc --version\nbash: nvcc: command not found\n"
             "  Building wheel for flash-attn (setup.py) ... error\n")
    assert stated(build) == ["cuda-home-not-set"]
    script = "Obtained compute capability 80 from PyTorch\nsh: 1: nvcc: not found\n"
    assert stated(script) == ["cuda-home-not-set"]


def test_torchs_cl_version_warning_is_not_missing_build_tools_where_the_build_went_on() -> None:
    # cpp_extension warns and goes on; setuptools finds MSVC itself (vswhere) and runs cl.exe
    warning = ("C:\\venv\\lib\\site-packages\\torch\\utils\\cpp_extension.py:383: UserWarning: "
               "Error checking compiler version for cl: [WinError 2] The system cannot find the file "
               "specified\n")
    ran = (warning + "C:\\Program Files\\Microsoft Visual Studio\\2022\\BuildTools\\VC\\Tools\\MSVC"
           "\\14.38.33130\\bin\\HostX86\\x64\\cl.exe /c /nologo /O2 csrc/ext.cpp\n"
           "csrc/ext.cpp(12): fatal error C1083: Cannot open include file: 'sparsehash/dense_hash_map': "
           "No such file or directory\n")
    assert "msvc-build-tools-missing" not in stated(ran)
    nvcc = warning + "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
    assert stated(nvcc) == ["nvcc-unsupported-arch"]
    # the warning alone, or beside setuptools' own refusal: the build tools are missing
    assert stated(warning) == ["msvc-build-tools-missing"]
    refused = warning + "error: Microsoft Visual C++ 14.0 or greater is required.\n"
    assert stated(refused) == ["msvc-build-tools-missing"]


def test_an_extensions_own_function_taking_torch_types_is_not_torchs_symbol() -> None:
    # the module lacks its own function (a CUDA source not compiled in): at::Tensor is only a parameter
    own = ("ImportError: /home/u/DCNv2/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
           "_Z19dcn_v2_cuda_forwardRKN2at6TensorES2_S2_S2_S2_iiiiiiiii\n")
    nested = "ImportError: /x/site-packages/mylib/_C.so: undefined symbol: _ZN5mylib7forwardERKN2at6TensorE\n"
    # a name that merely contains '2at' (a 12-character attention_op)
    inside = "ImportError: /x/fused/_C.so: undefined symbol: _ZN12attention_op7forwardEPKfPfiii\n"
    for text in (own, nested, inside):
        assert "extension-abi-mismatch" not in stated(text), text
    # torch's own functions: c10::cuda::SetDevice, c10::Error's constructor taking a __cxx11 string
    for symbol in ("_ZN3c104cuda9SetDeviceEi",
                   "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"):
        text = f"ImportError: /x/site-packages/flash_attn_2_cuda.so: undefined symbol: {symbol}\n"
        assert stated(text) == ["extension-abi-mismatch"], symbol


def test_enospc_while_a_program_runs_is_not_an_install_out_of_disk() -> None:
    # multiprocessing's shared memory (/psm_...) and torch.save's checkpoint: no installer wrote
    shm = ('  File "/usr/lib/python3.10/multiprocessing/shared_memory.py", line 114, in __init__\n'
           "    os.ftruncate(self._fd, size)\nOSError: [Errno 28] No space left on device: '/psm_4f2a1c'\n")
    save = ('Traceback (most recent call last):\n  File "train.py", line 210, in <module>\n'
            '    torch.save(state, path)\n'
            '  File "/venv/lib/python3.10/site-packages/torch/serialization.py", line 628, in save\n'
            "OSError: [Errno 28] No space left on device\n")
    for text in (shm, save):
        assert "pip-no-space-left" not in stated(text), text
    # pip's own wording, pip's traceback, and the bare message: the install filled the disk
    pip = ('  File "/venv/lib/python3.10/site-packages/pip/_internal/operations/install/wheel.py", line 600\n'
           "OSError: [Errno 28] No space left on device\n")
    for text in (pip, "[Errno 28] No space left on device\n",
                 "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"):
        assert stated(text) == ["pip-no-space-left"], text


def test_nvcc_refusing_an_architecture_its_shown_release_compiles_is_not_its_age() -> None:
    def refused(release: str, arch: str) -> str:
        return (f"Cuda compilation tools, release {release}, V{release}.1\n"
                f"nvcc fatal   : Unsupported gpu architecture '{arch}'\n")

    # 12.4 compiles compute_90 and compute_53; 13.0 calls Thor's sm_101 sm_110 (cuda.json arch_support)
    for release, arch in (("12.4", "compute_90"), ("13.0", "compute_101"), ("12.4", "compute_53")):
        said = stated(refused(release, arch))
        assert "nvcc-unsupported-arch" not in said and "nvcc-arch-dropped" not in said, (release, arch)
    assert stated(refused("11.3", "compute_89")) == ["nvcc-unsupported-arch"]
    assert stated(refused("13.0", "compute_53")) == ["nvcc-arch-dropped"]
    # an older toolkit named beside the shown nvcc may be the one that ran
    path = "/usr/local/cuda-11.3/bin/nvcc -c x.cu\nnvcc fatal"
    older = refused("12.4", "compute_90").replace("nvcc fatal", path)
    assert stated(older) == ["nvcc-unsupported-arch"]


def test_torchs_old_driver_message_beside_a_newer_driver_is_another_libcuda() -> None:
    message = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old "
               "(found version 11040).\n")
    newer = ("| NVIDIA-SMI 550.54.14    Driver Version: 550.54.14    CUDA Version: 12.4 |\n"
             "$ echo $LD_LIBRARY_PATH\n/usr/local/cuda-11.4/compat:/usr/local/cuda/lib64\n")
    assert "driver-too-old" not in stated(newer + message)
    assert "driver-too-old" not in stated("Driver Version: 550.54.14\n" + message)
    same = "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4 |\n"
    assert stated(same + message) == ["driver-too-old"]
    assert stated(message) == ["driver-too-old"]


def test_a_cuda_library_of_torchs_own_major_is_not_a_mixed_cuda_extension() -> None:
    # torch +cu121 provides libcudart.so.12 (its nvidia wheels): a toolkit 11.8 named in passing
    # does not make the extension's request for it another CUDA's
    missing = ("Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n"
               "    import fused_kernels\nImportError: libcudart.so.12: cannot open shared object file: "
               "No such file or directory\n")
    text = "torch 2.1.2+cu121, system CUDA 11.8 (nvcc release 11.8)\n" + missing
    assert "extension-cuda-mismatch" not in stated(text)
    # torch's own CUDA of another major than the library's: the mixed case
    other = "torch 2.1.2+cu118\n" + missing
    assert "extension-cuda-mismatch" in stated(other)


def test_glibc_not_found_beside_a_system_glibc_that_has_it_is_not_the_systems_age() -> None:
    refused = ("ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found "
               "(required by /venv/lib/python3.10/site-packages/mylib/_C.so)\n")
    for shown in ("Libc version: glibc-2.35\n", "ldd (Ubuntu GLIBC 2.35-0ubuntu3.1) 2.35\n"):
        assert "glibc-too-old" not in stated(shown + refused), shown
    assert stated("Libc version: glibc-2.31\n" + refused) == ["glibc-too-old"]
    assert stated(refused) == ["glibc-too-old"]


def test_tritons_fp8_refusal_of_the_other_vendors_encoding_is_not_an_old_gpu() -> None:
    def refused(wanted: str, supported: str) -> str:
        return (f"AssertionError: type {wanted} not supported in this architecture. "
                f"The supported fp8 dtypes are {supported}\n")

    # an MI300 (AMD's FNUZ types) asked for NVIDIA's fp8e4nv; an H100 asked for AMD's fp8e4b8
    assert "fp8-unsupported-gpu" not in stated(refused("fp8e4nv", "('fp8e4b8', 'fp8e5b16')"))
    assert "fp8-unsupported-gpu" not in stated(refused("fp8e4b8", "('fp8e4nv', 'fp8e5', 'fp8e4b15')"))
    # an A100: only the emulated types, fp8e4nv needs 8.9
    assert stated(refused("fp8e4nv", "('fp8e4b15', 'fp8e5')")) == ["fp8-unsupported-gpu"]


def test_flash_attns_ampere_check_on_a_blackwell_is_a_release_older_than_the_gpu() -> None:
    # flash_api.cpp (before Blackwell): TORCH_CHECK(is_sm90 || is_sm8x, "... Ampere GPUs or newer.")
    refusal = "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
    assert "flash-attn-gpu-too-old" not in stated("GPU: NVIDIA GeForce RTX 5090\n" + refusal)
    assert stated("GPU: Tesla T4\n" + refusal) == ["flash-attn-gpu-too-old"]
    # a Blackwell named beside an older GPU: that one may be the machine's
    assert stated("works on my RTX 5090, fails on my RTX 2080 Ti:\n" + refusal) == ["flash-attn-gpu-too-old"]
    assert stated(refusal) == ["flash-attn-gpu-too-old"]


def test_tensorflows_optional_tensorrt_and_the_driver_are_not_its_cuda_libraries() -> None:
    def dso(lib: str) -> str:
        return (f"W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
                f"library '{lib}'; dlerror: {lib}: cannot open shared object file: No such file\n")

    # TF-TRT only warns (tf2tensorrt/utils/py_utils.cc: "Cannot dlopen some TensorRT libraries")
    trt = dso("libnvinfer.so.7") + dso("libnvinfer_plugin.so.7")
    assert "tensorflow-cuda-libs-missing" not in stated(trt)
    # libcuda is the driver's: its own signature speaks
    assert stated(dso("libcuda.so.1")) == ["libcuda-missing"]
    assert stated(dso("libcudart.so.11.0")) == ["tensorflow-cuda-libs-missing"]


def test_an_mkl_function_missing_is_not_the_ittnotify_interface_torch_lost() -> None:
    numpy = ("ImportError: /opt/conda/lib/python3.9/site-packages/numpy/core/_multiarray_umath.cpython-39-"
             "x86_64-linux-gnu.so: undefined symbol: mkl_blas_dgemm_batch_strided\n")
    assert "mkl-symbol-missing" not in stated(numpy)
    torch = ("ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so: "
             "undefined symbol: iJIT_NotifyEvent\n")
    assert stated(torch) == ["mkl-symbol-missing"]


def test_nccls_refused_connect_in_a_one_node_job_is_a_peer_that_was_not_listening() -> None:
    refused = "NCCL WARN socketStartConnect: Connect to 10.0.0.5<36223> failed : Connection refused\n"
    standalone = "torchrun --standalone --nproc_per_node=8 train.py\n"
    for launch in (standalone, "torchrun --nproc_per_node=4 train.py\n"):
        assert "nccl-network-interface" not in stated(launch + refused), launch
    two = "torchrun --nnodes=2 --node_rank=0 --nproc_per_node=8 train.py\n"
    assert stated(two + refused) == ["nccl-network-interface"]
    unreachable = refused.replace("Connection refused", "No route to host")
    assert stated(standalone + unreachable) == ["nccl-network-interface"]


def test_xformers_built_for_the_very_torch_installed_is_not_a_torch_mismatch() -> None:
    def built(have: str) -> str:
        return ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
                f"    PyTorch 2.1.0+cu121 with CUDA 1201 (you have {have})\n"
                "    Python  3.10.11 (you have 3.10.13)\n  Please reinstall xformers\n")

    assert "xformers-torch-mismatch" not in stated(built("2.1.0+cu121"))
    for have in ("2.1.0+cu118", "2.1.0+cpu", "2.0.1+cu118"):
        assert "xformers-torch-mismatch" in stated(built(have)), have


def test_torch_imported_from_a_bundle_outside_site_packages_is_no_source_checkout() -> None:
    def imported(init: str) -> str:
        return (f'Traceback (most recent call last):\n  File "{init}", line 229, in <module>\n'
                "    from torch._C import *  # noqa: F403\nModuleNotFoundError: No module named 'torch._C'\n")

    # an AWS Lambda bundle (/var/task), a pip --target directory: installs without a site-packages
    for init in ("/var/task/torch/__init__.py", "/app/vendor/torch/__init__.py"):
        assert "source-tree-shadows-install" not in stated(imported(init)), init
    checkouts = ("/home/me/src/pytorch/torch/__init__.py",
                 "D:\\work\\pytorch-master\\torch\\__init__.py")
    for init in checkouts:
        assert stated(imported(init)) == ["source-tree-shadows-install"], init


def test_cuda_visible_devices_is_not_why_a_cpu_only_torch_has_no_cuda() -> None:
    unavailable = ">>> torch.cuda.is_available()\nFalse\n"
    advice = 'Someone suggested "export CUDA_VISIBLE_DEVICES=-1" to force the CPU; I did not.\n'
    cpu = advice + unavailable + ">>> torch.__version__\n'2.1.0+cpu'\n"
    assert "cuda-visible-devices-hides-gpu" not in stated(cpu)
    assert "cuda-visible-devices-hides-gpu" in stated("export CUDA_VISIBLE_DEVICES=-1\n" + unavailable)


def test_a_cuda_header_missing_under_a_rocm_torch_is_no_missing_toolkit() -> None:
    missing = "csrc/ops.cpp:2:10: fatal error: cuda.h: No such file or directory\n"
    assert stated("torch 2.3.1+rocm6.0\n" + missing) == ["hipify-incomplete"]  # a ROCm build's tag nearby
    far = "torch 2.3.1+rocm6.0\n" + "building ...\n" * 10 + missing
    assert "cuda-headers-missing" not in stated(far)
    assert stated(missing) == ["cuda-headers-missing"]


def test_a_gpu_named_for_another_machine_is_not_this_machines() -> None:
    error = ("torch 2.5.1+cu124\n"
             "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    for prose in ("This code used to run on our old Tesla K80 cluster with torch 1.12. On my new PC:\n",
                  "My colleague with an RTX 5090 sees the same. Mine:\n"):
        said = stated(prose + error)
        assert "gpu-too-old-for-torch" not in said and "arch-not-compiled" not in said, prose
    # the machine's own GPU, declared or in a plain sentence
    assert stated("GPU: Tesla K80\n" + error) == ["gpu-too-old-for-torch"]
    assert stated("I run an RTX 5090.\n" + error) == ["arch-not-compiled"]


def test_pips_conflict_between_agreeing_pins_is_no_pin_conflict() -> None:
    def refused(*rows: str) -> str:
        return ("ERROR: Cannot install torch==2.0.1 and torchvision==0.15.2 because these package versions "
                "have conflicting dependencies.\n\nThe conflict is caused by:\n"
                + "".join(f"    {r}\n" for r in rows) + "\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/\n")

    # both ask for torch 2.0.1: pip found no torch 2.0.1 that installs here (e.g. none for Python 3.12)
    agreeing = refused("The user requested torch==2.0.1", "torchvision 0.15.2 depends on torch==2.0.1")
    assert "torch-pin-conflict" not in stated(agreeing)
    disagreeing = refused("The user requested torch==2.1.0", "torchvision 0.15.2 depends on torch==2.0.1")
    assert stated(disagreeing) == ["torch-pin-conflict"]


def test_a_gpu_on_our_cluster_is_still_this_machines() -> None:
    error = ("torch 2.5.1+cu124\n"
             "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert stated("We run this on our cluster with Tesla K80 GPUs.\n" + error) == ["gpu-too-old-for-torch"]
