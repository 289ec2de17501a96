"""Tools' own wordings read as facts: GPU probes that print a vendor status (ggml's CUDA
initialisation, ollama's driver probes, nvidia-smi's per-GPU handle error), numpy's cast warning as
NaN values, compile and CMake errors, the NVIDIA driver seeing no GPU, a host name that did not
resolve, a worker start cut before its error, a name missing from torch itself; and the checks the
readout gives for them. Each text is written from the tool's format string (cited in the reader);
each has a neighbour that must not be read the same way."""

from __future__ import annotations

from typing import List

from tests.explain.test_signatures import KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.extract import extract
from torchsmith.explain.readout import next_checks, read_lines


def _errors(text: str) -> list:
    return [(e.api, e.name, e.stage) for e in extract(text, KB).gpu_errors]


def test_ggml_names_cudas_status_by_its_message() -> None:
    ready = "ggml_cuda_init: failed to initialize CUDA: system not yet initialized\n"
    assert _errors(ready) == [("cuda", "cudaErrorSystemNotReady", "init")]
    # the same status however the tool words it: the signature that reads the enum speaks
    assert causes(ready) == ["fabric-manager-not-running"]
    driver = ("ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA"
              " runtime version\n")
    assert _errors(driver)[0][1] == "cudaErrorInsufficientDriver"
    # a HIP build says ROCm and prints hipGetErrorString's words
    rocm = "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected\n"
    assert _errors(rocm)[0][:2] == ("hip", "hipErrorNoDevice")
    # a message that is no status of the enum is not looked up as one
    assert not any(e.name for e in extract("failed to initialize CUDA: the moon is not up\n", KB).gpu_errors)


def test_ollamas_probes_give_the_status_as_a_number() -> None:
    # cuInit's CUresult (the driver API) and the runtime's cudaError_t are different enums
    driver = ('msg="Unable to load cudart library /usr/lib/libcuda.so.1: cuda driver library init'
              ' failure: 3"\n')
    assert _errors(driver) == [("cuda-driver", "CUDA_ERROR_NOT_INITIALIZED", "init")]
    runtime = 'msg="Unable to load cudart library /x/libcudart.so.12: cudart init failure: 35"\n'
    assert _errors(runtime)[0][1] == "cudaErrorInsufficientDriver"
    lines = read_lines(extract(driver, KB))
    assert any("CUDA_ERROR_NOT_INITIALIZED (3)" in line for line in lines)
    # another number after other words is no status
    assert not _errors("init failure count: 3\n")


def test_nvidia_smi_handle_errors_are_nvml_statuses() -> None:
    unknown = ("Unable to determine the device handle for GPU0: 0000:C1:00.0: Unknown Error\n"
               "No devices were found\n")
    assert _errors(unknown) == [("nvml", "NVML_ERROR_UNKNOWN", None)]
    assert causes(unknown) == ["gpu-library-status"]
    # the older form without an index, and a status of the hardware kind
    lost = ("Unable to determine the device handle for gpu 0000:3b:00.0: GPU is lost.  "
            "Reboot the system to recover this GPU\n")
    assert _errors(lost) == [("nvml", "NVML_ERROR_GPU_IS_LOST", None)]
    assert "gpu-hardware-fault" in causes(lost)
    assert _errors("Unable to determine the device handle for GPU 0000:01:00.0: Not Found\n")[0][1] == (
        "NVML_ERROR_NOT_FOUND")
    # words that are no status of NVML's enum stay unread
    assert not _errors("Unable to determine the device handle for GPU0: because it is late\n")


def test_numpys_cast_warning_reports_nan_values() -> None:
    warning = ("/opt/conda/lib/python3.11/site-packages/diffusers/image_processor.py:147: RuntimeWarning: "
               "invalid value encountered in cast\n  images = (images * 255).round().astype(\"uint8\")\n")
    read = extract(warning, KB)
    assert "nan" in read.symptoms
    assert any("NaN or inf" in line for line in read_lines(read))
    # a division's warning is another operation's; nan alone proves no cause
    assert "nan" not in extract("RuntimeWarning: divide by zero encountered in log\n", KB).symptoms
    assert causes(warning) == []
    # with float16 in use, the float16 family speaks
    assert "fp16-nan" in causes("pipe = Pipeline(torch_dtype=torch.float16)\n" + warning)


def test_compile_errors_located_in_a_source_file_are_read() -> None:
    edg = 'src/knn.cu(90): error: identifier "FLT_MAX" is undefined\n      me.minn = { FLT_MAX };\n'
    read = extract(edg, KB)
    assert [(m.tool, m.text) for m in read.compiler] == [("nvcc", 'identifier "FLT_MAX" is undefined')]
    assert any(line.startswith('nvcc: identifier "FLT_MAX"') for line in read_lines(read))
    assert any("nvcc --version" in check for check in next_checks(read))
    located = "cub/dispatch_histogram.cuh:779:35: error: invalid operands to binary expression\n"
    assert [(m.tool, m.text) for m in extract(located, KB).compiler] == [
        ("compiler", "invalid operands to binary expression")]
    # MSVC's own located errors keep their code (read as cl), and a Python file is no compile
    msvc = "x.cpp(12): error C2065: 'n': undeclared identifier\n"
    assert [m.tool for m in extract(msvc, KB).compiler] == ["cl"]
    assert not extract('train.py:12:5: error: see above\n', KB).compiler


def test_cmakes_own_errors_are_read_with_where_to_look_next() -> None:
    located = ("CMake Error at /usr/share/cmake/Modules/CMakeDetermineCUDACompiler.cmake:277 (message):\n"
               "  CMAKE_CUDA_ARCHITECTURES must be valid if set.\n"
               "Call Stack (most recent call first):\n  CMakeLists.txt:10 (project)\n")
    read = extract(located, KB)
    assert [(m.tool, m.text) for m in read.compiler] == [
        ("cmake", "CMAKE_CUDA_ARCHITECTURES must be valid if set.")]
    assert any("CMakeConfigureLog.yaml" in check for check in next_checks(read))
    bare = "CMake Error: The source directory \"/src/x\" does not exist.\n"
    assert [m.tool for m in extract(bare, KB).compiler] == ["cmake"]
    # a warning is no error, and the words in prose are not CMake's line
    assert not extract("CMake Warning at CMakeLists.txt:3 (message):\n  old policy\n", KB).compiler
    assert not extract("I get a CMake Error when building\n", KB).compiler


def test_the_driver_seeing_no_gpu_is_read_with_its_checks() -> None:
    smi = ("$ nvidia-smi\nNo devices were found\n"
           "kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x25:0x65:1457)\n")
    read = extract(smi, KB)
    assert {"smi-no-devices", "nvrm-init-failed"} <= set(read.symptoms)
    lines = read_lines(read)
    assert "The NVIDIA kernel driver failed to initialise a GPU (NVRM: RmInitAdapter failed)" in lines
    assert any(check.startswith("sudo dmesg") for check in next_checks(read))
    # torch's count of zero is another layer's, and the words inside a sentence are not nvidia-smi's line
    assert "smi-no-devices" not in extract("torch.cuda.device_count() is 0, no devices were found\n",
                                           KB).symptoms
    # no cause is guessed from these alone
    assert causes(smi) == []


def test_a_host_name_that_did_not_resolve_is_read_with_its_host() -> None:
    # reqwest (uv, pixi) over musl's getaddrinfo: the URL first, the resolver's words after
    uv = ("  ├─▶ Failed to fetch: `https://data.example.org/whl/torch-2.5.0.html`\n"
          "  ├─▶ dns error\n  ╰─▶ failed to lookup address information: Name does not resolve\n")
    read = extract(uv, KB)
    dns = [h for h in read.http if h.status == "dns"]
    assert [(h.host, h.text) for h in dns] == [("data.example.org", "Name does not resolve")]
    assert "A host name did not resolve (DNS): data.example.org (Name does not resolve)" in read_lines(read)
    assert any(check.startswith("nslookup data.example.org") for check in next_checks(read))
    # curl names the host itself; pip's urllib3 on glibc says the name is unknown
    assert [h.host for h in extract("curl: (6) Could not resolve host: pypi.example\n", KB).http] == [
        "pypi.example"]
    glibc = ("Failed to establish a new connection: [Errno -2] Name or service not known'))\n")
    assert [h.status for h in extract(glibc, KB).http] == ["dns"]
    # a refused connection or a 404 is no name resolution
    assert not [h for h in extract("curl: (7) Failed to connect: Connection refused\n", KB).http
                if h.status == "dns"]


def test_the_no_gpu_check_follows_the_vendor_the_text_shows() -> None:
    rocm = "$ rocminfo | grep gfx\n  Name:  gfx1100\n>>> torch.cuda.is_available()\nFalse\n"
    assert any(c.startswith("rocminfo") and "torch.version.hip" in c for c in next_checks(extract(rocm, KB)))
    nvidia = ">>> torch.cuda.is_available()\nFalse\n"
    assert any(c.startswith("nvidia-smi -L") for c in next_checks(extract(nvidia, KB)))


def test_a_worker_start_cut_before_its_error_says_so() -> None:
    child = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
             '  File "C:\\\\Python\\\\lib\\\\multiprocessing\\\\spawn.py", line 116, in spawn_main\n'
             "    exitcode = _main(fd, parent_sentinel)\n")
    read = extract(child, KB)
    assert any(line.startswith("A worker process was being started") for line in read_lines(read))
    assert any("get_start_method" in check for check in next_checks(read))
    # with the worker's error shown, that error is what the text says
    shown = child + "RuntimeError: An attempt has been made to start a new process before the\n"
    assert not any(line.startswith("A worker process") for line in read_lines(extract(shown, KB)))
    # another module's start() is no worker
    assert "worker-start" not in extract("    thread.start()\n", KB).symptoms


TORCH_NAME = "torch-too-old-for-package"


def test_a_name_missing_from_torch_itself_is_the_torch_release_family() -> None:
    # an attribute of a torch module, a name imported from one, an operator of torch's own namespace
    # (torch/_ops.py's wording)
    assert TORCH_NAME in causes("AttributeError: module 'torch' has no attribute 'float8_e4m3fn'\n")
    assert TORCH_NAME in causes("ImportError: cannot import name 'sdpa_kernel' from 'torch.nn.attention'\n")
    aten = "AttributeError: '_OpNamespace' 'aten' object has no attribute '_weight_int4pack_mm'\n"
    assert causes(aten) == [TORCH_NAME]


def test_a_name_missing_from_another_package_is_not_torchs() -> None:
    assert TORCH_NAME not in causes("AttributeError: module 'torchvision' has no attribute 'disable_beta'\n")
    assert TORCH_NAME not in causes("ImportError: cannot import name 'x' from 'torchaudio.functional'\n")
    # an operator namespace a companion registers (its library did not load) is the companion's
    companion = "AttributeError: '_OpNamespace' 'torchvision' object has no attribute 'nms'\n"
    assert TORCH_NAME not in causes(companion)
    # a circular import: the script shadows torch, Python says so itself
    circular = ("AttributeError: partially initialized module 'torch' has no attribute 'nn' (most likely due "
                "to a circular import)\n")
    assert TORCH_NAME not in causes(circular)


def test_a_host_that_did_not_resolve_is_a_family_only_with_its_host() -> None:
    pip = ("WARNING: Retrying ... Failed to establish a new connection: [Errno -3] Temporary failure in name "
           "resolution')': /simple/torch/\n"
           "ERROR: Could not fetch URL https://mirror.example.org/simple/torch/: There was a problem\n")
    assert causes(pip) == ["channel-outage"]
    assert causes("curl: (6) Could not resolve host: download.example.org\n") == ["channel-outage"]
    # no host shown (a rendezvous name, a socket error alone): the readout says it, no family
    assert causes("socket.gaierror: [Errno -2] Name or service not known\n") == []
    # a refused connection is not a name that did not resolve
    assert causes("curl: (7) Failed to connect to download.example.org port 443: Connection refused\n") == []


def test_the_generic_checks_follow_the_vendor_the_text_shows() -> None:
    from torchsmith.cli.explain import GENERIC_CHECKS
    from torchsmith.explain.readout import for_the_vendor

    def checks(text: str) -> List[str]:
        return for_the_vendor(extract(text, KB), GENERIC_CHECKS)

    rocm = checks("RuntimeError: HIP error: invalid device function\n")
    assert "rocm-smi" in rocm and "nvidia-smi" not in rocm and any("torch.version.hip" in c for c in rocm)
    xpu = checks("RuntimeError: Native API failed. Native API returns: 2147483646"
                 " (UR_RESULT_ERROR_UNKNOWN)\n")
    assert "sycl-ls" in xpu and any("torch.xpu.is_available()" in c for c in xpu)
    # a CUDA text keeps NVIDIA's checks
    assert checks("RuntimeError: CUDA error: no kernel image is available\n") == list(GENERIC_CHECKS)
