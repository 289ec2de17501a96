"""Installer and index failures: what the data proves of a torch build the installer did not find,
and the families whose message alone does not tell the cause apart (each with its counter-case)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.matcher import explain_report


def index_facts(text: str) -> List[Tuple[str, str]]:
    return [(e.kind, e.text) for e in extract(text, KB).installer_errors if e.installer in ("index", "uv")]


def test_a_torch_cuda_pair_never_published_is_named_from_the_release_data() -> None:
    # zewei-Zhang/GoodDrag#3: torch 2.0.1 was built for cu117 and cu118 only.
    text = "Could not find a version that satisfies the requirement torch==2.0.1+cu121\n"
    assert index_facts(text) == [("build-unpublished", "torch==2.0.1+cu121")]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "torch-cuda-build-not-published"
    assert "cu117, cu118" in found.cause and "2.1.0 to 2.5.1" in found.cause
    # Counter-cases: a published pair, and a release the data does not cover, prove nothing.
    published = "Could not find a version that satisfies the requirement torch==2.0.1+cu118\n"
    assert index_facts(published) == []
    assert stated(published) == ["no-matching-distribution"]
    assert index_facts("Could not find a version that satisfies the requirement torch==9.9.9+cu121\n") == []


def test_a_release_whose_build_list_is_uncertain_proves_no_build_absent() -> None:
    # pytorch/pytorch#67669: torch 1.10.0+cu113 exists on download.pytorch.org/whl/cu113/, though
    # the previous-versions page (the data's source for 1.10, marked uncertain) lists no cu113.
    text = ("Looking in links: https://download.pytorch.org/whl/cu113/torch_stable.html\n"
            "ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 "
            "(from versions: 0.1.2, 0.1.2.post1, 0.1.2.post2)\n")
    assert ("build-unpublished", "torch==1.10.0+cu113") not in index_facts(text)
    assert "torch-cuda-build-not-published" not in stated(text)
    # Counter-case: a release read from the index itself still proves a build absent.
    assert index_facts(text.replace("1.10.0", "1.13.1")) == [("build-unpublished", "torch==1.13.1+cu113")]


def test_an_index_no_release_was_published_to_is_named() -> None:
    # visualbruno/ComfyUI-Trellis2#131: there is no cu131 index.
    text = ("pip install torch==2.10.0 --index-url https://download.pytorch.org/whl/cu131\n"
            "ERROR: Could not find a version that satisfies the requirement torch==2.10.0 "
            "(from versions: none)\n")
    assert index_facts(text) == [("build-unpublished", "torch==2.10.0 from download.pytorch.org/whl/cu131")]
    assert stated(text) == ["torch-cuda-build-not-published"]
    # The cu130 index has torch 2.10.0: the failure is not the build's (another candidate).
    real = text.replace("cu131", "cu130")
    assert index_facts(real) == []
    report = explain_report(real, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["no-matching-distribution"]
    assert len(report.explanations[0].candidates) == 6


def test_no_version_of_a_published_build_means_its_index_was_not_read() -> None:
    # prefix-dev/pixi#2398: uv's resolver found no version at all of a build that exists.
    text = ("  ╰─▶ Because there is no version of torch==2.5.1+cu121 and you require "
            "torch==2.5.1+cu121, we can conclude that your requirements are unsatisfiable.\n")
    assert index_facts(text) == [("index-not-given", "torch==2.5.1+cu121")]
    assert stated(text) == ["pytorch-index-not-given"]
    # A build never published is that cause, not a missing index.
    assert index_facts(text.replace("2.5.1", "2.0.1")) == [("build-unpublished", "torch==2.0.1+cu121")]
    # Wheels unfit for this platform are uv's other message: the index was read.
    unfit = ("Because torch==2.5.1+cu121 has no wheels with a matching platform tag (e.g., "
             "`macosx_14_0_arm64`) and you require torch==2.5.1+cu121, we can conclude that your "
             "requirements are unsatisfiable.\n")
    assert index_facts(unfit) == []


def test_no_matching_distribution_is_a_family_for_any_package() -> None:
    # XPixelGroup/DiffBIR#61 (triton has no Windows wheels): the message alone does not say why.
    text = ("ERROR: Could not find a version that satisfies the requirement triton==2.0.0 "
            "(from versions: none)\n"
            "ERROR: No matching distribution found for triton==2.0.0\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "no-matching-distribution"
    assert found.facts["requirement"] == "triton==2.0.0" and len(found.candidates) == 6
    assert "triton==2.0.0" in found.candidates[0].check
    # One candidate is torch's own pinned requirement (pytorch/test-infra#7569: the index's allow
    # list left out the triton-xpu its torch pins), with the check on the index that served torch.
    (own,) = [c for c in found.candidates if c.cause.startswith("A requirement of torch itself")]
    assert 'pip download "triton==2.0.0" --no-deps -d /tmp/probe --index-url https://' in own.check


HASH = ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the "
        "package versions, please update the hashes.\n")


def test_a_hash_mismatch_alone_is_the_family() -> None:
    # pytorch/test-infra#6307: no transfer shown; the index was at fault there, a cut download elsewhere.
    report = explain_report(HASH, CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["package-hash-mismatch"]
    assert len(report.explanations[0].candidates) == 3
    assert {name for name, _ in report.contradicted} == {"download-corrupted", "index-metadata-broken"}


def test_a_download_cut_short_or_cached_is_the_local_copy() -> None:
    cut = ("  Downloading torch-1.6.0-cp37-cp37m-manylinux1_x86_64.whl (748.8 MB)\n"
           "     ━━━━━━━━━━━━━━━━━━━━━━━━━╸            520.6/748.8 MB 677.3 kB/s eta 0:05:37\n" + HASH)
    assert extract(cut, KB).transfers == ["cut"]
    assert stated(cut) == ["download-corrupted"]
    cached = ("  Using cached https://download.pytorch.org/whl/cu121/torch-2.2.1%2Bcu121-cp311-cp311-"
              "linux_x86_64.whl (757.3 MB)\n" + HASH)
    assert stated(cached) == ["download-corrupted"]
    # A cached .metadata file is not the file that failed.
    metadata = cached.replace(".whl (757.3 MB)", ".whl.metadata (6.3 kB)")
    assert stated(metadata) == ["package-hash-mismatch"]


def test_a_fresh_complete_download_that_mismatches_is_the_index() -> None:
    # pytorch/pytorch#145501: the whole nightly wheel arrived; the index's sha256 was for another file.
    fresh = ("Downloading https://download.pytorch.org/whl/nightly/cpu/torch-2.7.0.dev20250123%2Bcpu-cp39-cp39-"
             "manylinux_2_28_x86_64.whl (176.2 MB)\n"
             "   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 176.2/176.2 MB 206.5 MB/s eta 0:00:00\n" + HASH)
    assert extract(fresh, KB).transfers == ["complete"]
    assert stated(fresh) == ["index-metadata-broken"]
    # A GB total printed to one decimal is not exact enough to prove the download whole.
    rounded = fresh.replace("(176.2 MB)", "(2325.9 MB)").replace("176.2/176.2 MB", "2.3/2.3 GB")
    assert stated(rounded) == ["package-hash-mismatch"]


def test_a_refused_metadata_file_is_the_family_not_a_pinned_url() -> None:
    # Zuntan03/EasyWan22#48: pip asked for .whl.metadata because the index page listed it.
    url = "https://download.pytorch.org/whl/cu128/torch-2.7.1%2Bcu128-cp310-cp310-win_amd64.whl"
    report = explain_report(f"ERROR: HTTP error 403 while getting {url}.metadata\n", CATALOG, kb=KB)
    assert [e.signature.id for e in report.explanations] == ["index-file-refused"]
    assert len(report.explanations[0].candidates) == 3
    # Counter-case: the wheel itself refused is the pinned URL's cause, where the data does not record
    # that file as published (torch 2.7.1 has no Python 3.6 build); a published one is refused by
    # something else (test_second_half_review.py).
    unpublished = url.replace("cp310-cp310", "cp36-cp36m")
    assert stated(f"ERROR: HTTP error 403 while getting {unpublished}\n") == ["wheel-url-gone"]
    assert "wheel-url-gone" not in stated(f"ERROR: HTTP error 403 while getting {url}\n")


def test_a_wheel_wget_could_not_get_is_not_the_installed_torch() -> None:
    # pytorch/pytorch#118732: wget's 403 for a +cpu wheel; nothing was installed, so no CPU-only torch.
    text = ("--2024-01-31 00:23:03--  https://download.pytorch.org/whl/cpu/torch-1.2.0+cpu-cp27-cp27m-"
            "manylinux1_x86_64.whl\n"
            "HTTP request sent, awaiting response... 403 Forbidden\n"
            "2024-01-31 00:23:03 ERROR 403: Forbidden.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "wheel-url-gone" and found.facts["literal_plus"] == "cpu"
    assert any("%2B" in step for step in found.fix)
    # Counter-case: the same +cpu wheel downloaded and installed is a CPU-only torch.
    installed = ("Downloading https://download.pytorch.org/whl/cpu/torch-1.2.0%2Bcpu-cp27-cp27m-"
                 "manylinux1_x86_64.whl\nSuccessfully installed torch-1.2.0+cpu\n")
    assert stated(installed) == ["torch-not-compiled-with-cuda"]


def test_no_module_named_torch_is_the_family_also_at_a_sentence_end() -> None:
    # jasonppy/VoiceCraft#89 (a notebook's kernel): "'torch'." ends the sentence.
    text = "When I run cell 1, i get ModuleNotFoundError: No module named 'torch'. Did I miss something?\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "no-module-named-torch" and len(found.candidates) == 3
    # Counter-case: another module of the torch package is not torch missing.
    assert "no-module-named-torch" not in stated("ModuleNotFoundError: No module named torch.utils\n")


def test_a_nightly_two_series_older_than_the_listed_releases_was_pruned() -> None:
    # pytorch/pytorch#146575: a 2.1.0 nightly, while the index already lists 2.6.0.
    text = ("ERROR: Could not find a version that satisfies the requirement torch==2.1.0.dev20230822+cu118 "
            "(from versions: 2.0.1, 2.1.0, 2.2.0, 2.6.0)\n")
    assert index_facts(text) == [("nightly-pruned", "torch==2.1.0.dev20230822")]
    assert stated(text) == ["nightly-build-pruned"]
    # Counter-case: the next series alone may still hold fewer than 60 newer nightlies.
    recent = text.replace(", 2.2.0, 2.6.0", ", 2.2.0")
    assert index_facts(recent) == []
    assert stated(recent) == ["no-matching-distribution"]


def test_a_listing_cut_short_is_read_as_far_as_it_goes() -> None:
    # rsxdalv/TTS-WebUI#561: the report ends inside pip's listing; its last item may be cut.
    text = ("ERROR: Could not find a version that satisfies the requirement torch==2.7.0.dev20250310+cu128 "
            "(from versions: 2.9.0.dev20250705+cu128, 2.9.0.dev20250706+cu128, 2.9.0.dev2025")
    assert index_facts(text) == [("nightly-pruned", "torch==2.7.0.dev20250310")]
    # Cut before any whole item: nothing listed, nothing concluded.
    assert index_facts(text[:text.index("2.9.0")] + "2.9.0.dev2025") == []


def test_conda_packages_not_found_is_the_family_unless_the_data_proves_a_cause() -> None:
    # pytorch/pytorch#58681: no channel list shown, so nothing tells the candidates apart.
    text = ("PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            "  - cudatoolkit=11.1\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-package-not-found" and len(found.candidates) == 4
    assert found.facts["package"] == "cudatoolkit=11.1"
    # Counter-case: a 32-bit Windows subdir proves the platform cause, which explains the family.
    win32 = text.replace("cudatoolkit=11.1", "pytorch") + (
        "Current channels:\n\n  - https://conda.anaconda.org/pytorch/win-32\n"
        "  - https://conda.anaconda.org/pytorch/noarch\n")
    assert stated(win32) == ["conda-no-build-for-platform"]


def test_uv_resolving_for_an_x86_64_mac_names_both_machines_it_can_be() -> None:
    # vllm-project/vllm-metal#379: a forked resolution (markers in braces) for macosx_26_0_x86_64.
    text = ("  ╰─▶ Because torch{platform_machine == 'aarch64' or platform_machine == 'x86_64'}==2.11.0+cpu "
            "has no wheels with a matching platform tag (e.g., `macosx_26_0_x86_64`) and you require "
            "torch{platform_machine == 'x86_64'}==2.11.0+cpu, we can conclude that your requirements are "
            "unsatisfiable.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "macos-x86-64-python" and len(found.candidates) == 2
    assert found.facts["platform_tag"] == "macosx_26_0_x86_64"
    # Counter-case: another platform's tag is uv's plain no-wheel message, markers and all.
    linux = text.replace("macosx_26_0_x86_64", "manylinux_2_17_armv7l")
    assert stated(linux) == ["uv-no-matching-wheel"]


def test_uv_sync_from_a_lock_without_a_wheel_for_this_platform() -> None:
    # astral-sh/uv#10843: uv sync installs from the lock; its own wording, then its hint.
    text = ("error: Distribution `torch==2.6.0 @ registry+https://download.pytorch.org/whl/cpu` can't be "
            "installed because it doesn't have a source distribution or wheel for the current platform\n\n"
            "hint: You're on Windows (`win_amd64`), but `torch` (v2.6.0) only has wheels for the following "
            "platform: `macosx_11_0_arm64`\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "uv-no-matching-wheel" and found.facts["requirement"] == "torch==2.6.0"
    assert found.facts["platform_tag"] == "win_amd64"


def test_an_option_the_installer_does_not_know_as_real_pip_and_uv_print_it() -> None:
    import shutil
    import subprocess
    import sys

    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--torch-backend", "auto", "torch"],
                         capture_output=True, text=True, check=False)
    outputs = [pip.stdout + pip.stderr]
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is not None:
        run = subprocess.run([uv, "pip", "install", "--no-such-flag", "torch"], capture_output=True,
                             text=True, check=False)
        outputs.append(run.stdout + run.stderr)
    for output in outputs:
        (found,) = explain_report(output, CATALOG, kb=KB).explanations
        assert found.signature.id == "installer-option-unknown" and len(found.candidates) == 3
    # Counter-case: another program's clap error is not an installer's.
    assert stated("error: unexpected argument '--foo' found\n\nUsage: cargo build [OPTIONS]\n") == []


def test_an_option_newer_than_the_uv_shown_is_that_uv_too_old() -> None:
    # uv 0.6.8 (PyPI's wheel) run here: its version line, then its refusal of --torch-backend (0.6.9 on).
    text = ("uv 0.6.8\nerror: unexpected argument '--torch-backend' found\n\n"
            "  tip: a similar argument exists: '--no-cache'\n\n"
            "Usage: uv pip install --no-cache <PACKAGE|--requirements <REQUIREMENTS>|--editable <EDITABLE>|"
            "--group <GROUP>>\n\nFor more information, try '--help'.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "uv-too-old-for-option" and "0.6.9" in found.cause
    # FlashML-org/FreeToken#13: the installer's own "==> uv 0.6.7" line, `uv.exe` on Windows.
    windows = text.replace("uv 0.6.8", "==> uv 0.6.7 (a1b2c3d 2025-03-17)")
    windows = windows.replace("Usage: uv ", "Usage: uv.exe ")
    assert stated(windows) == ["uv-too-old-for-option"]
    # Counter-cases: a uv that has it; no version shown; a subcommand that never had it; prose naming a uv.
    assert stated(text.replace("uv 0.6.8", "uv 0.6.9")) == ["installer-option-unknown"]
    assert stated(text.replace("uv 0.6.8\n", "")) == ["installer-option-unknown"]
    assert stated(text.replace("Usage: uv pip install", "Usage: uv sync")) == ["installer-option-unknown"]
    assert stated(text.replace("uv 0.6.8", "I tried uv 0.6.8 first")) == ["installer-option-unknown"]
    # uv 0.4.22 run here on the --index that torchsmith renders for uv (0.4.23 on), its own usage line.
    index = ("uv 0.4.22\nerror: unexpected argument '--index' found\n\n"
             "  tip: a similar argument exists: '--index-url'\n\n"
             "Usage: uv pip install <PACKAGE|--requirement <REQUIREMENT>|--editable <EDITABLE>> <--index-url "
             "<INDEX_URL>|--extra-index-url <EXTRA_INDEX_URL>|--find-links <FIND_LINKS>|--no-index>\n")
    (found,) = explain_report(index, CATALOG, kb=KB).explanations
    assert found.signature.id == "uv-too-old-for-option" and "0.4.23" in found.cause


# pip 23.2.1 run here with no index configured (pip download --isolated, PyPI): its first line is the error.
_PIP_PYPI_ONLY = ("$ pip install torch==2.3.1+cu121\n"
                  "ERROR: Could not find a version that satisfies the requirement torch==2.3.1+cu121 (from "
                  "versions: 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2, 2.3.0, "
                  "2.3.1, 2.4.0)\nERROR: No matching distribution found for torch==2.3.1+cu121\n")


def test_pip_showing_it_read_pypi_alone_proves_the_pytorch_index_was_not_given() -> None:
    (found,) = explain_report(_PIP_PYPI_ONLY, CATALOG, kb=KB).explanations
    assert found.signature.id == "pytorch-index-not-given" and "read PyPI alone" in found.cause
    facts = [(e.installer, e.kind, e.text) for e in extract(_PIP_PYPI_ONLY, KB).installer_errors]
    assert ("pip", "index-not-given", "torch==2.3.1+cu121") in facts


def test_pip_configured_with_an_index_says_so_first_and_proves_no_index_missing() -> None:
    import os
    import subprocess
    import sys
    import tempfile

    # Real pip with an index configured prints "Looking in indexes:" before anything else.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    with tempfile.TemporaryDirectory() as empty:
        run = subprocess.run([sys.executable, "-m", "pip", "download", "--isolated", "--no-deps", "-d", empty,
                              "--index-url", Path(empty).as_uri(), "torch==2.3.1+cu121"],
                             capture_output=True, text=True, check=False, env=env)
    printed = run.stdout + run.stderr
    assert printed.lstrip().startswith("Looking in indexes:")
    looking = _PIP_PYPI_ONLY.replace("\nERROR: Could", "\n" + printed.splitlines()[0] + "\nERROR: Could", 1)
    assert "pytorch-index-not-given" not in stated(looking)
    # Counter-cases: a requirements file or a links page on the command line (either may name an
    # index); lines between the command and pip's first line; no command shown (pytorch/pytorch#86630);
    # a listing with +variant builds (a PyTorch index was read).
    for other in (_PIP_PYPI_ONLY.replace("install torch==2.3.1+cu121", "install -r requirements.txt"),
                  _PIP_PYPI_ONLY.replace("+cu121\n", "+cu121 -f https://x.org/t.html\n", 1),
                  _PIP_PYPI_ONLY.replace("+cu121\n", "+cu121\n...\n", 1),
                  _PIP_PYPI_ONLY.split("\n", 1)[1],
                  _PIP_PYPI_ONLY.replace("2.3.1, 2.4.0", "2.3.1, 2.3.1+cpu, 2.4.0")):
        assert "pytorch-index-not-given" not in stated(other), other


def test_a_build_script_failing_for_its_requirements_is_the_family_until_its_error_shows() -> None:
    # Cut before the error (as SHI-Labs/NATTEN#243): a package the data says nothing of, built isolated.
    text = ("Getting requirements to build wheel ... error\n"
            "cwd: /tmp/pip-install-_op0fkvy/natten_32ecdb534ca149cebac1b8d1956665eb\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "build-requirements-step-failed" and found.facts["package"] == "natten"
    # imoneoi/openchat#8: flash-attn, whose every sdist's setup.py imports torch undeclared (downstream.json).
    assert stated(text.replace("natten_", "flash-attn_")) == ["build-isolation-hides-torch"]
    # With the error shown, the cause is stated.
    shown = text + "    ModuleNotFoundError: No module named 'torch'\n"
    assert stated(shown) == ["build-isolation-hides-torch"]


def test_a_conda_http_error_is_the_family_with_its_status_and_url() -> None:
    # pytorch/pytorch#81760: a 403 on a file the pytorch channel serves (an outage that day).
    text = ("CondaHTTPError: HTTP 403 FORBIDDEN for url <https://conda.anaconda.org/pytorch/noarch/"
            "pytorch-mutex-1.0-cuda.tar.bz2>\nElapsed: 00:00.827471\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-http-error" and len(found.candidates) == 3
    assert found.facts["status"] == "403" and found.facts["url"].endswith("pytorch-mutex-1.0-cuda.tar.bz2")
    # Counter-case: pip's own HTTP error on a wheel is not conda's.
    assert "conda-http-error" not in stated("ERROR: HTTP error 403 while getting https://x.org/a-1.0-py3-none-any.whl\n")


def test_a_build_named_beside_another_failure_is_not_read_as_the_one_asked_for() -> None:
    # xiexh20/InterTrack#2: the question is about the build itself.
    question = "There is no combination for torch=1.12.1+cu121, cuda12.1?\n"
    assert index_facts(question) == [("build-unpublished", "torch==1.12.1+cu121")]
    # Counter-case: the same words next to a runtime error are context, not the failure.
    beside = question + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert index_facts(beside) == []


def test_uv_finding_no_version_of_another_package_is_the_family() -> None:
    text = ("  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of "
            "flash-attn==9.9.9 and you require flash-attn==9.9.9, we can conclude that your requirements "
            "are unsatisfiable.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "no-matching-distribution"
    assert found.facts["requirement"] == "flash-attn==9.9.9"


def test_a_broken_connection_counts_only_in_the_failed_files_own_transfer() -> None:
    fresh = ("WARNING: Retrying (Retry(total=4)) after connection broken by "
             "'ReadTimeoutError(\"Read timed out.\")'\n"
             "Downloading https://download.pytorch.org/whl/nightly/cpu/torch-2.7.0.dev20250123%2Bcpu-cp39-cp39-"
             "manylinux_2_28_x86_64.whl (176.2 MB)\n"
             "   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 176.2/176.2 MB 206.5 MB/s eta 0:00:00\n" + HASH)
    assert extract(fresh, KB).transfers == ["complete"]
    # Counter-case: broken during the failed file's own download.
    broken = fresh.replace("eta 0:00:00\n", "eta 0:00:00\nConnection broken: IncompleteRead(1024 bytes)\n")
    assert "cut" in extract(broken, KB).transfers


def test_pips_listing_of_torch_versions_names_the_python_it_ran_on() -> None:
    # chenfei-wu/TaskMatrix#431: only 2.0.0 and 2.0.1 listed: the releases with Python 3.11 wheels.
    text = ("ERROR: Could not find a version that satisfies the requirement torch==1.13.1 "
            "(from versions: 2.0.0, 2.0.1)\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    (said,) = [r for r in found.reasoning if "pip could see" in r]
    assert "Python 3.11" in said and "torch 1.13.1 publishes wheels for Python 3.7 to 3.10 only" in said
    # Counter-case: a listing that is no Python's set of releases (a mirror with gaps) names none.
    shared = text.replace("2.0.0, 2.0.1", "1.13.1, 2.0.1")
    (found,) = explain_report(shared, CATALOG, kb=KB).explanations
    assert not [r for r in found.reasoning if "pip could see" in r]


def test_a_release_pypi_never_served_leaves_pips_listing_to_every_platform_that_matches() -> None:
    # ArtLabss/tennis-tracking#16: PyPI's torch releases 1.4.0 to 1.11.0 for Python 3.8; 1.8.2 was
    # published on the LTS index only, so PyPI's listing lacks it on Linux too (pytorch/pytorch#86630
    # names its requirements file between the requirement and the listing).
    listing = ("1.4.0, 1.5.0, 1.5.1, 1.6.0, 1.7.0, 1.7.1, 1.8.0, 1.8.1, 1.9.0, 1.9.1, 1.10.0, 1.10.1, "
               "1.10.2, 1.11.0")
    text = ("ERROR: Could not find a version that satisfies the requirement torch==1.9.0+cu102 (from -r "
            f"requirements.txt (line 3)) (from versions: {listing})\n")

    def said(text: str) -> List[str]:
        return [e.meaning for e in extract(text, KB).installer_errors if e.kind == "python-from-listing"]

    (python,) = said(text)
    assert "Python 3.8 (linux-x86_64, macos-x86_64, windows-x86_64)" in python
    # Counter-case: a listing that has 1.8.2 is not macOS's (1.8.2 has no macOS wheels).
    (lts,) = said(text.replace("1.8.1,", "1.8.1, 1.8.2,"))
    assert "Python 3.8 (linux-x86_64, windows-x86_64)" in lts
