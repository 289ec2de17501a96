"""What a report says in words about the torch an install left in place (extract.said): a CPU-only
build put in, or pip uninstalling the GPU build. Statements only, each with its counter-cases."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract.said import cpu_build_said, pip_replaced_torch_said
from torchsmith.explain.matcher import explain_report


def test_a_cpu_build_the_report_says_an_install_put_in_place() -> None:
    for text in ("This command replaced the CUDA-enabled pytorch with CPU-enabled-only pytroch:",
                 "trying to `pip install torch` resulted in the CPU version of torch stable.",
                 "if conda-forge is first, then the cpu only version of pytorch is installed.",
                 "it broke my installation by forcing a non-CUDA version of Torch to be installed."):
        assert cpu_build_said(text), text
        assert stated(text) == ["torch-not-compiled-with-cuda"], text


def test_a_question_a_wish_or_a_negation_is_no_cpu_build() -> None:
    for text in ("How do I install the CPU version of torch?",
                 "I want to install the CPU version of torch on this laptop.",
                 "I installed the CUDA build, not the CPU version of torch.",
                 "I installed the CUDA build instead of the CPU version of torch.",
                 "It replaced the CPU version of torch with the CUDA one.",
                 "The CPU version of torch works; the GPU one crashes."):
        assert not cpu_build_said(text), text
    # the reader's family is not stated on macOS, whose builds are CPU/MPS by design
    assert stated("/Users/me/venv: pip install torch installed the CPU version of torch") == []


def test_pip_uninstalling_the_gpu_build_in_the_reports_words() -> None:
    text = ("doing `pip install git+https://github.com/x/ClearerVoice-Studio.git` it seems to uninstall "
            "the `torch-2.11.0+cu128` and replace it with `torch-2.12.0`\n")
    (said,) = pip_replaced_torch_said(text)
    assert said.kind == "torch-replaced-said" and said.package == "2.11.0+cu128"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "pip-replaced-torch-build" and found.candidates
    assert "2.11.0+cu128" in found.cause
    worded = ("pip install vllm (0.6.3) will force a reinstallation of the CPU version torch and replace "
              "cuda torch")
    assert "pip-replaced-torch-build" in stated(worded)


def test_no_pip_or_another_installer_or_the_users_own_uninstall_is_not_pips_replacement() -> None:
    # no pip command in the text: who replaced it is not shown
    assert pip_replaced_torch_said("it uninstalled torch-2.11.0+cu128 and replaced it") == []
    # uv and conda replace builds in the same words
    assert pip_replaced_torch_said("uv pip install foo; it uninstalled torch-2.11.0+cu128") == []
    assert pip_replaced_torch_said("pip install foo, then conda install bar replaced cuda torch") == []
    # the user's own command
    assert pip_replaced_torch_said("pip install foo\npip uninstall torch==2.1.0+cu118\n") == []
    # a label-less torch is no build from PyTorch's index
    assert pip_replaced_torch_said("pip install foo uninstalled torch-2.1.0 and replaced it") == []


def test_the_cpu_build_without_torchs_name_where_torch_stands_just_before() -> None:
    # kyutai-labs/delayed-streams-modeling#131, pytorch/pytorch#160162
    for text in ("using `uvx --with moshi`, the wrong pytorch version is installed. It defaults to the [cpu] "
                 "version even when having cuda installed.",
                 "on GH200 their `pip install torch` will install the CPU version."):
        assert cpu_build_said(text), text
    # no torch named before it, another package's build, or a wish
    for text in ("pip install onnxruntime installed the CPU version.",
                 "pip install torch; then pip install tensorflow installed the CPU version of tensorflow.",
                 "For torch, should I install the CPU version?"):
        assert not cpu_build_said(text), text
