"""Clusters, Apple, Intel and musl: each message proves what its source says it proves, and a
family lists candidates where the message is printed for several causes (counter-cases beside)."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report

MPS = ("RuntimeError: The MPS backend is supported on MacOS 12.3+.\n"
       "Current OS version can be queried using `sw_vers`.")


def test_mps_message_states_an_old_macos_only_where_the_text_shows_one() -> None:
    assert extract(MPS, KB).environment.macos is None  # "12.3+" is the message's minimum, not this macOS
    assert stated(MPS + "\nProductVersion:\t12.2.1") == ["macos-too-old-for-mps"]
    # torch 2.5 needs 13.0 although its message still says 12.3 (pytorch/pytorch#139425)
    assert stated(MPS + "\nProductVersion:\t12.7.6\nPyTorch version: 2.5.1") == ["macos-too-old-for-mps"]
    # Counter-cases: a new enough macOS (no Metal device, or an x86_64 Python), or none shown: the family.
    for text in (MPS + "\nProductVersion:\t12.7.6",
                 "RuntimeError: The MPS backend is supported on macOS 14.0+.\nOS: macOS 26.3.1 (arm64)", MPS):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "mps-unavailable" and len(found.candidates) == 3, text


def test_the_macos_a_sentence_names_is_read_but_not_a_minimum() -> None:
    # a sentence's "my macOS is 12.2.1" or a release named with its marketing name is this Mac's
    for said in ("even though my MacOs is `12.2.1`", "on macOS Monterey 12.2.1"):
        assert extract(said, KB).environment.macos == "12.2.1", said
        assert stated(MPS + "\n" + said) == ["macos-too-old-for-mps"], said
    assert extract("macOS version: 14.5", KB).environment.macos == "14.5"
    # a requirement is no release of this Mac
    for minimum in ("MPS requires macOS 12.3 or later", "needs macOS 13.0 and above"):
        assert extract(minimum, KB).environment.macos is None, minimum
        (found,) = explain_report(MPS + "\n" + minimum, CATALOG, kb=KB).explanations
        assert found.signature.id == "mps-unavailable", minimum


def test_mpi_backend_and_library_are_told_apart() -> None:
    backend = ("RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if "
               "you build PyTorch from source on a host that has MPI installed.")
    assert stated(backend) == ["mpi-backend-not-built"]
    missing = "ImportError: libmpi.so.40: cannot open shared object file: No such file or directory"
    (library,) = extract(missing, KB).libraries
    assert (library.soname, library.kind) == ("libmpi.so.40", "mpi")
    assert stated(missing) == ["mpi-library-missing"]
    assert stated("OSError: libmpi_cxx.so.40: cannot open shared object file") == ["mpi-library-missing"]
    # Counter-case: NCCL's missing backend is not MPI's.
    nccl = "RuntimeError: Distributed package doesn't have NCCL built in"
    assert "mpi-backend-not-built" not in stated(nccl)


def test_gloo_given_nccls_exclusion_syntax() -> None:
    text = ("RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84]\n"
            "  ifa != nullptr. Unable to find address for: ^lo,docker")
    assert stated(text) == ["gloo-ifname-exclusion-syntax"]
    # Counter-case: a plain interface name gloo did not find proves no syntax error.
    assert stated(text.replace("^lo,docker", "eth0")) == []


def test_device_index_beyond_count_is_mig_only_where_a_mig_device_is_shown() -> None:
    assert_ = "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at CUDAContext.cpp:49"
    assert stated(assert_ + " on 2 GPU NVIDIA-A100-SXM4-80GB-MIG-3g.40gb") == ["mig-single-instance"]
    (found,) = explain_report(assert_, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-device-index-beyond-count" and len(found.candidates) == 3


def test_musls_loader_wording_proves_a_musl_system() -> None:
    text = ("ImportError: Error relocating /usr/lib/python3.5/site-packages/torch/lib/libcudnn.so.6: "
            "__strtod_internal: symbol not found")
    assert stated(text) == ["musl-libc-unsupported"]
    loading = ("ImportError: Error loading shared library ld-linux-x86-64.so.2: No such file or "
               "directory (needed by /usr/lib/python3.5/site-packages/torch/_C.so)")
    assert stated(loading) == ["musl-libc-unsupported"]
    # Counter-case: glibc's own complaint is an old glibc, not musl.
    glibc = "/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.29' not found"
    assert "musl-libc-unsupported" not in stated(glibc)


def test_xpu_warning_is_the_drivers_family() -> None:
    text = ("UserWarning: Failed to initialize XPU devices. The driver may not be installed, installed "
            "incorrectly, or incompatible with the current setup.")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "xpu-devices-not-initialised" and len(found.candidates) == 4
    assert stated("UserWarning: XPU device count is zero!") == []


def test_the_container_hooks_own_nvml_and_wsl_messages() -> None:
    # libnvidia-container: "nvml error: <nvmlErrorString>" (driver.c, error.c), the adapter check (nvc.c)
    hook = "nvidia-container-cli: initialization error: "
    (error,) = extract(hook + "nvml error: driver not loaded: unknown", KB).gpu_errors
    assert error.name == "NVML_ERROR_DRIVER_NOT_LOADED"
    (found,) = explain_report(hook + "WSL environment detected but no adapters were found: unknown",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "wsl-no-gpu-adapter" and len(found.candidates) == 3
    # Counter-case: dxcore failing is not WSL without adapters (the hook then goes on as on Linux).
    assert "wsl-no-gpu-adapter" not in stated("dxcore initialization failed, continuing assuming a non-WSL "
                                              "environment")


def test_a_missing_dev_dxg_is_the_wsl_gpu_family() -> None:
    for text in ("ls: cannot access '/dev/dxg': No such file or directory",
                 "Additionally /dev/dxg is not visible."):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "wsl-gpu-device-missing" and len(found.candidates) == 3, text
    # Counter-case: the device listed is no failure.
    assert stated("crw-rw-rw- 1 root root 10, 125 Nov 26 09:00 /dev/dxg") == []


def test_dev_dxg_named_beside_another_missing_thing_is_not_the_family() -> None:
    text = "/dev/dxg exists, but libcuda.so is missing from /usr/lib/wsl/lib"
    assert "wsl-gpu-device-missing" not in stated(text)


def test_a_dockerfile_named_beside_a_running_container_is_no_image_build() -> None:
    message = "RuntimeError: No CUDA GPUs are available"
    assert stated("Step 4/9 : RUN python -c 'import torch; torch.zeros(1).cuda()'\n" + message) \
        == ["gpu-not-available-during-docker-build"]
    # Counter-case: the image's Dockerfile named while a container runs: GPUs not given to `docker run`.
    ran = "I built the image from the Dockerfile above, then: docker run -it my-image python train.py\n"
    assert "gpu-not-available-during-docker-build" not in stated(ran + message)


def test_a_windows_profile_under_mnt_is_wsl_not_a_mac() -> None:
    # WSL mounts Windows' drives at /mnt/<drive>/ (NVIDIA/cuml#6218); a Mac's home is /Users/<name>/
    wsl = ('  File "/mnt/c/Users/Hongb/Documents/Git/proj/.venv/lib/python3.12/site-packages/numba_cuda/'
           'numba/cuda/cudadrv/driver.py", line 258, in ensure_initialized\n')
    assert extract(wsl, KB).environment.platform == "wsl"
    mac = '  File "/Users/hongbo/proj/.venv/lib/python3.12/site-packages/torch/__init__.py", line 1\n'
    assert extract(mac, KB).environment.platform == "macos"


def test_the_platforms_uv_says_other_wheels_exist_for_are_not_this_machine() -> None:
    # uv's hint lists where a version does have wheels; the tag it needed ("e.g.") is this machine's
    text = ("  ╰─▶ Because nvidia-cuda-nvrtc-cu12==12.8.93 has no wheels with a matching platform tag\n"
            "      (e.g., `manylinux_2_28_x86_64`) and torch==2.8.0 depends on it, ...\n"
            "      hint: Wheels are available for `nvidia-cuda-nvrtc-cu12`\n"
            "      (v12.8.93) on the following platforms: `manylinux_2_12_x86_64`,\n"
            "      `manylinux_2_17_aarch64`, `manylinux2014_aarch64`, `win_amd64`\n")
    assert extract(text, KB).environment.platform == "linux"
    assert extract("OS: Microsoft Windows 11 Pro\n" + text, KB).environment.platform == "windows"
    skipped = ("Skipping link: none of the wheel's tags (cp310-cp310-win_amd64) are compatible (run pip "
               "debug --verbose to show compatible tags): https://download.pytorch.org/whl/cu121/torch\n")
    assert extract(skipped, KB).environment.platform is None
