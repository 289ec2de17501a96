"""Messages read in the wording their own tool prints (its source is cited in the signature), also
where a reporter quoted or cut them; each with the text that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report


def test_a_quoted_cuda_message_without_its_article_is_read_by_its_string() -> None:
    # libcudart's string is "the provided PTX was compiled with an unsupported toolchain."
    text = 'CUDA error: "provided PTX was compiled with an unsupported toolchain" on vLLM 0.11.2\n'
    (error,) = extract(text, KB).gpu_errors
    assert (error.name, error.code) == ("cudaErrorUnsupportedPtxVersion", 222)
    assert stated(text) == ["ptx-newer-than-driver"]
    assert extract('CUDA error: "some words nobody prints"\n', KB).gpu_errors[0].name is None


def test_xformers_message_cut_above_its_header_is_still_xformers() -> None:
    body = ("    PyTorch 2.9.0+cu128 with CUDA 1208 (you have 2.10.0+cu128)\n"
            "    Python  3.10.11 (you have 3.13.12)\n")
    tail = "  Please reinstall xformers (see https://github.com/facebookresearch/xformers)\n"
    assert stated(body + tail) == ["xformers-torch-mismatch"]
    assert "xformers-torch-mismatch" not in stated(body + "  Please reinstall torch\n")


def test_xformers_you_have_names_the_installed_torch_and_a_cpu_one_is_read_as_such() -> None:
    # Sanster/tldream#3: xformers (xformers/_cpp_lib.py) prints the torch it finds after "you have".
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.0.0+cu118 with CUDA 1108 (you have 2.0.0+cpu)\n"
            "    Python  3.10.10 (you have 3.10.9)\n"
            "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n")
    env = extract(text, KB).environment
    assert (env.torch, env.torch_cpu_only) == ("2.0.0+cpu", True)
    assert stated(text) == ["xformers-torch-mismatch", "torch-not-compiled-with-cuda"]
    # Counter-cases: the torch it was built for is not the one installed; Python's "you have" is not torch.
    cuda = text.replace("(you have 2.0.0+cpu)", "(you have 2.1.0+cu121)")
    env = extract(cuda, KB).environment
    assert (env.torch, env.torch_cuda, env.torch_cpu_only) == ("2.1.0+cu121", "12.1", None)
    assert stated(cuda) == ["xformers-torch-mismatch"]
    assert extract("    Python  3.10.10 (you have 3.10.9)\n", KB).environment.torch is None


def test_transformers_flash_attn_version_check() -> None:
    text = ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following "
            "error: you need flash_attn package version to be greater or equal than 2.1.0. "
            "Detected version 2.0.4. Please refer to the documentation\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "flash-attn-version-too-old"
    assert "flash_attn 2.0.4" in found.cause and "2.1.0" in found.cause
    # the same check's wording for another package is not flash-attn's
    assert stated("ImportError: You need quanto package version to be greater or equal than 0.2.0 to use "
                  "`QuantoQuantizedCache`. Detected version 0.1.0.\n") == []


def test_ctranslate2_refuses_float16_but_not_another_type() -> None:
    msg = ("ValueError: Requested {t} compute type, but the target device or backend do not support "
           "efficient {t} computation.\n")
    assert stated(msg.format(t="float16")) == ["ct2-float16-unsupported-device"]
    assert stated(msg.format(t="int8_float16")) == ["ct2-float16-unsupported-device"]
    assert "ct2-float16-unsupported-device" not in stated(msg.format(t="int8"))


def test_deepspeed_accepting_a_minor_cuda_mismatch_is_no_mismatch() -> None:
    accepted = ("Installed CUDA version 11.2 does not match the version torch was compiled with 11.7 "
                "but since the APIs are compatible, accepting this combination\n")
    skipped = ("[WARNING] DeepSpeed Op Builder: Installed CUDA version 12.4 does not match the version torch "
               "was compiled with 12.1.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this combination of CUDA\n")
    refused = (">- DeepSpeed Op Builder: Installed CUDA version 11.2 does not match the version torch was "
               "compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.\n")
    assert "extension-cuda-mismatch" not in stated(accepted)
    assert "extension-cuda-mismatch" not in stated(skipped)
    assert stated(refused) == ["extension-cuda-mismatch"]


def test_deepspeed_libaio_warnings_of_older_and_newer_releases() -> None:
    older = (" [WARNING]  async_io requires the libraries: ['libaio-dev'] but are missing. "
             "Can be fixed by: `apt install libaio-dev`.\n")
    assert stated(older) == ["libaio-missing"]
    newer = " [WARNING]  async_io: please install the libaio-dev package with apt\n"
    assert stated(newer) == ["libaio-missing"]
    assert stated(" [WARNING]  async_io requires the libraries: ['libfoo-dev'] but are missing.\n") == []


def test_an_old_torch_c_symbol_missing_in_torch_own_library_is_mixed_libraries() -> None:
    text = ("ImportError: /opt/conda/lib/python3.5/site-packages/torch/lib/libTHC.so.1: "
            "undefined symbol: THLongStorage_inferSizeN\n")
    assert stated(text) == ["torch-libs-mixed"]
    # the same symbol missing in an extension's library is not torch's own libraries
    other = "ImportError: /home/me/ext/build/libmyext.so: undefined symbol: THLongStorage_inferSizeN\n"
    assert "torch-libs-mixed" not in stated(other)


def test_linking_libtorch_against_an_older_cuda_runtime() -> None:
    text = "libtorch_cuda.so: undefined reference to `cudaLaunchKernelExC@libcudart.so.11.0'\n"
    assert stated(text) == ["extension-cuda-mismatch"]
    # another library's reference to the runtime says nothing about torch's CUDA
    assert "extension-cuda-mismatch" not in stated(
        "libmyapp.so: undefined reference to `cudaLaunchKernelExC@libcudart.so.11.0'\n")


def test_cudnn_dispatcher_cannot_load_its_symbol() -> None:
    # libcudnn.so.9 prints "Invalid handle. Cannot load symbol %s" when a sub-library did not load
    # (strings of nvidia-cudnn-cu12 9.28.0.42's nvidia/cudnn/lib/libcudnn.so.9, sha256 727cf38c…).
    (found,) = explain_report("Cannot load symbol cudnnGetVersion\n", CATALOG, kb=KB).explanations
    assert found.signature.id == "cudnn-library-missing" and found.candidates
    assert found.cause.startswith("A cuDNN library could not be loaded")
    assert "cudnn-library-missing" not in stated("Invalid handle. Cannot load symbol cublasLtCreate\n")


def test_async_allocator_on_a_gpu_comfyui_lists_without_it() -> None:
    # ComfyUI's startup line names the device and the allocator; its cuda_malloc.py lists the GPUs
    # (as substrings of the device name) the allocator does not work on: formats.json.
    text = "Device: cuda:0 NVIDIA GeForce GTX 960M : cudaMallocAsync\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-malloc-async-unsupported"
    assert "NVIDIA GeForce GTX 960M" in found.cause
    assert stated("Device: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync\n") == []
    assert stated("Device: cuda:0 NVIDIA GeForce GTX 960M : native\n") == []
    # the allocator setting next to a GPU the text names elsewhere
    env = "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync\nGPU 0: Tesla M60\n"
    assert "cuda-malloc-async-unsupported" in stated(env)


def test_torchcodec_load_failure_is_a_family_until_the_traceback_names_ffmpeg() -> None:
    # torchcodec's own message lists three likely causes (FFmpeg, the torch version, another dependency)
    message = ("RuntimeError: Could not load libtorchcodec. Likely causes: 1. FFmpeg is not properly "
               "installed in your environment. 2. The PyTorch version (2.11.0) is not compatible.\n")
    (found,) = explain_report(message, CATALOG, kb=KB).explanations
    assert found.signature.id == "torchcodec-load-failed" and found.signature.candidates
    missing = "OSError: libavutil.so.59: cannot open shared object file: No such file or directory\n"
    assert stated(message + missing) == ["ffmpeg-shared-libs-missing"]


def test_dgl_tensor_adapter_named_for_the_installed_torch_is_missing() -> None:
    # DGL looks for libtensoradapter_pytorch_<installed torch>.so: none ships for a torch it was not built for
    text = ("TensorDispatcher: dlopen failed: /env/lib/python3.8/site-packages/dgl/tensoradapter/pytorch/"
            "libtensoradapter_pytorch_1.10.2.so: cannot open shared object file: No such file or directory\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "companion-needs-other-torch" and "torch 1.10.2" in found.cause
    other = "OSError: /env/lib/libtensoradapter.so: cannot open shared object file: No such file\n"
    assert "companion-needs-other-torch" not in stated(other)


def test_a_missing_shared_libpython_is_read_from_the_soname_table() -> None:
    text = "ImportError: libpython3.8.so.1.0: cannot open shared object file: No such file or directory\n"
    assert stated(text) == ["libpython-not-on-loader-path"]
    # the loader found libpython; the library it could not open is another one
    assert "libpython-not-on-loader-path" not in stated(
        "ImportError: libfoo.so.2: cannot open shared object file (needed by /usr/lib/libpython3.8.so.1.0)\n")


def test_a_name_missing_from_an_installed_package_is_a_family_not_a_cause() -> None:
    # CPython's wordings (Python/ceval.c import_from, Objects/moduleobject.c, Python/import.c):
    # they show which name is missing, never which release removed or lacks it.
    for text in ("ImportError: cannot import name 'interaction_mode' from 'tensordict.nn.probabilistic'\n",
                 "AttributeError: module 'torchaudio' has no attribute 'info'\n",
                 "ModuleNotFoundError: No module named 'gymnasium.wrappers.monitoring'\n"):
        report = explain_report(text, CATALOG, kb=KB)
        (found,) = report.explanations
        assert found.signature.id == "dependency-api-removed" and len(found.candidates) == 3, text
    # A circular import, and a top-level module that is not installed, are other failures.
    assert "dependency-api-removed" not in stated(
        "AttributeError: partially initialized module 'numpy' has no attribute 'float' "
        "(most likely due to a circular import)\n")
    assert "dependency-api-removed" not in stated(
        "ImportError: cannot import name 'x' from partially initialized module 'app' "
        "(most likely due to a circular import)\n")
    assert "dependency-api-removed" not in stated("ModuleNotFoundError: No module named 'gymnasium'\n")
    # A private submodule (a compiled part such as torch._C) missing is a build or install failure.
    assert "dependency-api-removed" not in stated("ModuleNotFoundError: No module named 'torch._C'\n")


def test_pybind11s_duplicate_type_registration_is_a_clash_between_modules() -> None:
    # pybind11.h generic_type::initialize: a type another loaded module registered first.
    text = 'ImportError: generic_type: type "_gpuDeviceProperties" is already registered!\n'
    assert stated(text) == ["pybind11-clash-between-packages"]
    # Its other wording is a name clash inside one module's own namespace, not between modules.
    assert stated('ImportError: generic_type: cannot initialize type "Foo": '
                  'an object with that name is already defined\n') == []


def test_transformers_modeling_file_imports_read_as_the_flash_attn_family_only_for_flash_attn() -> None:
    # transformers dynamic_module_utils.check_imports: older releases list any import that failed.
    text = ("ImportError: This modeling file requires the following packages that were not found in your "
            "environment: timm, flash_attn. Run `pip install timm flash_attn`\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "flash-attn-not-installed" and len(found.candidates) == 3
    assert stated("ImportError: This modeling file requires the following packages that were not found in "
                  "your environment: einops. Run `pip install einops`\n") == []


def test_a_second_conda_channel_without_its_own_flag() -> None:
    command = "conda install pytorch cudatoolkit=11.1 -c pytorch nvidia\n"
    refused = ("usage: conda-script.py [-h] [-V] command ...\n"
               "conda-script.py: error: unrecognized arguments: nvidia\n")
    assert stated(command + refused) == ["conda-channel-missing-c-flag"]
    # every channel has its flag: the refused word is something else
    assert stated("conda install pytorch -c pytorch -c nvidia --foo\n" + refused) == []


def test_torch_loads_own_2_6_sentence_is_the_weights_only_default() -> None:
    # torch/serialization.py prints the 2.6 sentence only where weights_only was left at its default.
    text = ("_pickle.UnpicklingError: Weights only load failed. This file can still be loaded.\n"
            "\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
            "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
            "`False` will likely succeed.\n\tWeightsUnpickler error: Unsupported global: "
            "GLOBAL numpy.core.multiarray.scalar was not an allowed global by default.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-load-weights-only-default"
    assert "numpy.core.multiarray.scalar" in found.cause
    # The caller asked for weights_only=True itself: no default changed under it.
    assert "torch-load-weights-only-default" not in stated(
        "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with `weights_only` set "
        "to `False` will likely succeed, but it can result in arbitrary code execution.\n")


def test_torchaudios_torchcodec_wording_names_torchcodec_not_an_audio_backend() -> None:
    # torchaudio 2.9 _torchcodec.py: raised when `from torchcodec.decoders import AudioDecoder` fails.
    assert stated("ImportError: TorchCodec is required for save_with_torchcodec. Please install torchcodec "
                  "to use this function.\n") == ["torchaudio-needs-torchcodec"]
    assert stated("RuntimeError: No audio I/O backend is available.\n") == ["torchaudio-no-backend"]


def test_a_setup_scripts_own_python_range_check_names_the_range_and_the_python() -> None:
    # coqui-ai/TTS setup.py raises this where its Python range excludes the interpreter.
    text = "RuntimeError: TTS requires python >= 3.9 and < 3.12 but your Python version is 3.12.0 (main)\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "package-python-version-unsupported"
    assert ">= 3.9 and < 3.12" in found.cause and "3.12.0" in found.cause
    # A requirement on another package is not a Python range.
    assert "package-python-version-unsupported" not in stated("TTS requires torch>=2.1 but you have 2.0\n")


def test_torch_own_pin_listed_in_pips_conflict_block() -> None:
    # pip's resolvelib factory: "The conflict is caused by:" then one "<name> <version> depends on <req>" each
    block = ("ERROR: Cannot install a and b because these package versions have conflicting dependencies.\n\n"
             "The conflict is caused by:\n"
             "    torch 2.5.1 depends on nvidia-cuda-runtime-cu12==12.4.127\n"
             "    paddlepaddle-gpu 3.1.0 depends on nvidia-cuda-runtime-cu12==12.3.101\n")
    assert stated(block) == ["torch-pin-conflict"]
    others = block.replace("torch 2.5.1", "jax 0.4.30")
    assert "torch-pin-conflict" not in stated(others)


UV_CHAIN = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because {what} has no wheels with a matching platform tag\n"
            "      (e.g., `manylinux_2_28_x86_64`) and torch==2.8.0 depends on {what}, we can conclude\n"
            "      that torch==2.8.0 cannot be used. And because vllm==0.11.0 depends on torch==2.8.0, we\n"
            "      can conclude that vllm==0.11.0 cannot be used.\n")


def test_a_torch_that_has_no_wheel_here_is_no_pin_conflict() -> None:
    # ray-project/ray#57713: a requirement of torch 2.8.0 has no wheel for the platform, so that torch
    # cannot be installed here whatever pins it; uv's words for it (crates/uv-resolver, astral-sh/uv#1293)
    unfit = UV_CHAIN.format(what="nvidia-cuda-nvrtc-cu12==12.8.93")
    report = explain_report(unfit, CATALOG, kb=KB)
    assert "torch-pin-conflict" in dict(report.contradicted)
    # Counter-case: two pins of torch that cannot both hold are the conflict
    pinned = ("  ╰─▶ Because only vllm<=0.10.0 is available and vllm==0.10.0 depends on torch==2.7.1\n"
              "      and you require torch==2.8.0, we can conclude that your requirements are\n"
              "      unsatisfiable.\n")
    assert "torch-pin-conflict" in stated(pinned)


def test_mooncake_has_no_module_built_for_the_installed_torch() -> None:
    # mooncake/pg.py imports mooncake.pg_<torch version> and says so when the wheel has none
    text = "ImportError: Mooncake PG was not built against torch==2.14.0.\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "companion-needs-other-torch" and "torch 2.14.0" in found.cause
    assert stated("ImportError: Mooncake PG failed to initialise its transfer engine.\n") == []


def test_transformers_refusing_torch_load_below_2_6_is_the_torch_transformers_needs() -> None:
    # transformers/utils/import_utils.py check_torch_load_is_safe (4.52 on), wrapped as a logger prints it
    text = ("ValueError: Due to a serious vulnerability issue in `torch.load`, even with "
            "`weights_only=True`, we now require users to upgrade torch to at least v2.6\nin order to use "
            "the function. This version restriction does not apply when loading files with safetensors.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "transformers-needs-newer-torch"
    assert "at least 2.6" in found.cause
    # torch's own weights_only message is another cause
    assert "transformers-needs-newer-torch" not in stated(
        "_pickle.UnpicklingError: Weights only load failed. In PyTorch 2.6, we changed the default value "
        "of the `weights_only` argument in `torch.load` from `False` to `True`.\n")
