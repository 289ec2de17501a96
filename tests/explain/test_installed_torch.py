"""The torch a text shows installed, read from the shapes tools print it in (an environment report's
"PyTorch: X" line, `pip show`, pip's "Requirement already satisfied" line, a `conda list` row of the
PyTorch channel), and never from a requirement, a download or another package's line."""

from __future__ import annotations

from tests.explain.test_signatures import stated

from torchsmith.explain.extract.environment import environment

# cudnnGetErrorString(CUDNN_STATUS_EXECUTION_FAILED) as torch raises it
_CUDNN_FAILED = "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"


def _torch(text: str) -> tuple[object, object]:
    env = environment(text, [])
    return env.torch, env.torch_cuda


def test_an_environment_report_line_names_the_torch_in_use() -> None:
    report = "sys.platform: linux\nPyTorch: 1.8.0+cu111\nTorchVision: 0.9.0+cu111\n"
    assert _torch(report) == ("1.8.0+cu111", "11.1")
    assert _torch("my environment: pytorch: 1.5.1+cu101\n") == ("1.5.1+cu101", "10.1")
    assert _torch("torch: 2.1.0\n") == ("2.1.0", None)
    # a C++ namespace and a YAML requirement are no installed release
    assert _torch("at torch::jit::load 2.1.0\n") == (None, None)
    assert _torch("dependencies:\n  - pytorch=1.12.1\n") == (None, None)


def test_pip_show_and_pips_satisfied_line_name_the_installed_version() -> None:
    assert _torch("Name: torch\nVersion: 2.0.1+cu117\nSummary: Tensors and Dynamic neural networks\n") == (
        "2.0.1+cu117", "11.7")
    line = ("Requirement already satisfied: torch>=1.13 in /usr/local/lib/python3.10/dist-packages "
            "(from xformers==0.0.22) (2.1.0+cu121)\n")
    assert _torch(line) == ("2.1.0+cu121", "12.1")
    venv = "./venv/lib/python3.10/site-packages"
    assert _torch(f"Requirement already satisfied: torch in {venv} (2.2.0)\n") == ("2.2.0", None)
    # another package's line, and a requirement that pip was asked for, name no installed torch
    assert _torch(f"Requirement already satisfied: torchvision in {venv} (0.16.0)\n") == (None, None)
    assert _torch("pip install torch==2.0.1+cu118\n") == (None, None)


def test_collect_envs_library_lines_name_the_installed_torch() -> None:
    libraries = "Versions of relevant libraries:\n[pip3] numpy==1.26.4\n[pip3] torch==2.1.0+cu121\n"
    assert _torch(libraries) == ("2.1.0+cu121", "12.1")
    assert _torch("[conda] torch                     2.3.1+cu118              pypi_0    pypi\n") == (
        "2.3.1+cu118", "11.8")
    channel = "[conda] pytorch                   1.12.1          py3.9_cuda11.3_cudnn8.3.2_0    pytorch\n"
    assert _torch(channel) == ("1.12.1", "11.3")
    # torchvision's line is not torch's
    assert _torch("[pip3] torchvision==0.16.0+cu121\n") == (None, None)


def test_a_conda_list_row_of_the_pytorch_channel_names_its_cuda() -> None:
    row = "pytorch                   1.12.1          py3.9_cuda11.3_cudnn8.3.2_0    pytorch\n"
    assert _torch(row) == ("1.12.1", "11.3")
    assert _torch("pytorch  1.7.1  py3.8_cuda11.0.221_cudnn8.0.5_0  pytorch\n") == ("1.7.1", "11.0")
    # conda-forge's build is another build (its own arch list): its row is not read as PyTorch's
    assert _torch("pytorch   1.12.1   cuda112py39h4de5995_200   conda-forge\n") == (None, None)
    # a package being fetched (it may not be installed) is not the torch in use
    assert _torch("/opt/conda/pkgs/pytorch-1.12.1-py3.9_cuda11.6_cudnn8.3.2_0 appears to be corrupted\n") == (
        None, None)


def test_the_release_read_decides_a_build_older_than_the_gpu() -> None:
    report = "GPU 0: GeForce RTX 3090\nPyTorch: 1.7.1+cu101\nTorchVision: 0.8.2+cu101\n"
    assert stated(report + _CUDNN_FAILED) == ["cuda-build-older-than-gpu"]
    # a CUDA 11 build runs on Ampere: the status stays a library's, with its candidates
    assert "cuda-build-older-than-gpu" not in stated(report.replace("cu101", "cu111") + _CUDNN_FAILED)
    # no release in a shape that names the installed one: the family speaks
    asked = "GPU 0: GeForce RTX 3090\npip install torch==1.7.1+cu101\n"
    assert "cuda-build-older-than-gpu" not in stated(asked + _CUDNN_FAILED)
