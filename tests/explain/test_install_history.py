"""What an install did before the error: a torch looked for on a find-links page that stopped at an
older release (the page's last release is data), and pip's record of removing a torch build."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.extract.model import Extracted
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.reason import CONFIRMATION_CHECKS

PAGE = "https://download.pytorch.org/whl/torch_stable.html"

def test_the_frozen_page_ends_at_the_release_the_data_names() -> None:
    page = KB.document("formats")["torch_stable_html"]
    assert page["last"] == "2.3.1" and page["sources"]
    report = explain_report(f"pip install torch==2.4.0+cpu -f {PAGE}\nERROR: No matching distribution found "
                            "for torch==2.4.0+cpu\n", CATALOG, kb=KB)
    (found,) = report.explanations
    assert found.signature.id == "torch-stable-html-frozen"
    assert "2.4.0+cpu" in found.cause and "2.3.1" in found.cause


def test_a_release_the_page_lists_is_not_the_frozen_page() -> None:
    # 1.5.1+cpu is on the page: its failure is another (the family of no-matching-distribution)
    text = (f"pip install torch==1.5.1+cpu -f {PAGE}\nERROR: Could not find a version that satisfies the "
            "requirement torch==1.5.1+cpu (from versions: 0.1.2)\n")
    assert stated(text) == ["no-matching-distribution"]
    # the check reads the page's last release from the data
    check = CONFIRMATION_CHECKS["requested_after_torch_stable_html"]
    assert check(Extracted(), {"requested": "2.3.1+cpu"}, KB) is None
    assert check(Extracted(), {"requested": "2.4.x"}, KB) == (
        "torch 2.4.x is newer than 2.3.1, the newest torch torch_stable.html lists")
    assert check(Extracted(), {"requested": "2.4.0"}, None) is None


def test_the_newest_pin_named_around_the_page_is_the_one_asked_for() -> None:
    text = (f"`pip install -f {PAGE} torch==2.3.1+cpu` worked. However, "
            f"`pip install -f {PAGE} torch==2.5.1+cpu` does not work.\n")
    assert stated(text) == ["torch-stable-html-frozen"]
    # a PyPI version without a build label and no failure: the page played no part
    assert stated(f"pip install torch==2.5.1 -f {PAGE}\nSuccessfully installed torch-2.5.1\n") == []


def test_pip_removing_a_build_from_pytorch_index_is_the_family() -> None:
    text = ("  Attempting uninstall: torch\n    Found existing installation: torch 2.10.0+cu130\n"
            "    Uninstalling torch-2.10.0+cu130:\n      Successfully uninstalled torch-2.10.0+cu130\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "pip-replaced-torch-build" and len(found.candidates) == 2
    assert "2.10.0+cu130" in found.cause
    # a torch without a build label (conda's, or PyPI's) is not a build from PyTorch's index
    plain = text.replace("+cu130", "")
    assert "pip-replaced-torch-build" not in stated(plain)
    # nor is a `pip show`-like line without pip's uninstall step
    assert stated("Found existing installation: torch 2.10.0+cu130\n") == []


def test_pip_preparing_another_torch_after_a_gpu_build_sets_the_build_aside() -> None:
    gpu = "https://download.pytorch.org/whl/cu128/torch-2.7.1%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    text = (f"Collecting torch\n  Downloading {gpu} (1000 MB)\nCollecting somepkg==1.0\n"
            "  Downloading somepkg-1.0-py3-none-any.whl (10 kB)\nCollecting torch (from somepkg==1.0)\n"
            "  Using cached torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl (766 MB)\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "pip-replaced-torch-build"
    assert "2.7.1+cu128" in found.cause and "torch 2.6.0 named by file alone" in found.cause
    # a +cpu build prepared after the GPU build is another build too; its URL says where it came from
    cpu = text.replace("Using cached torch-2.6.0-", "Downloading https://example.org/simple/torch-2.6.0%2Bcpu-")
    (found,) = explain_report(cpu, CATALOG, kb=KB).explanations
    assert "2.6.0+cpu from https://example.org/simple/" in found.cause
    # the same build prepared again, no GPU build at all, or only a companion's GPU build: nothing set aside
    assert stated(text.replace("torch-2.6.0-", "torch-2.7.1%2Bcu128-")) == []
    assert stated(text.replace("%2Bcu128", "")) == []
    assert stated(text.replace("/torch-2.7.1", "/torchvision-0.22.1")) == []
    # a resolution that failed is told by the resolver's own message, not as a replacement
    failed = text + "ERROR: ResolutionImpossible: for help visit ...\n"
    assert "pip-replaced-torch-build" not in stated(failed)


PYPI_LOG = ("Collecting torch==1.7.1\n"
            "  Downloading torch-1.7.1-cp38-cp38-{tag}.whl (184.0 MB)\n"
            "Installing collected packages: torch\n"
            "Successfully installed torch-1.7.1\n")


def test_pip_installing_pypis_torch_where_pypi_serves_the_cpu_build_is_a_cpu_only_torch() -> None:
    # pytorch/pytorch#52662: PyPI's Windows wheels are the CPU builds (torch_releases.json pypi_default)
    text = PYPI_LOG.format(tag="win_amd64")
    (fact,) = [e for e in extract(text, KB).installer_errors if e.kind == "pypi-cpu-build"]
    assert "windows-x86_64" in fact.meaning and fact.package == "1.7.1"
    assert stated(text) == ["torch-not-compiled-with-cuda"]
    # Linux x86_64: PyPI's 1.7.1 is the cu102 build
    assert stated(PYPI_LOG.format(tag="manylinux1_x86_64")) == []
    # a wheel from another index is named by its whole URL; a download not installed proves nothing
    other = text.replace("Downloading torch-", "Downloading https://download.pytorch.org/whl/cu110/torch-")
    assert stated(other) == []
    assert stated(text.replace("Successfully installed torch-1.7.1", "")) == []
    # a log that goes on to fail reports that failure, not the build
    assert "torch-not-compiled-with-cuda" not in stated(text + "ERROR: Could not build wheels for xformers\n")


PYTHON_REFUSED = "ERROR: Package '{package}' requires a different Python: 3.15.0 not in '<3.15,>=3.10'\n"


def test_pip_refusing_a_wheel_tagged_for_this_very_python_is_the_files_fault() -> None:
    # pip resolvelib/factory.py's wording; pytorch/pytorch#186099: a cp315 wheel whose
    # Requires-Python stops before 3.15
    fetched = ("Collecting triton\n  Downloading triton-3.7.0+git88b227e2-cp315-cp315-"
               "manylinux_2_28_x86_64.whl.metadata (1.7 kB)\n")
    assert stated(fetched + PYTHON_REFUSED.format(package="triton")) == ["broken-release-artifact"]
    # a wheel for another Python, another package's wheel, or none shown: the package's range
    other = fetched.replace("cp315-cp315", "cp312-cp312")
    assert stated(other + PYTHON_REFUSED.format(package="triton")) == ["package-python-version-unsupported"]
    assert stated(fetched + PYTHON_REFUSED.format(package="gemma")) == ["package-python-version-unsupported"]
    assert stated(PYTHON_REFUSED.format(package="gemma")) == ["package-python-version-unsupported"]


def test_nvidias_rotated_cuda_repository_key() -> None:
    # apt on NVIDIA's CUDA repository, signed since April 2022 with the key 3bf863cc
    text = ("W: GPG error: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu1804/x86_64 "
            "InRelease: The following signatures couldn't be verified because the public key is not "
            "available: NO_PUBKEY A4B469963BF863CC\n")
    assert stated(text) == ["cuda-apt-repo-key-rotated"]
    # another repository's missing key is not NVIDIA's rotation
    other = text.replace("developer.download.nvidia.com/compute/cuda/repos", "ppa.launchpad.net/x")
    assert stated(other) == []


def test_conda_naming_a_cuda_requirement_incompatible_with_the_system_is_the_cuda_virtual_package() -> None:
    # conda's UnsatisfiableError for virtual packages (conda/exceptions.py): a chain that ends in __cuda
    text = ("UnsatisfiableError: The following specifications were found to be incompatible with your "
            "system:\n\n  - feature:/linux-64::__glibc==2.35=0\n  - pytorch==2[build=*cuda*] -> __cuda\n"
            "\nYour installed version is: 0\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-cuda-virtual-package"
    assert "pytorch==2[build=*cuda*]" in found.cause
    # glibc alone is another cause
    glibc_only = text.replace("  - pytorch==2[build=*cuda*] -> __cuda\n", "")
    assert "conda-cuda-virtual-package" not in stated(glibc_only)


def test_uv_finding_no_wheel_of_any_package_it_was_asked_to_install() -> None:
    # uv's own hint for a direct requirement (Lightricks/LTX-2#256: torchcodec on aarch64)
    text = ("error: Distribution `torchcodec==0.9.1 @ registry+https://pypi.org/simple` can't be installed\n"
            "because it doesn't have a source distribution or wheel for the current platform\n")
    assert stated(text) == ["uv-no-matching-wheel"]
    # a dependency deep in a resolution chain is not read as the package asked for
    chain = ("Because nvidia-cuda-nvrtc-cu12==12.8.93 has no wheels with a matching platform tag and "
             "torch==2.8.0 depends on nvidia-cuda-nvrtc-cu12==12.8.93, we can conclude that torch==2.8.0 "
             "cannot be used.\n")
    assert "uv-no-matching-wheel" not in stated(chain)


def test_libmambas_missing_dependency_is_the_conda_package_not_found_family() -> None:
    # libmamba's problems graph (libmamba/src/solver/problems_graph.cpp), deep and at the top
    deep = ("The following package could not be installed\n"
            "└─ pytorch-cuda 12.1  is not installable because it requires\n"
            "   └─ libnvjitlink >=12.1.105,<12.2.0 , which does not exist (perhaps a missing channel).\n")
    (found,) = explain_report(deep, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-package-not-found" and "libnvjitlink" in found.cause
    assert found.candidates  # a family: the channel, the platform or the version may be missing
    top = ("The following package could not be installed\n"
           "└─ pytorhc does not exist (perhaps a typo or a missing channel).\n")
    assert stated(top) == ["conda-package-not-found"]
    # a virtual package is the system's, not a channel's
    assert "conda-package-not-found" not in stated("   └─ __cuda, which is missing on the system.\n")
