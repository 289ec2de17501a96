"""Installer, wheel, loader and compiler messages read in their tools' own wording (each source cited
in its signature): what each proves, the family where it proves no single cause, and the look-alike
texts that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report

DYNAMO = ("W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit "
          "config.{limit} (8)\n"
          "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8]    function: 'step' "
          "(/src/train.py:10)\n"
          "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8]    last reason: 2/7: "
          "tensor 'x' size mismatch at index 0. expected 32, actual 7\n")


def test_dynamos_recompile_limit_warning_is_torch_compile_recompiling() -> None:
    # torch/_dynamo/convert_frame.py logs "torch._dynamo hit config.%s (%s)" only when the limit is hit.
    for limit in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit"):
        (found,) = explain_report(DYNAMO.format(limit=limit), CATALOG, kb=KB).explanations
        assert found.signature.id == "torch-compile-recompiles"
        assert found.facts["limit_type"] == limit and found.facts["function"] == "step"
        assert "size mismatch at index 0" in found.cause
    limit_hit = "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True.\n"
    assert stated(limit_hit) == ["torch-compile-recompiles"]
    # Counter-cases: recompiles logged below the limit, and the advice to log them, are no failure.
    assert stated("V0110 torch/_dynamo/guards.py] [__recompiles] Recompiling function step in "
                  "/src/train.py:10\n    triggered by the following guard failure(s):\n") == []
    assert stated("To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n") == []


def test_dynamos_recompile_log_shows_repeated_recompiles_by_its_guard_list_or_compile_id() -> None:
    # torch/_dynamo/guards.py (TORCH_LOGS=recompiles): one failed guard listed per version compiled so far.
    prefix = "[2023-11-21 19:02:27,364] torch._dynamo.guards.__recompiles: [DEBUG]"
    listed = (f"{prefix} Recompiling function accumulate in <ipython-input-6>:6\n"
              f"{prefix}     triggered by the following guard failure(s):\n"
              f"{prefix}     - L['start'] == 6\n{prefix}     - L['start'] == 5\n")
    (found,) = explain_report(listed, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-compile-recompiles"
    assert (found.facts["function"], found.facts["reason"]) == ("accumulate", "L['start'] == 6")
    # The compile id [frame/N]: N = 2 is the function's third compilation.
    third = ("V0920 13:54:46.150000 3904 torch/_dynamo/guards.py:4760] [0/2] [__recompiles] Recompiling "
             "function _backward in /home/a/fa.py:4\n")
    assert stated(third) == ["torch-compile-recompiles"]
    # Counter-case: the first recompile ([0/1], one guard listed) is no pattern of repetition.
    assert stated(third.replace("[0/2]", "[0/1]")) == []
    assert stated(listed.rsplit(prefix, 1)[0]) == []


def test_pips_invalid_wheel_with_a_missing_dist_info_file_is_the_published_file() -> None:
    # pip/_internal/utils/wheel.py: read_wheel_metadata_file wraps KeyError (a missing entry).
    text = ("ERROR: torch-scatter has an invalid wheel, could not read "
            "'torch_scatter-2.1.2.dist-info/WHEEL' file: KeyError(\"There is no item named "
            "'torch_scatter-2.1.2.dist-info/WHEEL' in the archive\")\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "broken-release-artifact" and not found.candidates
    assert found.facts["file"] == "torch_scatter-2.1.2.dist-info/WHEEL"
    assert stated("ERROR: foo has an invalid wheel, multiple .dist-info directories found: a.dist-info, "
                  "b.dist-info\n") == ["broken-release-artifact"]
    # Counter-case: BadZipFile is a damaged archive (a download cut short), not a malformed build.
    assert "broken-release-artifact" not in stated(
        "ERROR: foo has an invalid wheel, could not read 'foo-1.0.dist-info/WHEEL' file: "
        "BadZipFile('Bad CRC-32 for file')\n")


def test_uvs_match_runtime_refusal_is_a_family_of_uv_release_and_missing_metadata() -> None:
    # uv-build-frontend/src/error.rs: UnmatchedRuntime, wrapped over lines by uv's reporter.
    text = ("  × Failed to download and build `flash-attn==2.8.3`\n"
            "  ╰─▶ Extra build requirement `torch` was declared with `match-runtime\n"
            "      = true`, but `flash-attn` does not declare static metadata, making\n"
            "      runtime-matching impossible\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "uv-match-runtime-without-static-metadata"
    assert (found.facts["requirement"], found.facts["package"]) == ("torch", "flash-attn")
    assert len(found.candidates) == 2 and "0.11.0" in found.candidates[0].cause
    # Counter-case: the setting itself, in a pyproject shown beside another error, is no refusal.
    assert stated('flash-attn = [{ requirement = "torch", match-runtime = true }]\n') == []


def test_windows_loader_wordings_name_the_dll_family() -> None:
    # CPython's dynload_win.c: "DLL load failed" (with or without the module and reason after it).
    assert stated("from torch._C import * (ImportError: DLL load failed)\n") == ["windows-dll-load-failed"]
    # Windows' own dialog, and a report in prose, name the DLL.
    (found,) = explain_report("The code execution cannot proceed because c10.dll was not found.\n",
                              CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and found.facts["dll_name"] == "c10.dll"
    assert found.candidates
    assert stated("Running benchmark.py I get fbgemm.dll missing.\n") == ["windows-dll-load-failed"]
    # ERROR_PROC_NOT_FOUND (127): the DLL loaded, a dependency of another release lacks a function.
    proc = ('OSError: [WinError 127] The specified procedure could not be found. Error loading '
            '"C:\\py\\Lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.\n')
    (found,) = explain_report(proc, CATALOG, kb=KB).explanations
    assert found.signature.id == "windows-dll-load-failed" and found.facts["dll_name"] == "c10_cuda.dll"
    # Counter-cases: TensorFlow's dso_loader (its own signature), and a Linux library, are not it.
    tf = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
          "'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n")
    assert "windows-dll-load-failed" not in stated(tf)
    assert stated("libfoo.so missing after the upgrade\n") == []


MACOS_LOAD = ("ImportError: dlopen({prefix}/torch/_C.cpython-37m-darwin.so, 9): Library not loaded: "
              "/usr/local/opt/libomp/lib/libomp.dylib\n  Referenced from: {prefix}/torch/lib/libshm.dylib\n"
              "  Reason: image not found\n")


def test_macos_loader_missing_a_library_of_an_installed_module_is_a_family_not_a_compiler() -> None:
    # pytorch/pytorch#20030 and #20118: one message, the 1.1.0 wheel's Homebrew libomp; it proves no
    # compiler without OpenMP, and not whether the wheel, a removed library or a local build is at fault.
    text = MACOS_LOAD.format(prefix="/Users/a/venv/lib/python3.7/site-packages")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "installed-binary-library-not-loaded"
    assert found.facts["lib_path"] == "/usr/local/opt/libomp/lib/libomp.dylib"
    assert found.facts["package"] == "torch" and len(found.candidates) == 4
    # macOS 12's wording quotes both paths and puts the image's UUID before the second.
    quoted = ("Library not loaded: '@rpath/libc++.1.dylib'\n  Referenced from: '<0A1B2C3D-1111-2222-3333-"
              "444455556666> /opt/py/lib/python3.11/site-packages/foo/_ext.so'\n  Reason: tried: ...\n")
    assert stated(quoted) == ["installed-binary-library-not-loaded"]
    # Pasted on one line (xgboost's documented libomp), and a library of torch a companion links.
    one_line = ("OSError: dlopen(/v/site-packages/xgboost/lib/libxgboost.dylib, 0x0006): Library not loaded: "
                "@rpath/libomp.dylib Referenced from: /v/site-packages/xgboost/lib/libxgboost.dylib Reason: "
                "tried: '/opt/homebrew/opt/libomp/lib/libomp.dylib' (no such file)\n")
    (found,) = explain_report(one_line, CATALOG, kb=KB).explanations
    assert (found.facts["package"], found.facts["lib_path"]) == ("xgboost", "@rpath/libomp.dylib")
    companion = MACOS_LOAD.format(prefix="/v/site-packages").replace(
        "/usr/local/opt/libomp/lib/libomp.dylib", "@rpath/libtorch_cpu.dylib").replace(
        "torch/lib/libshm", "torchvision/_C")
    (found,) = explain_report(companion, CATALOG, kb=KB).explanations
    assert found.facts["package"] == "torchvision" and "torch's libtorch_cpu" in found.candidates[3].cause
    # Counter-cases: a binary outside site-packages (a build tree) is not an installed package's, and
    # a compiler without OpenMP is still openmp-missing.
    assert stated(MACOS_LOAD.format(prefix="/Users/a/src/build")) == []
    assert stated("-- Could NOT find OpenMP_CXX (missing: OpenMP_CXX_FLAGS OpenMP_CXX_LIB_NAMES)\n") \
        == ["openmp-missing"]


ROOT_LISTING = ("ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 "
                "(from versions: 2.2.2, 2.2.2+cpu, 2.3.1, 2.3.1+cpu, {newer})\n"
                "ERROR: No matching distribution found for torch==2.3.1+cu121\n")


def test_a_published_build_missing_from_a_many_variant_listing_is_the_root_index() -> None:
    # pytorch/pytorch#170511: the root index lists +cpu, newer CUDA, ROCm and XPU builds, not cu121.
    text = ROOT_LISTING.format(newer="2.8.0+cu126, 2.8.0+cu128, 2.8.0+rocm6.4, 2.8.0+xpu")
    (error,) = [e for e in extract(text, KB).installer_errors if e.kind == "variant-missing-from-index"]
    assert error.text == "torch==2.3.1+cu121" and "cpu, cu126, cu128, rocm6.4, xpu" in error.meaning
    assert stated(text) == ["pytorch-root-index-incomplete"]
    # Counter-cases: a per-variant index lists its own variant only (too few kinds to be the root
    # index); a listing that holds the variant; a build never published (the data proves that instead).
    assert stated(ROOT_LISTING.format(newer="2.8.0+cu126, 2.9.0+cu126")) == ["no-matching-distribution"]
    assert "pytorch-root-index-incomplete" not in stated(
        ROOT_LISTING.format(newer="2.3.0+cu121, 2.8.0+cu126, 2.8.0+rocm6.4, 2.8.0+xpu"))
    unpublished = ROOT_LISTING.replace("2.3.1+cu121", "2.0.1+cu121").format(
        newer="2.8.0+cu126, 2.8.0+cu128, 2.8.0+rocm6.4, 2.8.0+xpu")
    assert stated(unpublished) == ["torch-cuda-build-not-published"]
    # pip lists only its own platform's builds: on linux-aarch64 (2.5.1+cu124 and 2.7.0+cu128 have
    # aarch64 wheels, 2.3.1+cu121 none) no index pip could read has the build, so no index is blamed
    aarch64 = ROOT_LISTING.format(newer="2.5.1+cpu, 2.5.1+cu124, 2.7.0+cpu, 2.7.0+cu128")
    assert "pytorch-root-index-incomplete" not in stated(aarch64)


def test_a_listing_that_never_labels_the_default_cuda_build_proves_no_missing_variant() -> None:
    # pytorch/pytorch#54172: torch_stable.html listed the default CUDA build (cu102 for 1.7 and 1.8) as
    # plain torch-1.8.0, labelled only the others; the pin +cu102 matches nothing, yet the build is there.
    text = ("ERROR: Could not find a version that satisfies the requirement torch==1.8.0+cu102 "
            "(from versions: 1.7.0, 1.7.0+cpu, 1.7.0+cu101, 1.7.0+cu110, 1.8.0, 1.8.0+cpu, 1.8.0+cu101, "
            "1.8.0+cu111)\n")
    assert "pytorch-root-index-incomplete" not in stated(text)
    # The same listing with a default build labelled (2.8.0+cu128, PyPI's Linux default) proves it.
    labelled = text.replace("1.8.0+cu102", "2.3.1+cu121").replace("1.8.0+cu111)", "2.3.1, 2.3.1+cpu, "
                                                                  "2.8.0+cu128, 2.8.0+xpu)")
    assert stated(labelled) == ["pytorch-root-index-incomplete"]


def test_the_root_index_named_proves_it_with_fewer_variants_listed() -> None:
    listing = ("ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 "
               "(from versions: 2.3.1, 2.3.1+cpu, 2.8.0+cu128)\n")
    root = "Looking in indexes: https://download.pytorch.org/whl\n" + listing
    (error,) = [e for e in extract(root, KB).installer_errors if e.kind == "variant-missing-from-index"]
    assert "names the root index" in error.meaning
    # Counter-case: a per-variant index named is not the root one; two labels of two kinds prove nothing.
    other = "Looking in indexes: https://download.pytorch.org/whl/cu128\n" + listing
    assert "pytorch-root-index-incomplete" not in stated(other)


# pip 23.2.1 building flash-attn 2.8.3 from its sdist on this machine (2026-11-26), cut to its lines.
PIP_ISOLATED_FLASH_ATTN = """Collecting flash-attn==2.8.3
  Downloading flash_attn-2.8.3.tar.gz (8.4 MB)
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
  Getting requirements to build wheel: started
  Getting requirements to build wheel: finished with status 'error'
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [23 lines of output]
      Traceback (most recent call last):
        File "/tmp/pip-build-env-2my6ra1e/overlay/lib/python3.11/site-packages/setuptools/build_meta.py", \
line 333, in get_requires_for_build_wheel
          return self._get_build_requires(config_settings, requirements=[])
        File "<string>", line 22, in <module>
      ModuleNotFoundError: No module named 'torch'
      [end of output]
"""


def test_an_isolated_build_that_cannot_import_torch_is_build_isolation() -> None:
    # pip runs get_requires_for_build_wheel only for an isolated build (distributions/sdist.py).
    (found,) = explain_report(PIP_ISOLATED_FLASH_ATTN, CATALOG, kb=KB).explanations
    assert found.signature.id == "build-isolation-hides-torch" and not found.candidates
    # Cut before the build's own error: the data says which packages import torch undeclared.
    cut = PIP_ISOLATED_FLASH_ATTN.split("      Traceback")[0]
    (error,) = [e for e in extract(cut, KB).installer_errors if e.kind == "isolated-build-without-torch"]
    assert error.package == "flash-attn" and "every release read up to 2.8.3.post2" in error.meaning
    assert stated(cut) == ["build-isolation-hides-torch"]
    git = ("Collecting git+https://github.com/facebookresearch/detectron2.git\n"
           "  Installing build dependencies ... done\n  Getting requirements to build wheel ... error\n")
    (found,) = explain_report(git, CATALOG, kb=KB).explanations
    assert found.signature.id == "build-isolation-hides-torch"
    assert "git+https://github.com/facebookresearch/detectron2.git" in " ".join(found.fix)
    # uv's build venv (builds-v0) is isolated too.
    uv = ("  × Failed to build `flash-attn==2.8.2`\n      File \"/home/u/.cache/uv/builds-v0/.tmpEHrRRA/lib/"
          "python3.11/site-packages/setuptools/build_meta.py\", line 331, in get_requires_for_build_wheel\n")
    assert stated(uv) == ["build-isolation-hides-torch"]


def test_a_build_step_failure_without_torchs_absence_shown_or_known_stays_the_family() -> None:
    # A package the data does not know, a release newer than the newest read, a build not shown isolated.
    other = PIP_ISOLATED_FLASH_ATTN.split("      Traceback")[0].replace("flash-attn==2.8.3", "somepkg==1.0") \
        .replace("flash_attn-2.8.3", "somepkg-1.0")
    assert stated(other) == ["build-requirements-step-failed"]
    newer = PIP_ISOLATED_FLASH_ATTN.split("      Traceback")[0].replace("2.8.3", "9.0.0")
    assert stated(newer) == ["build-requirements-step-failed"]
    not_isolated = ("  × Failed to build `flash-attn==2.8.2`\n      File \"/home/u/venv/lib/python3.11/"
                    "site-packages/setuptools/build_meta.py\", line 331, in get_requires_for_build_wheel\n")
    assert stated(not_isolated) == ["build-requirements-step-failed"]
    # The build that failed is the last package collected before the step, not an earlier one the
    # data knows; and a No module named 'torch' far below the build's output is another event.
    earlier = ("Collecting flash-attn==2.8.3\n  Using cached flash_attn-2.8.3-cp311-linux_x86_64.whl\n"
               "Collecting natten==0.20.1\n  Using cached natten-0.20.1.tar.gz (2.6 MB)\n"
               "  Installing build dependencies ... done\n  Getting requirements to build wheel ... error\n")
    assert stated(earlier) == ["build-requirements-step-failed"]
    # The build's traceback runs through torch's own files (torch was in the build env, e.g. a build
    # dependency added by config): it failed later, on CUDA_HOME, not for want of torch
    had_torch = PIP_ISOLATED_FLASH_ATTN.replace(
        "      ModuleNotFoundError: No module named 'torch'\n",
        '        File "/tmp/pip-build-env-2my6ra1e/overlay/lib/python3.11/site-packages/torch/utils/'
        'cpp_extension.py", line 1076, in CUDAExtension\n'
        "      OSError: CUDA_HOME environment variable is not set. Please set it.\n")
    assert "build-isolation-hides-torch" not in stated(had_torch)
    later = earlier + "progress\n" * 2000 + "ModuleNotFoundError: No module named 'torch'\n"
    assert "build-isolation-hides-torch" not in stated(later)
