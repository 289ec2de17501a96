"""Loader and installer messages read by their shape (glibc's execstack refusal, Windows' module
text after a DLL's name, cuDNN's DLL names, a project's per-variant wheel index, a dotted PyTorch
index, a shared NVIDIA wheel), each with the text that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report


def test_glibc_refusing_an_executable_stack_library_is_the_2_41_dlopen_refusal() -> None:
    # glibc 2.41 NEWS / elf/dl-load.c: dlopen fails with EINVAL where it used to make the stack executable
    text = ("ImportError: libamdhip64.so: cannot enable executable stack as shared object requires: "
            "Invalid argument\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "glibc-execstack-refused" and "libamdhip64.so" in found.cause
    # "Permission denied" is SELinux/PaX/MemoryDenyWriteExecute refusing mprotect: another cause
    denied = text.replace("Invalid argument", "Permission denied")
    assert "glibc-execstack-refused" not in stated(denied)


def test_windows_module_text_after_a_dll_name_is_a_dll_load_failure() -> None:
    # FormatMessage's text for ERROR_MOD_NOT_FOUND (126), as Windows' dialog titles it with the DLL
    text = "fbgemm.dll - The specified module could not be found\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and "fbgemm.dll" in found.cause
    assert stated("The specified module could not be found in the archive.\n") == []


def test_a_cudnn_dll_not_found_is_cudnn_missing_not_any_dll() -> None:
    for text in ("cudnn ops64_9.dll is not found\n",
                 "Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n",
                 "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\n"):
        assert stated(text) == ["cudnn-library-missing"], text
    assert stated("cublas64_12.dll is not found\n") == ["windows-dll-load-failed"]


def test_a_refused_variant_index_of_a_project_is_a_variant_it_does_not_publish() -> None:
    # llama-cpp-python's README: --extra-index-url https://abetlen.github.io/llama-cpp-python/whl/<cuda-version>
    for url in ("https://abetlen.github.io/llama-cpp-python/whl/cu123",
                "https://abetlen.github.io/llama-cpp-python/whl/cu125/"):
        text = f"Link {url} returns 404 Not Found.\n"
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "companion-wheels-not-published" and "whl/cu12" in found.cause
    # the page answered, or a path under it that is not the variant page
    assert stated("Looking in indexes: https://abetlen.github.io/llama-cpp-python/whl/cu124\n") == []
    other = "404 for https://abetlen.github.io/llama-cpp-python/whl/cu124x/llama_cpp_python.whl\n"
    assert "companion-wheels-not-published" not in stated(other)


DOTTED = ("python -m pip install torch==2.4.0 -i https://download.pytorch.org/whl/{variant}\n"
          "Looking in indexes: https://download.pytorch.org/whl/{variant}\n"
          "ERROR: Could not find a version that satisfies the requirement torch==2.4.0 "
          "(from versions: none)\n"
          "ERROR: No matching distribution found for torch==2.4.0\n")


def test_a_pytorch_index_spelt_with_the_cuda_dot_is_no_index() -> None:
    text = DOTTED.format(variant="cu12.6")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-cuda-build-not-published" and "whl/cu12.6" in found.cause
    assert "torch-cuda-build-not-published" in stated(DOTTED.format(variant="cuda12.4"))
    # a real index, and a ROCm index whose name has its dot
    assert "torch-cuda-build-not-published" not in stated(DOTTED.format(variant="cu124"))
    assert "torch-cuda-build-not-published" not in stated(DOTTED.format(variant="rocm6.1"))


PIP_CHECK = ("ERROR: pip's dependency resolver does not currently take into account all the packages "
             "that are installed. This behaviour is the source of the following dependency conflicts.\n"
             "torch 2.1.1 requires nvidia-cudnn-cu12==8.9.2.26; platform_system == \"Linux\" and "
             "platform_machine == \"x86_64\", but you have nvidia-cudnn-cu12 {have} which is incompatible.\n")


def test_torch_pinned_nvidia_wheel_replaced_by_another_version_is_a_shared_wheel_conflict() -> None:
    text = PIP_CHECK.format(have="9.5.1.17")
    (error,) = [e for e in extract(text, KB).installer_errors if e.kind == "nvidia-wheel-shared"]
    assert error.text == "nvidia-cudnn-cu12 9.5.1.17" and "installed in its place" in error.meaning
    assert stated(text) == ["shared-nvidia-wheel-conflict"]
    # torch's pin against a non-NVIDIA package, or the same version: not this
    other = text.replace("nvidia-cudnn-cu12", "numpy")
    assert "shared-nvidia-wheel-conflict" not in stated(other)


UV = ("  x No solution found when resolving dependencies:\n"
      "  `-> Because torch>=2.2.0,<=2.3.1 depends on nvidia-cudnn-cu12==8.9.2.26 and\n"
      "      nvidia-cudnn-cu12==9.1.0.70, we can conclude that nvidia-cudnn-cu12!=8.9.2.26,\n"
      "      torch>=2.2.0,<=2.6.0, nvidia-cudnn-cu12!=9.1.0.70 are incompatible. (1)\n")


def test_uv_deriving_through_torchs_nvidia_pins_is_a_shared_wheel_conflict() -> None:
    assert stated(UV) == ["shared-nvidia-wheel-conflict"]
    # uv finding no wheel of torch's pinned NVIDIA wheel for this platform is another failure
    platform = UV.replace("are incompatible. (1)", "are incompatible, and nvidia-cudnn-cu12==9.1.0.70 "
                          "has no wheels with a matching platform tag")
    assert "shared-nvidia-wheel-conflict" not in stated(platform)
    assert "shared-nvidia-wheel-conflict" not in stated(UV.replace("!=", "=="))


def test_a_pip_conflict_on_torchs_nvidia_pin_stays_the_pin_conflict_it_states() -> None:
    text = ("ERROR: Cannot install -r requirements.txt (line 2) and -r requirements.txt (line 28) because "
            "these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n"
            "    torch 2.5.1 depends on nvidia-cuda-runtime-cu12==12.4.127\n"
            "    paddlepaddle-gpu 3.1.0 depends on nvidia-cuda-runtime-cu12==12.3.101\n")
    # the reader sees the shared wheel; torch-pin-conflict, which quotes that same pin, explains it
    assert any(e.kind == "nvidia-wheel-shared" for e in extract(text, KB).installer_errors)
    assert stated(text) == ["torch-pin-conflict"]


BF16 = ("{gpu}  File \"/usr/lib/python3.9/site-packages/transformers/training_args.py\", line 1098, "
        "in __post_init__\n"
        "    raise ValueError(\n"
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with "
        "cuda>=11.0\n")


def test_transformers_precision_refusal_is_a_family_until_the_text_shows_an_older_gpu() -> None:
    # transformers' training_args.py raises it when is_torch_bf16_gpu_available() is False: a GPU
    # below 8.0, no CUDA device, or an old torch / CUDA build
    (found,) = explain_report(BF16.format(gpu=""), CATALOG, kb=KB).explanations
    assert found.signature.id == "transformers-precision-refused" and len(found.candidates) == 3
    tf32 = "ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7\n"
    assert stated(tf32) == ["transformers-precision-refused"]
    # a V100 (7.0) shown: the GPU is the cause
    (found,) = explain_report(BF16.format(gpu="GPU: Tesla V100-SXM2-32GB\n"), CATALOG, kb=KB).explanations
    assert found.signature.id == "bf16-unsupported-gpu" and "7.0" in found.cause
    # an A100 (8.0) shown has bf16: the refusal comes from elsewhere, the family stands
    assert stated(BF16.format(gpu="GPU: NVIDIA A100-SXM4-40GB\n")) == ["transformers-precision-refused"]
    # newer transformers asks torch.cuda.is_bf16_supported(), which from torch 2.3 emulates bf16 on a
    # V100 (pytorch#115924): beside such a torch the V100 is not what was refused
    newer = BF16.format(gpu="PyTorch version: 2.5.1+cu124\nGPU: Tesla V100-SXM2-32GB\n")
    assert stated(newer) == ["transformers-precision-refused"]


def test_detectron2_and_dgl_pages_refused_are_builds_they_do_not_publish() -> None:
    # detectron2's INSTALL.md and DGL's install page: one find-links page per CUDA variant and torch series
    d2 = ("WARNING: Retrying ... 403 Client Error: Forbidden for url: "
          "https://dl.fbaipublicfiles.com/detectron2/wheels/cu121/torch2.1/index.html\n")
    assert stated(d2) == ["companion-wheels-not-published"]
    dgl = "HTTP error 403 while getting https://data.dgl.ai/wheels/torch-2.4/cu121/repo.html\n"
    assert stated(dgl) == ["companion-wheels-not-published"]
    assert stated("Looking in links: https://data.dgl.ai/wheels/torch-2.4/cu121/repo.html\n") == []


TF32 = "{gpu}ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7\n"


def test_transformers_tf32_refusal_names_the_gpu_only_when_the_text_shows_one_below_ampere() -> None:
    shown = TF32.format(gpu="CudaDeviceProperties(name='Tesla T4', major=7, minor=5, total_memory=15102MB)\n")
    (found,) = explain_report(shown, CATALOG, kb=KB).explanations
    assert found.signature.id == "tf32-unsupported-gpu" and "7.5" in found.cause
    # gensyn-ai/rl-swarm#199: the same refusal on an RTX 4090 (8.9) had another cause (no CUDA device)
    assert stated(TF32.format(gpu="My hardware (24GB RTX 4090 GPU)\n")) == ["transformers-precision-refused"]
    assert stated(TF32.format(gpu="")) == ["transformers-precision-refused"]


def test_a_python_c_api_symbol_the_interpreter_lacks_is_a_family_of_two_pythons() -> None:
    text = ("python3: symbol lookup error: /home/u/anaconda3/lib/python3.6/site-packages/torch/lib/"
            "libtorch_python.so: undefined symbol: PySlice_Unpack\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "python-c-api-symbol-missing" and len(found.candidates) == 2
    assert "PySlice_Unpack" in found.cause
    # a linker's undefined reference while building is no interpreter's; torch's own symbol is not Python's
    assert stated("/usr/bin/ld: foo.o: in function `f': undefined reference to `PyFloat_Type'\n") == []
    torch_symbol = "ImportError: /x/_C.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n"
    assert "python-c-api-symbol-missing" not in stated(torch_symbol)


def test_ctypes_could_not_find_a_torch_family_module_is_the_windows_dll_family() -> None:
    # CPython's ctypes (Modules/_ctypes/callproc.c) for ERROR_MOD_NOT_FOUND: the module or a DLL it needs.
    text = (r"FileNotFoundError: Could not find module 'C:\Python310\Lib\site-packages\torchaudio\lib"
            r"\libtorchaudio.pyd' (or one of its dependencies). Try using the full path with constructor "
            "syntax.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and found.candidates
    causes = " ".join(c.cause for c in found.candidates)
    assert "torchvision/torchaudio build made for another torch" in causes
    # Counter-case: another package's DLL is not torch's family.
    other = (r"FileNotFoundError: Could not find module 'C:\venv\Lib\site-packages\pyzbar\libzbar-64.dll' "
             "(or one of its dependencies). Try using the full path with constructor syntax.\n")
    assert "windows-dll-load-failed" not in stated(other)
