"""Poetry's and pdm's own resolver and hash messages (format strings read from their source, cited in
the signatures) name the same families as pip's and uv's wording for the same event; look-alikes from
other tools do not."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_poetrys_no_versions_incompatibility_is_the_no_matching_distribution_family() -> None:
    # poetry/mixology/incompatibility.py: "{name} ({constraint}) which doesn't match any versions".
    text = ("Because my-project depends on torch (2.1.0+cu118) which doesn't match any versions, "
            "version solving failed.\n")
    assert stated(text) == ["no-matching-distribution"]
    via_dependency = ("Because torch (2.0.0) depends on nvidia-cudnn-cu11 (8.5.0.96) which doesn't match "
                      "any versions, version solving failed.\n")
    assert stated(via_dependency) == ["no-matching-distribution"]
    # Counter-case: Dart pub's pubgrub prints the same words without Poetry's parenthesised constraint.
    assert stated("Because app depends on go_router ^13.0.0 which doesn't match any versions, "
                  "version solving failed.\n") == []


def test_pdms_candidate_not_found_is_the_no_matching_distribution_family() -> None:
    # pdm/models/repositories/pypi.py raises CandidateNotFound with this fixed wording.
    text = ("[CandidateNotFound]: Unable to find candidates for torch. There may exist some issues "
            "with the package name or network condition.\n")
    assert stated(text) == ["no-matching-distribution"]
    # Counter-case: another tool's "Unable to find candidates for" without pdm's reason is not read.
    assert stated("Error: Unable to find candidates for nested Stack1 of parent stack Root\n") == []


def test_poetrys_unknown_archive_hash_is_the_hash_mismatch_family() -> None:
    # poetry/installation/executor.py: "Hash for {package} from archive {name} not found in known hashes".
    text = ("  RuntimeError\n\n  Hash for torch (2.1.0+cu121) from archive "
            "torch-2.1.0+cu121-cp310-cp310-linux_x86_64.whl not found in known hashes "
            "(was: sha256:0d4b0a5f)\n")
    assert stated(text) == ["package-hash-mismatch"]
    # Counter-case: poetry's "No usable hash type(s)" is no mismatch of the file's bytes.
    assert stated("RuntimeError\n\nNo usable hash type(s) for torch (2.1.0) from archive "
                  "torch-2.1.0-cp310-cp310-linux_x86_64.whl found (known hashes: [])\n") == []


def test_uvs_current_python_outside_a_packages_requires_python_is_package_python_unsupported() -> None:
    # uv-resolver/src/pubgrub/report.rs: "the current {package} version ({installed}) does not satisfy {}".
    text = ("  ╰─▶ Because the current Python version (3.8.18) does not satisfy Python>=3.9 and\n"
            "      torch==2.5.1 depends on Python>=3.9, we can conclude that torch==2.5.1 cannot be used.\n")
    assert stated(text) == ["package-python-version-unsupported"]
    every = ("  ╰─▶ Because the current Python version (3.13.1) does not satisfy Python>=3.8,<3.13 and all "
             "versions of torchaudio depend on Python>=3.8,<3.13, we can conclude that torchaudio cannot be "
             "used.\n")
    assert stated(every) == ["package-python-version-unsupported"]
    # Counter-cases: the requested (target) Python range is a resolution setting, not this interpreter,
    # and uv's lock check compares the interpreter with the project's lock, not a package's metadata.
    assert "package-python-version-unsupported" not in stated(
        "  ╰─▶ Because the requested Python version (>=3.8) does not satisfy Python>=3.9 and torch==2.5.1 "
        "depends on Python>=3.9, we can conclude that torch==2.5.1 cannot be used.\n")
    assert "package-python-version-unsupported" not in stated(
        "error: The current Python version (3.8.18) is not compatible with the locked Python requirement: "
        "`>=3.9`\n")


def test_uvs_failed_pep517_hook_with_torch_missing_is_build_isolation() -> None:
    # uv-build-frontend/src/lib.rs: "Call to `{backend}.build_{kind}` failed" (the isolated PEP 517 build);
    # error.rs adds the "doesn't declare it as a build dependency" hint for a missing module.
    text = ("  × Failed to build `flash-attn==2.7.4.post1`\n"
            "  ├─▶ The build backend returned an error\n"
            "  ╰─▶ Call to `setuptools.build_meta:__legacy__.build_wheel` failed (exit status: 1)\n\n"
            "      [stderr]\n      ModuleNotFoundError: No module named 'torch'\n")
    assert stated(text) == ["build-isolation-hides-torch"]
    hinted = ("      ModuleNotFoundError: No module named 'torch'\n\n      hint: This error likely indicates "
              "that `flash-attn@2.7.4.post1` depends on `torch`, but doesn't declare it as a build "
              "dependency.\n")
    assert stated(hinted) == ["build-isolation-hides-torch"]
    # Counter-case: the same module error from a script uv runs is the family, not a build.
    assert stated("$ uv run python train.py\nModuleNotFoundError: No module named 'torch'\n") == [
        "no-module-named-torch"]
