"""Messages transformers prints when a companion it needs is missing, read in its source's words
(src/transformers/modeling_utils.py, v4.46.0): what each proves, and look-alikes that must not."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

# from_pretrained: `if not is_accelerate_available(): raise ImportError(...)` before init_empty_weights
_ACCELERATE = ("ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
               "`pip install 'accelerate>={version}'`\n")
# _check_and_enable_flash_attn_2: importlib.util.find_spec("flash_attn") is None
_FA2 = ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
        "the package flash_attn seems to be not installed. Please refer to the documentation of "
        "https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 "
        "to install Flash Attention 2.\n")


def test_from_pretrained_needing_accelerate_is_the_missing_or_older_accelerate_family() -> None:
    (found,) = explain_report(_ACCELERATE.format(version="0.26.0"), CATALOG, kb=KB).explanations
    assert found.signature.id == "trainer-needs-accelerate"
    assert found.facts["required"] == "0.26.0"
    assert {c.id for c in found.candidates} == {"accelerate-not-installed", "companion-version-too-old"}
    # Older transformers printed the bare install line, with no version to name.
    older = _ACCELERATE.replace("'accelerate>={version}'", "accelerate")
    assert stated(older) == ["trainer-needs-accelerate"]
    # Counter-case: the bitsandbytes quantizer's message checks accelerate AND bitsandbytes, so it
    # does not prove accelerate is the missing one.
    bnb = ("ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: "
           "`pip install accelerate` "
           "and the latest version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`\n")
    assert "trainer-needs-accelerate" not in stated(bnb)


def test_flash_attention_2_toggled_on_without_the_package_is_the_flash_attn_family() -> None:
    assert stated(_FA2) == ["flash-attn-not-installed"]
    # Counter-case: the same preface with an installed but old flash_attn names the version check.
    old = _FA2.replace("the package flash_attn seems to be not installed.",
                       "you need flash_attn package version to be greater or equal than 2.1.0. "
                       "Detected version 2.0.4.")
    assert "flash-attn-not-installed" not in stated(old)
    assert "flash-attn-version-too-old" in stated(old)


# transformers/utils/import_utils.py is_torch_available: the minimum torch of the release, checked at import
_DISABLED = "Disabling PyTorch because PyTorch >= {required} is required but found {installed}\n"


def test_transformers_disabling_an_old_torch_names_the_versions_it_compared() -> None:
    text = _DISABLED.format(required="2.4", installed="2.3.0") + (
        "PyTorch was not found. Models won't be available and only tokenizers, configuration and file/data "
        "utilities can be used.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "transformers-needs-newer-torch"
    assert (found.facts["required"], found.facts["installed"]) == ("2.4", "2.3.0")
    assert "at least 2.4" in found.cause
    # Counter-cases: transformers told to leave torch alone (USE_TF) is no version check, and
    # its "PyTorch was not found" note alone does not say why.
    assert stated("Disabling PyTorch because USE_TF is set\n") == []
    assert "transformers-needs-newer-torch" not in stated(text.splitlines()[1] + "\n")


# Lightning's accelerator connector raises this when accelerator_cls.is_available() is False; for
# CUDAAccelerator (GPUAccelerator before 1.7) that is torch.cuda.device_count() > 0.
_LIGHTNING = ("lightning_fabric.utilities.exceptions.MisconfigurationException: `{cls}` can not run on your "
              "system since the accelerator is not available. The following accelerator(s) is available and "
              "can be passed into `accelerator` argument of `Trainer`: {available}.\n")


def test_lightning_refusing_its_cuda_accelerator_is_the_torch_sees_no_cuda_gpu_family() -> None:
    for cls in ("CUDAAccelerator", "GPUAccelerator"):
        assert stated(_LIGHTNING.format(cls=cls, available="['cpu']")) == ["torch-sees-no-cuda-gpu"]
    older = _LIGHTNING.format(cls="GPUAccelerator", available="['cpu']").replace("`", "", 2)
    assert stated(older) == ["torch-sees-no-cuda-gpu"]
    (found,) = explain_report(_LIGHTNING.format(cls="CUDAAccelerator", available="['cpu']"),
                              CATALOG, kb=KB).explanations
    assert {"torch-not-compiled-with-cuda", "no-nvidia-driver"} <= {c.id for c in found.candidates}
    # Lightning's own helper counting visible CUDA devices says the same.
    none = ("ValueError: You requested to find 2 devices but there are no visible CUDA devices "
            "on this machine.\n")
    assert stated(none) == ["torch-sees-no-cuda-gpu"]
    # Counter-cases: the MPS accelerator is the MPS family, and a TPU one says nothing about CUDA.
    assert stated(_LIGHTNING.format(cls="MPSAccelerator", available="['cpu', 'cuda']")) == ["mps-unavailable"]
    tpu = _LIGHTNING.format(cls="TPUAccelerator", available="['cpu']")
    assert "torch-sees-no-cuda-gpu" not in stated(tpu)
