"""conda's PackagesNotFoundError and the wheel-variant installers' own messages, read as facts.

A cause is stated only where the text and the data prove it; otherwise explain says what was
searched and how to check. Each text is verbatim from the thread cited next to it, or was printed
by the real tool (uv 0.13.9, the tests' uv) as described there.
"""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB
from tests.explain.test_signatures import stated as causes

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report
from torchsmith.explain.readout import next_checks, read_lines


def channel_list(*urls: str) -> str:
    return "Current channels:\n\n" + "".join(f"  - {url}\n" for url in urls)


# Only the family speaks where no cause is proven: it lists candidates and states none.
FAMILY = ["conda-package-not-found"]
NOT_FOUND = "PackagesNotFoundError: The following packages are not available from current channels:\n\n"

# https://github.com/pytorch/pytorch/issues/49330 (32-bit Anaconda on Windows)
WIN32 = (NOT_FOUND + "  - cudatoolkit=10.2\n  - pytorch\n  - torchaudio\n\n"
         + channel_list("https://conda.anaconda.org/pytorch/win-32", "https://conda.anaconda.org/pytorch/noarch",
                        "https://repo.anaconda.com/pkgs/main/win-32", "https://repo.anaconda.com/pkgs/main/noarch"))
# https://github.com/vt-vl-lab/3d-photo-inpainting/issues/120 (a Mac, cudatoolkit 10.1)
MAC_CUDA_10 = (NOT_FOUND + "  - cudatoolkit==10.1.243\n\n"
               + channel_list("https://conda.anaconda.org/pytorch/osx-64", "https://conda.anaconda.org/pytorch/noarch",
                              "https://repo.anaconda.com/pkgs/main/osx-64"))
# https://github.com/yisol/IDM-VTON/issues/135 (an exported Linux environment on Windows)
EXPORTED = ("Channels:\n - pytorch\n - nvidia\n - defaults\nPlatform: win-64\n" + NOT_FOUND
            + "  - torchtriton==2.0.0=py310\n  - pytorch-cuda==11.8=h7e8668a_5\n"
            + "  - pytorch==2.0.1=py3.10_cuda11.8_cudnn8.7.0_0\n\n"
            + channel_list("https://conda.anaconda.org/pytorch/win-64", "https://conda.anaconda.org/nvidia/win-64",
                           "https://repo.anaconda.com/pkgs/main/win-64"))


def test_a_32_bit_conda_is_the_proven_cause_for_the_torch_packages_only() -> None:
    read = extract(WIN32, KB)
    assert read.conda_search is not None and read.conda_search.subdirs == ("win-32",)
    assert read.conda_search.channels == ("pytorch", "pkgs/main")
    assert [(m.package, m.kind) for m in read.conda_missing] == [("pytorch", "platform"),
                                                                 ("torchaudio", "platform")]
    (explanation,) = explain_report(WIN32, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "conda-no-build-for-platform"
    assert "win-32" in explanation.cause and "32-bit" in explanation.cause


def test_cudatoolkit_after_9_0_on_a_mac_is_a_platform_without_builds() -> None:
    # CUDA 10.x itself still ran on macOS, but the cudatoolkit conda package did not: defaults' newest
    # osx-64 build is 9.0 and conda-forge's recipe (Anaconda's, forked) skips osx for 9.2 to 11.2.
    read = extract(MAC_CUDA_10, KB)
    assert read.conda_search is not None and read.conda_search.subdirs == ("osx-64",)
    (missing,) = read.conda_missing
    assert (missing.package, missing.kind, missing.subdir) == ("cudatoolkit", "platform", "osx-64")
    assert causes(MAC_CUDA_10) == ["conda-no-build-for-platform"]
    # Counter-cases: 9.0 had macOS builds; the numba channel carried a 10.0 osx-64 build; Linux.
    assert causes(MAC_CUDA_10.replace("cudatoolkit==10.1.243", "cudatoolkit=9.0")) == FAMILY
    for numba in ("https://conda.anaconda.org/numba/osx-64",
                  "https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/numba/osx-64"):
        assert extract(MAC_CUDA_10 + f"  - {numba}\n", KB).conda_missing == []
    linux = MAC_CUDA_10.replace("osx-64", "linux-64")
    assert causes(linux) == FAMILY
    assert any(check.startswith("conda search -c conda-forge 'cudatoolkit' --platform linux-64")
               for check in next_checks(extract(linux, KB)))


def test_a_published_pytorch_cuda_12_that_the_pytorch_channel_did_not_show_proves_the_platform() -> None:
    # Gouryella/ChatTTS-webui#4: pytorch-cuda=12.1* not found with the pytorch channel searched; 12.1
    # was built for linux-64 and win-64 only, so the platform solved for is another (macOS there).
    channels = channel_list("https://conda.anaconda.org/pytorch", "https://conda.anaconda.org/nvidia",
                            "defaults")
    text = NOT_FOUND + "  - pytorch-cuda=12.1*\n\n" + channels
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-pytorch-cuda-unavailable" and "12.1" in found.cause
    # Counter-cases: 11.8 also had noarch builds; a mirror is not the publisher's channel; a
    # linux-64 search that missed it proves no platform; a version never published is its own cause.
    assert causes(text.replace("12.1*", "11.8")) == FAMILY
    for mirror in ("https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/pytorch",
                   "https://conda.example.org/pytorch"):
        assert causes(NOT_FOUND + "  - pytorch-cuda=12.1\n\n" + channel_list(mirror, "defaults")) == FAMILY
    assert causes(NOT_FOUND + "  - pytorch-cuda=12.1\n\n" + channel_list("pytorch", "nvidia")) == [
        "conda-pytorch-cuda-unavailable"]
    linux = channel_list("https://conda.anaconda.org/pytorch/linux-64", "https://conda.anaconda.org/pytorch/noarch")
    assert causes(NOT_FOUND + "  - pytorch-cuda=12.1\n\n" + linux) == FAMILY
    assert "conda-pytorch-cuda-unavailable" not in causes(text.replace("12.1*", "12.2"))


def test_conda_4_2_and_4_3_wordings_give_the_platform_and_channels_searched() -> None:
    # joosthub/pytorch-nlp-tutorial-sf2017#2, both texts (conda 4.3, then 4.2: conda/exceptions.py).
    conda43 = ("PackageNotFoundError: Packages missing in current channels:\n\n  - pytorch\n\n"
               "We have searched for the packages in the following channels:\n\n"
               "  - https://conda.anaconda.org/soumith/win-64\n  - https://conda.anaconda.org/soumith/noarch\n")
    read = extract(conda43, KB)
    assert read.not_found == ["pytorch"] and read.conda_search is not None
    assert (read.conda_search.channels, read.conda_search.subdirs) == (("soumith",), ("win-64",))
    conda42 = ("PackageNotFoundError: Package not found: '' Package missing in current osx-64 channels: \n"
               "  - cuda80 \n")
    read = extract(conda42, KB)
    assert read.not_found == ["cuda80"] and read.conda_search is not None
    assert read.conda_search.subdirs == ("osx-64",)
    # What they prove stays with the data: a 32-bit subdir proves the platform in the old wording too.
    assert causes(conda43.replace("win-64", "win-32")) == ["conda-no-build-for-platform"]
    assert causes(conda43) == FAMILY and causes(conda42) == FAMILY
    # Counter-case: "missing" in other words is no conda search.
    assert extract("Package libfoo missing in current build\n", KB).conda_search is None


def test_a_published_pytorch_cuda_with_a_foreign_build_string_states_no_cause() -> None:
    read = extract(EXPORTED, KB)
    assert read.conda_search is not None and read.conda_search.subdirs == ("win-64",)
    assert read.conda_missing == [] and causes(EXPORTED) == FAMILY
    assert any(c.startswith("conda search -c pytorch -c nvidia pytorch-cuda") for c in next_checks(read))
    assert not any(c.startswith("pip index") for c in next_checks(read))


def test_a_pytorch_cuda_newer_than_the_recipe_ever_had_is_the_channel_ending() -> None:
    # https://github.com/ultralytics/ultralytics/issues/22030
    text = ("Channels:\n - pytorch\n - nvidia\n - conda-forge\n - defaults\nPlatform: win-64\n" + NOT_FOUND
            + "  - pytorch-cuda=12.8*\n\n" + channel_list("https://conda.anaconda.org/pytorch",
                                                          "https://conda.anaconda.org/nvidia", "defaults"))
    (explanation,) = explain_report(text, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "conda-pytorch-channel-ended"
    assert explanation.cause.startswith("pytorch-cuda 12.8 was asked for")
    # 12.4 was published: the same text asking for it proves nothing.
    assert causes(text.replace("12.8*", "12.4")) == FAMILY
    # A version between those published is said as read, not as a cause.
    between = extract(text.replace("12.8*", "12.0"), KB)
    assert [(m.package, m.kind) for m in between.conda_missing] == [("pytorch-cuda", "version")]
    assert causes(text.replace("12.8*", "12.0")) == FAMILY
    expected = "pytorch-cuda 12.0 was never published (published: 11.6, 11.7, 11.8, 12.1, 12.4)"
    assert any(line.startswith(expected)
               for line in read_lines(between))


# Printed by uv 0.13.9 here: `uv lock --preview-features wheel-variants` in a project whose only torch
# wheels are variants (find-links directory with torch-2.9.0-variants.json).
UV_LOCK = """error: No solution found when resolving dependencies
  cause: Because torch==2.9.0 has only unsupported wheel variants and only torch==2.9.0 is available, we can conclude that all versions of torch cannot be used.
         And because your project depends on torch, we can conclude that your project's requirements are unsatisfiable.
"""  # noqa: E501


def test_a_project_lock_is_named_as_why_no_variant_was_chosen() -> None:
    (error,) = extract(UV_LOCK, KB).installer_errors
    assert (error.installer, error.kind, error.package) == ("uv", "no-variant", "torch")
    assert "uv lock" in error.meaning and "uv pip install" in error.meaning
    (explanation,) = explain_report(UV_LOCK, CATALOG, kb=KB).explanations
    assert explanation.signature.id == "wheel-variant-none-matched"
    assert any("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION" in step for step in explanation.fix)
    assert any("--index-url https://download.pytorch.org/whl/" in step for step in explanation.fix)


def test_without_the_command_both_readings_of_no_variant_are_given() -> None:
    text = UV_LOCK.replace("your project depends on", "you require").replace("your project's", "your")
    (error,) = extract(text, KB).installer_errors
    assert error.meaning.startswith("either the wheel-variants preview was off")
    without = "$ uv pip install --find-links ./links torch\n" + text
    assert "has no --preview-features wheel-variants" in extract(without, KB).installer_errors[0].meaning
    other = "$ uv pip install --preview-features json-output --find-links ./links torch\n" + text
    assert "has no --preview-features wheel-variants" in extract(other, KB).installer_errors[0].meaning


def test_texts_without_variant_words_read_no_installer_error() -> None:
    assert extract("error: No solution found when resolving dependencies\n", KB).installer_errors == []
