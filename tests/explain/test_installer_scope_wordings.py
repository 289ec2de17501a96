"""Installer refusals read with the data: a pin with no wheel for the Python pip names, a PyTorch
index read alone, a torch backend newer than the uv, uv's Python ABI refusal, musl's loader on
torch's files, and a named build that cannot see torch; each with the neighbouring text that must
not be read the same way."""

from __future__ import annotations

from typing import List

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract

PIN = "torch-pin-lacks-python-wheel"
ALONE = "index-url-replaces-pypi"
FAMILY = "no-matching-distribution"


def _pip_refusal(python: str, pin: str, listed: str) -> str:
    return (f"Requirement already satisfied: omegaconf~=2.3.0 in /home/u/venv/lib/python{python}/"
            f"site-packages (from -r requirements.txt (line 1)) (2.3.0)\n"
            f"ERROR: Could not find a version that satisfies the requirement {pin}"
            f" (from versions: {listed})\n"
            f"ERROR: No matching distribution found for {pin}\n")


def test_a_pin_whose_releases_have_no_wheel_for_the_python_pip_names() -> None:
    assert stated(_pip_refusal("3.12", "torch~=2.1.0", "2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1")) == [PIN]
    # torchvision's wheels on PyPI (the package snapshot): 0.20.1 has none for cp313
    fetched = ("Collecting torch==2.5.1+cu121\n  Downloading https://download.pytorch.org/whl/cu121/"
               "torch-2.5.1%2Bcu121-cp313-cp313-linux_x86_64.whl (780.4 MB)\n"
               "ERROR: Could not find a version that satisfies the requirement torchvision==0.20.1+cu121"
               " (from versions: 0.1.6, 0.2.0, 0.21.0, 0.22.0)\n")
    assert stated(fetched) == [PIN]


def test_a_pin_with_wheels_for_that_python_or_two_pythons_named_stay_the_family() -> None:
    # torch 2.1 publishes cp311 wheels: this Python is not why
    assert stated(_pip_refusal("3.11", "torch~=2.1.0", "2.2.0, 2.3.0")) == [FAMILY]
    two = (_pip_refusal("3.12", "torch~=2.1.0", "2.2.0")
           + "pip 24.0 from /usr/lib/python3/dist-packages/pip (python 3.10)\n")
    assert stated(two) == [FAMILY]
    # a release the data does not know
    assert stated(_pip_refusal("3.12", "torch==9.9.9", "2.2.0")) == [FAMILY]
    # uv's own refusal is read by its own signature
    assert PIN not in stated("  × No solution found when resolving dependencies:\n  ╰─▶ Because torch==2.1.0"
                             " has no wheels with a matching Python ABI tag (e.g., `cp312`)\n")


def _alone(first_index: str, requirement: str) -> str:
    return (f"$ pip3 install {requirement} --pre torch --index-url {first_index}\n"
            f"Looking in indexes: {first_index}\n"
            f"ERROR: Could not find a version that satisfies the requirement {requirement}"
            " (from versions: none)\n")


def test_a_pytorch_index_read_alone_finds_no_pypi_package() -> None:
    assert stated(_alone("https://download.pytorch.org/whl/nightly/cu117", "numpy")) == [ALONE]
    frontend = "comfyui-frontend-package==1.14.6"
    assert stated(_alone("https://download.pytorch.org/whl/cu128", frontend)) == [ALONE]


def test_pypi_among_the_indexes_or_a_pytorch_package_is_not_the_index_replacing_pypi() -> None:
    both = ("Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu117\n"
            "ERROR: Could not find a version that satisfies the requirement numpy (from versions: none)\n")
    assert ALONE not in stated(both)
    assert ALONE not in stated(_alone("https://download.pytorch.org/whl/cu121", "torchvision==0.99.0"))
    # a dependency the index's torch builds require: the index should have carried it
    cudnn = "nvidia-cudnn-cu12==9.1.0.70"
    assert ALONE not in stated(_alone("https://download.pytorch.org/whl/cu124", cudnn))
    assert ALONE not in stated(_alone("https://download.pytorch.org/whl/cu124", "filelock"))
    assert ALONE not in stated(_alone("https://mirror.example.org/simple", "numpy"))


_BACKEND = ("==> uv 0.7.3\nerror: invalid value '{value}' for '--torch-backend <TORCH_BACKEND>'\n"
            "  [possible values: auto, cpu, cu128, cu126, cu124, cu121, cu118]\n\n"
            "For more information, try '--help'.\n")


def test_a_torch_backend_pytorch_publishes_but_this_uv_does_not_list_is_a_uv_too_old() -> None:
    assert stated(_BACKEND.format(value="cu130")) == ["uv-too-old-for-option"]
    # not a PyTorch variant at all: a typo, not an old uv
    assert stated(_BACKEND.format(value="cu12.8")) == []
    assert stated(_BACKEND.format(value="cu999")) == []


def test_uv_python_abi_refusal_of_any_package() -> None:
    text = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because all versions of torchcodec have no wheels with a matching Python ABI tag"
            " (e.g., `cp314`) and you require torchcodec, we can conclude that your requirements are"
            " unsatisfiable.\n")
    assert stated(text) == ["uv-no-matching-wheel"]


def test_musl_relocation_errors_on_torch_files_and_not_on_others() -> None:
    torch_lib = ("OSError: Error relocating /usr/local/lib/python3.9/site-packages/torch/lib/"
                 "libgomp-a34b3233.so.1: pthread_attr_setaffinity_np: symbol not found\n")
    assert stated(torch_lib) == ["musl-libc-unsupported"]
    assert stated("Error relocating /usr/lib/libfoo.so.1: bar_init: symbol not found\n") == []


def test_a_named_build_of_a_package_that_imports_torch_to_build() -> None:
    prose = ("`uv sync` was failing with `ModuleNotFoundError: No module named 'torch'` during the"
             " flash-attn build on an x86_64 system.\n")
    assert stated(prose) == ["build-isolation-hides-torch"]
    setup = ("ModuleNotFoundError: No module named 'torch' is the known flash-attn build issue:\n"
             "- flash-attn's setup.py tries to import torch during build\n")
    assert stated(setup) == ["build-isolation-hides-torch"]


def test_no_isolation_or_a_package_that_declares_torch_is_not_build_isolation() -> None:
    def read(text: str) -> List[str]:
        return [e.kind for e in extract(text, KB).installer_errors]

    named = "ModuleNotFoundError: No module named 'torch' during the flash-attn build\n"
    assert read(named) == ["isolated-build-without-torch"]
    # torch is then read from the environment itself: the build did see it, and it was not there
    assert read("pip install flash-attn --no-build-isolation\n" + named) == []
    other = "ModuleNotFoundError: No module named 'torch' during the numpy build\n"
    assert read(other) == []
    assert "build-isolation-hides-torch" not in stated(other)

    # pip's legacy setup.py build runs in the environment itself (isolation is for PEP 517 builds)
    legacy = ("  Building wheel for flash-attn (setup.py) ... error\n"
              "  × python setup.py bdist_wheel did not run successfully.\n"
              "        File \"/tmp/pip-install-abc/flash-attn_0123456789abcdef0123456789abcdef/"
              "setup.py\", line 9, in <module>\n          import torch\n"
              "      ModuleNotFoundError: No module named 'torch'\n"
              "  ERROR: Failed building wheel for flash-attn\n")
    assert read(legacy) == []
    assert "build-isolation-hides-torch" not in stated(legacy)
    # the import that failed is a script's own, not the build's
    script = ("I am building flash-attn in a new venv; torch is in my base env.\nTraceback (most recent call "
              "last):\n  File \"run.py\", line 1, in <module>\n    import torch\n"
              "ModuleNotFoundError: No module named 'torch'\n")
    assert read(script) == []
    assert read(script.replace('"run.py"', '"setup.py"')) == ["isolated-build-without-torch"]


_SYNCED = ("> uv sync --locked --extra cuda\nResolved 288 packages in 1ms\nInstalled 1 package in 6.13s\n"
           " + torch==2.11.0+cu128\n")


def test_a_bare_uv_run_after_a_sync_with_an_extra_that_uninstalls_packages() -> None:
    run = "> uv run python -m app\nUninstalled 2 packages in 771ms\nInstalled 2 packages in 7.19s\n"
    assert stated(_SYNCED + run) == ["uv-run-resyncs-without-extra"]


def test_uv_run_with_the_extra_or_without_sync_or_uninstalling_nothing_is_not_a_resync() -> None:
    kept = "> uv run --extra cuda python -m app\nUninstalled 2 packages in 771ms\n"
    assert stated(_SYNCED + kept) == []
    assert stated(_SYNCED + "> uv run --no-sync python -m app\nUninstalled 2 packages in 771ms\n") == []
    assert stated(_SYNCED + "> uv run python -m app\nStarting app on port 8000\n") == []
    plain = "> uv sync --locked\n> uv run python -m app\nUninstalled 2 packages in 771ms\n"
    assert stated(plain) == []


_MARKER = ("[tool.uv.sources]\ntorch = [{{ index = \"pytorch-cu128\", marker = \"{marker}\" }}]\n"
           ">>> platform.machine()\n'AMD64'\n")


def test_a_uv_source_gated_on_x86_64_where_the_text_shows_windows_amd64() -> None:
    text = _MARKER.format(marker="platform_machine == 'x86_64'")
    assert stated(text) == ["uv-source-marker-misses-windows-amd64"]


def test_a_marker_naming_amd64_or_linux_only_or_no_windows_shown_is_not_that_cause() -> None:
    both = _MARKER.format(marker="platform_machine == 'x86_64' or platform_machine == 'AMD64'")
    assert stated(both) == []
    linux = _MARKER.format(marker="sys_platform == 'linux' and platform_machine == 'x86_64'")
    assert stated(linux) == []
    no_windows = _MARKER.format(marker="platform_machine == 'x86_64'").replace("'AMD64'", "'x86_64'")
    assert stated(no_windows) == []
    # another entry selects Windows itself: Windows is covered
    covered = _MARKER.format(marker="platform_machine == 'x86_64'").replace(
        "}]", "}, { index = \"pytorch-cu128\", marker = \"sys_platform == 'win32'\" }]")
    assert stated(covered) == []


def test_a_pytorch_index_read_alone_that_lacks_a_dependency_torch_asks_for() -> None:
    asked = ("Looking in indexes: https://download.pytorch.org/whl/cu124\n"
             "Collecting nvidia-cudnn-cu12==9.1.0.70 (from torch==2.4.0)\n"
             "ERROR: Could not find a version that satisfies the requirement nvidia-cudnn-cu12==9.1.0.70"
             " (from torch) (from versions: none)\n")
    assert stated(asked) == ["index-missing-torch-dependency"]
    # nobody says torch asked for it: the user may have; the family stays
    alone = asked.replace(" (from torch==2.4.0)", "").replace(" (from torch)", "")
    assert stated(alone) == [FAMILY]
    # PyPI read too: not an index read alone
    both = asked.replace("whl/cu124\n", "whl/cu124, https://pypi.org/simple\n")
    assert "index-missing-torch-dependency" not in stated(both)


def test_no_compiler_said_in_words() -> None:
    said = "however I found that there is no gcc or g++ in nvidia-docker. what should I do?\n"
    assert stated(said) == ["no-cxx-compiler"]
    assert stated("there is no gcc 9 in the Ubuntu 22.04 repositories\n") == []
    assert stated("There is no g++ error any more after the update\n") == []


_WHEEL_LIB = "/env/lib/python3.10/site-packages/nvidia/cudnn/lib"
_TRACE = ("5580:     calling init: " + _WHEEL_LIB + "/libcudnn.so.9\n"
          "5580:     calling init: " + _WHEEL_LIB + "/libcudnn_graph.so.9\n"
          "5580:     calling init: {last}\n")


def test_a_wheel_library_the_loader_took_from_the_system_beside_its_siblings_from_the_wheel() -> None:
    text = _TRACE.format(last="/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9")
    assert stated(text) == ["broken-release-artifact"]


def test_a_whole_family_from_one_place_or_another_release_or_a_second_copy_is_not_a_gap() -> None:
    assert stated(_TRACE.format(last=_WHEEL_LIB + "/libcudnn_heuristic.so.9")) == []
    # cuDNN 8 from the system beside the wheel's cuDNN 9: another release, loaded by someone else
    assert stated(_TRACE.format(last="/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8")) == []
    assert stated(_TRACE.format(last="/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9")) == []
    # only the family's own library from the wheel (torch's RPATH names it there), every sub-library
    # by name from the system: a system cuDNN found first, not a file missing from the wheel
    system_first = ("5580:     calling init: " + _WHEEL_LIB + "/libcudnn.so.9\n"
                    "5580:     calling init: /usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9\n"
                    "5580:     calling init: /usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9\n")
    assert "broken-release-artifact" not in stated(system_first)


def test_python_version_line_names_the_interpreter() -> None:
    listed = "2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1, 2.4.0, 2.5.0, 2.5.1"
    refusal = (f"ERROR: Could not find a version that satisfies the requirement torch==2.0.1"
               f" (from versions: {listed})\nERROR: No matching distribution found for torch==2.0.1\n")
    assert stated("$ python -V\nPython 3.12.3\n" + refusal) == [PIN]
    # the listing alone points to 3.12 but is no statement of pip's: the family stays
    assert stated(refusal) == [FAMILY]
    # torch 2.4.1 publishes cp312 wheels (on other platforms than this one, perhaps): not this cause
    other = refusal.replace("2.0.1", "2.4.1")
    assert stated("$ python -V\nPython 3.12.3\n" + other) == [FAMILY]


_UV_ALONE = ("$ uv pip install jupyterlab torch --index-url https://download.pytorch.org/whl/cu128\n"
             "  × No solution found when resolving dependencies:\n"
             "  ╰─▶ Because jupyterlab was not found in the package registry and you require jupyterlab,"
             " we can conclude that your requirements are unsatisfiable.\n")


def test_uv_given_a_pytorch_index_as_its_only_index_finds_no_pypi_package() -> None:
    assert stated(_UV_ALONE) == [ALONE]
    assert stated(_UV_ALONE.replace("--index-url", "--default-index")) == [ALONE]


def test_uv_with_pypi_kept_or_a_torch_dependency_or_a_refusing_index_is_not_pypi_replaced() -> None:
    assert stated(_UV_ALONE.replace("--index-url", "--extra-index-url")) == [FAMILY]
    assert stated(_UV_ALONE.replace("jupyterlab", "filelock")) == [FAMILY]
    refused = _UV_ALONE + ("      hint: An index URL (https://download.pytorch.org/whl/cu128) could not be"
                           " queried due to a lack of valid authentication credentials (401 Unauthorized).\n")
    assert ALONE not in stated(refused)
    mirror = _UV_ALONE.replace("https://download.pytorch.org/whl/cu128", "https://mirror.example/simple")
    assert stated(mirror) == [FAMILY]


def test_a_windows_interpreter_folder_names_the_python() -> None:
    text = ("Requirement already satisfied: numpy in c:\\users\\me\\appdata\\local\\programs\\python"
            "\\python312\\lib\\site-packages (1.26.4)\n"
            "ERROR: Could not find a version that satisfies the requirement torch==2.1.2"
            " (from versions: 2.2.0)\n")
    assert stated(text) == [PIN]
    venv = text.replace("appdata\\local\\programs\\python\\python312", "venv")
    assert stated(venv) == [FAMILY]
