"""conda's, libmamba's, pixi's and resolvo's own solver messages, read as the cause they prove.

Each text is written from the tool's format string (cited beside it); each has a counter-text that
shows the words alone do not decide it.
"""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.matcher import explain_report

# conda/exceptions.py@0f64223f, UnsatisfiableError's "virtual_package" message
CONDA_GLIBC = ("UnsatisfiableError: The following specifications were found to be incompatible"
               " with your system:\n\n"
               "  - feature:/linux-64::__glibc==2.17=0\n"
               "  - feature:|@/linux-64::__glibc==2.17=0\n"
               "  - pytorch==2.5.1 -> __glibc[version='>=2.28,<3.0.a0']\n\n"
               "Your installed version is: 2.17\n")


def test_conda_reporting_an_older_installed_glibc_is_glibc_too_old() -> None:
    (explanation,) = explain_report(CONDA_GLIBC, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "glibc-too-old"
    assert "__glibc[version='>=2.28,<3.0.a0']" in explanation.cause


def test_conda_reporting_a_glibc_that_meets_the_bound_states_no_glibc_cause() -> None:
    # conda prints this report for a conflict elsewhere too: the glibc shown satisfies the bound
    text = CONDA_GLIBC.replace("2.17", "2.35")
    report = explain_report(text, CATALOG, kb=KB)
    assert "glibc-too-old" not in [e.signature.id for e in report.explanations]
    assert [sig for sig, _ in report.contradicted] == ["glibc-too-old"]


# pixi crates/pixi_core/src/lock_file/virtual_packages.rs@2b25fc76, VirtualPackageNotFoundError
def pixi_virtual(spec: str, machine: str) -> str:
    return (f"Error:   × Virtual package '{spec}' does not match any of the available virtual packages"
            f" on your machine: [{machine}]\n")


def test_pixi_listing_an_older_glibc_on_the_machine_is_glibc_too_old() -> None:
    text = pixi_virtual("__glibc >=2.28", "__unix=0=0, __linux=3.10.0=0, __glibc=2.17=0, __archspec=1=x86_64")
    assert causes(text) == ["glibc-too-old"]


def test_pixi_listing_no_glibc_proves_no_glibc_version() -> None:
    text = pixi_virtual("__glibc >=2.28", "__unix=0=0, __linux=5.15.0=0, __archspec=1=x86_64")
    assert "glibc-too-old" not in causes(text)


def test_pixi_with_a_cuda_version_in_the_spec_is_the_cuda_virtual_package() -> None:
    text = pixi_virtual("__cuda >=12", "__unix=0=0, __linux=5.15.0=0, __glibc=2.35=0")
    assert causes(text) == ["conda-cuda-virtual-package"]


def test_pixi_listing_an_older_cuda_on_the_machine_is_a_driver_too_old() -> None:
    text = pixi_virtual("__cuda >=12", "__unix=0=0, __glibc=2.35=0, __cuda=11.4=0, __archspec=1=x86_64")
    assert "conda-cuda-driver-too-old" in causes(text)
    enough = pixi_virtual("__cuda >=12", "__unix=0=0, __glibc=2.35=0, __cuda=12.4=0")
    assert "conda-cuda-driver-too-old" not in causes(enough)


def test_another_virtual_package_named_like_cuda_is_not_the_cuda_one() -> None:
    text = pixi_virtual("__cuda_arch >=8.0", "__unix=0=0, __glibc=2.35=0")
    assert "conda-cuda-virtual-package" not in causes(text)


# conda/exceptions.py@0f64223f, ResolvePackageNotFound (conda env create's missing specs)
def test_resolve_package_not_found_is_the_not_found_family() -> None:
    text = ("Solving environment: failed\n\nResolvePackageNotFound: \n"
            "  - cudatoolkit==11.3.1=h2bc3f7f_2\n  - libgcc-ng==9.3.0=h5101ec6_17\n")
    (explanation,) = explain_report(text, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "conda-package-not-found"
    assert explanation.facts["package"] == "cudatoolkit==11.3.1=h2bc3f7f_2"
    assert explanation.candidates


def test_the_class_name_in_prose_is_not_the_message() -> None:
    assert causes("we used to catch ResolvePackageNotFound in the installer\n") == []


# resolvo's DisplayUnsat at depth 0, as pixi prints it
# (pixi_command_dispatcher/tests/integration/main.rs@2b25fc76)
def test_resolvo_no_candidates_at_the_top_is_the_not_found_family() -> None:
    text = ("  × failed to solve the conda requirements of 'default' 'osx-64'\n"
            "  ╰─▶ Cannot solve the request because of: No candidates were found for pytorch-cuda *.\n")
    (explanation,) = explain_report(text, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "conda-package-not-found"
    assert explanation.facts["package"] == "pytorch-cuda"


def test_a_dependency_without_candidates_deeper_down_is_not_the_top_level_message() -> None:
    text = ("Cannot solve the request because of: foo 1.0 would require\n"
            "  └─ bar >=2, for which no candidates were found.\n")
    assert "conda-package-not-found" not in causes(text)


# mamba libmamba/src/download/downloader.cpp@03564bf4, build_transfer_message (logged for every transfer)
def test_libmamba_finalising_a_transfer_with_an_http_error_is_the_http_family() -> None:
    text = ("critical libmamba Multiple errors occurred:\n    Transfer finalized, status: 404 "
            "[https://conda.anaconda.org/pytorch-nightly/linux-64/repodata.json] 1011 bytes\n")
    (explanation,) = explain_report(text, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "conda-http-error"
    assert explanation.facts["status"] == "404"
    assert "channel-file-removed" in [c.id for c in explanation.candidates]


def test_libmamba_finalising_a_transfer_with_200_is_no_error() -> None:
    text = ("info     libmamba Transfer finalized, status: 200 "
            "[https://conda.anaconda.org/conda-forge/noarch/repodata.json.zst] 12345 bytes\n")
    assert "conda-http-error" not in causes(text)


CONDA_CUDA = ("UnsatisfiableError: The following specifications were found to be incompatible"
              " with your system:\n\n  - feature:/linux-64::__cuda==11.4=0\n"
              "  - pytorch-cuda=12.1 -> __cuda[version='>=12']\n\nYour installed version is: 11.4\n")


def test_conda_reporting_an_older_installed_cuda_is_a_driver_too_old() -> None:
    assert "conda-cuda-driver-too-old" in causes(CONDA_CUDA)


def test_conda_reporting_a_cuda_that_meets_the_bound_is_no_driver_too_old() -> None:
    report = explain_report(CONDA_CUDA.replace("11.4", "12.4"), CATALOG, kb=KB)
    assert "conda-cuda-driver-too-old" not in [e.signature.id for e in report.explanations]
    assert "conda-cuda-driver-too-old" in [sig for sig, _ in report.contradicted]
