"""What pip's own output proves of an installer failure: the listing of versions it could see, the
Python it ran on, read against the release data; each with the counter-case where the fact is absent
or points the other way (the family then stays a family). Texts written from pip's message formats
(src/pip/_internal/resolution/resolvelib/factory.py), not copied from threads."""

from __future__ import annotations

from typing import List, Tuple

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract

_NOT_FOUND = ("ERROR: Could not find a version that satisfies the requirement {req} "
              "(from versions: {listed})\n"
              "ERROR: No matching distribution found for {req}\n")


def _cu118(*versions: str) -> str:
    return ", ".join(f"{v}+cu118" for v in versions)


def facts(text: str) -> List[Tuple[str, str]]:
    return [(e.kind, e.text) for e in extract(text, KB).installer_errors]


def test_a_listing_of_one_variants_builds_that_stops_before_the_request_is_that_index_lacking_it() -> None:
    # cu118 builds were published for torch 2.0.0 to 2.7.1 (the data's variant lists).
    text = _NOT_FOUND.format(req="torch>=2.8", listed=_cu118("2.5.1", "2.6.0", "2.7.0", "2.7.1"))
    assert ("build-unpublished", "torch>=2.8 from the cu118 index") in facts(text)
    assert stated(text) == ["torch-cuda-build-not-published"]
    # A pin that names the same variant reads the same; another variant's pin is not this index's.
    assert "torch-cuda-build-not-published" in stated(text.replace("torch>=2.8", "torch==2.8.0+cu118"))
    assert ("build-unpublished", "torch==2.8.0+cu128 from the cu118 index") not in \
        facts(text.replace("torch>=2.8", "torch==2.8.0+cu128"))


def test_a_listing_of_one_variant_proves_nothing_where_an_allowed_release_has_that_variant() -> None:
    # torch 2.7.1+cu118 exists: a listing that stops short of it is this interpreter lacking its wheel.
    text = _NOT_FOUND.format(req="torch>=2.7", listed=_cu118("2.5.1", "2.6.0"))
    assert not any(kind == "build-unpublished" for kind, _ in facts(text))
    assert stated(text) == ["no-matching-distribution"]


def test_a_listing_with_plain_or_several_labels_is_not_one_variants_index() -> None:
    plain = _NOT_FOUND.format(req="torch>=2.8", listed="2.5.1, 2.6.0, 2.7.0, 2.7.1")
    mixed = _NOT_FOUND.format(req="torch>=2.8", listed="2.7.1+cu118, 2.7.1+cu126, 2.7.1+cpu")
    for text in (plain, mixed):
        assert not any(text_.endswith("index") for _, text_ in facts(text))
        assert "torch-cuda-build-not-published" not in stated(text)


def test_a_version_no_release_has_is_not_a_variant_that_was_dropped() -> None:
    text = _NOT_FOUND.format(req="torch==9.9.9", listed=_cu118("2.6.0", "2.7.0"))
    assert "torch-cuda-build-not-published" not in stated(text)


_PY38 = ("1.4.0, 1.5.0, 1.5.1, 1.6.0, 1.7.0, 1.7.1, 1.8.0, 1.8.1, 1.9.0, 1.9.1, 1.10.0, 1.10.1, 1.10.2, "
         "1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1, 2.2.2, "
         "2.3.0, 2.3.1, 2.4.0, 2.4.1")


def test_a_listing_that_is_one_pythons_releases_and_that_python_named_prove_the_pin_lacks_its_wheel() -> None:
    # The releases with Python 3.8 wheels end at 2.4.1; the text names Python 3.8 in its own words.
    text = "Python 3.8.18\n" + _NOT_FOUND.format(req="torch>=2.6", listed=_PY38)
    assert any(kind == "pin-lacks-python-wheel" for kind, _ in facts(text))
    assert stated(text) == ["torch-pin-lacks-python-wheel"]


def test_the_listing_alone_or_a_python_it_does_not_match_stays_the_family() -> None:
    alone = _NOT_FOUND.format(req="torch>=2.6", listed=_PY38)
    other = "Python 3.11.4\n" + alone
    for text in (alone, other):
        assert not any(kind == "pin-lacks-python-wheel" for kind, _ in facts(text))
        assert stated(text) == ["no-matching-distribution"]


def test_pip_fetching_the_0_1_2_placeholder_sdist_is_named_with_why_no_wheel_fits() -> None:
    # pip logs each file it prepares (operations/prepare.py); PyPI's torch 0.1.2* are sdists only.
    text = ("Collecting torch\n  Downloading torch-0.1.2.post2.tar.gz (128 kB)\n"
            "  Preparing metadata (setup.py) ... error\n")
    assert stated(text) == ["torch-placeholder-sdist"]
    # Listed as what pip could see, beside a pin that excludes them, the placeholders were not taken.
    listed = _NOT_FOUND.format(req="torch==1.5.1", listed="0.1.2, 0.1.2.post1, 0.1.2.post2")
    assert stated(listed) == ["no-matching-distribution"]


# PyPI's linux-aarch64 torch releases for Python 3.8 up to 2.0.0: 1.9.1 had no aarch64 wheel.
_AARCH64_PY38 = ("1.8.0, 1.8.1, 1.9.0, 1.10.0, 1.10.1, 1.10.2, 1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, "
                 "2.0.0")


def test_a_cuda_build_asked_for_on_the_platform_the_listing_shows_without_it_was_never_built_there() -> None:
    text = _NOT_FOUND.format(req="torch==1.13.1+cu117", listed=_AARCH64_PY38)
    assert ("build-unpublished", "torch==1.13.1+cu117 on linux-aarch64") in facts(text)
    assert stated(text) == ["torch-cuda-build-not-published"]


def test_a_listing_several_platforms_share_or_a_build_made_for_that_platform_proves_nothing() -> None:
    x86_64 = _NOT_FOUND.format(req="torch==1.13.1+cu117", listed=_PY38.split(", 2.0.1")[0])
    cpu = _NOT_FOUND.format(req="torch==1.13.1+cpu", listed=_AARCH64_PY38)
    for text in (x86_64, cpu):
        assert not any(kind == "build-unpublished" for kind, _ in facts(text))
        assert "torch-cuda-build-not-published" not in stated(text)


def test_the_default_cuda_build_listed_plain_beside_the_others_labelled_was_published_unlabelled() -> None:
    # torch 1.7.1's default CUDA build (PyPI's on Linux) is cu102.
    listed = "1.7.0, 1.7.0+cpu, 1.7.0+cu101, 1.7.1, 1.7.1+cpu, 1.7.1+cu101, 1.7.1+cu110"
    text = _NOT_FOUND.format(req="torch==1.7.1+cu102", listed=listed)
    assert ("label-absent", "torch==1.7.1+cu102") in facts(text)
    assert stated(text) == ["local-version-label-absent"]


def test_an_index_that_labels_default_builds_or_lists_no_plain_release_is_not_a_label_absent() -> None:
    labels_defaults = _NOT_FOUND.format(req="torch==1.7.1+cu102",
                                        listed="1.7.0+cu102, 1.7.1, 1.7.1+cpu, 1.7.1+cu101")
    no_plain = _NOT_FOUND.format(req="torch==1.7.1+cu102", listed="1.7.1+cpu, 1.7.1+cu101, 1.7.1+cu110")
    not_default = _NOT_FOUND.format(req="torch==1.7.1+cu92", listed="1.7.1, 1.7.1+cpu, 1.7.1+cu101")
    # From torch 1.8.1 on the default build carries its label (torch-1.8.1+cu102 on whl/cu102).
    labelled_since = _NOT_FOUND.format(req="torch==1.9.0+cu102", listed="1.9.0, 1.9.0+cpu, 1.9.0+cu111")
    for text in (labels_defaults, no_plain, not_default, labelled_since):
        assert not any(kind == "label-absent" for kind, _ in facts(text))
        assert "local-version-label-absent" not in stated(text)


def test_a_cpu_build_on_an_l4t_kernel_is_the_generic_wheel_on_a_jetson() -> None:
    # platform.platform() on a Jetson prints its L4T kernel release (5.10-tegra in L4T r35)
    text = ("- Platform: Linux-5.10.120-tegra-aarch64-with-glibc2.31\n- Python version: 3.8.10\n"
            "- PyTorch version: 2.1.0+cpu\n")
    assert extract(text, KB).environment.jetson == "5.10.120-tegra"
    assert stated(text) == ["jetson-cpu-wheel"]
    # Counter-cases: the same build on a server's aarch64 kernel, and r38's 6.8 kernel (Thor's SBSA
    # stack), are no Jetson's generic wheel.
    assert "jetson-cpu-wheel" not in stated(text.replace("5.10.120-tegra", "5.15.0-1024-nvidia"))
    assert "jetson-cpu-wheel" not in stated(text.replace("5.10.120-tegra", "6.8.12-tegra"))


def test_a_companion_installers_own_no_wheel_for_this_cuda_and_torch_is_the_unpublished_wheel() -> None:
    # DazzleML's installer prints its compatibility check's message after "SA 2.x Compatibility:"
    text = ("SA 2.x Compatibility: [NO] No matching wheel for CUDA 12.9 + PyTorch 2.10.0\n"
            "                      Fallback: SA 1.0.6 (~2.1x speedup)\n")
    assert stated(text) == ["companion-wheels-not-published"]
    assert stated("SA 2.x Compatibility: [OK] Supported (SA 2.2.0.post3)\n") == []
    assert stated("No matching wheel found for this platform\n") != ["companion-wheels-not-published"]


def test_a_requirement_pip_echoes_with_its_variable_unexpanded_matches_no_version() -> None:
    # pip expands ${NAME} in a requirements file only where the variable is set (req_file.py)
    text = _NOT_FOUND.format(req="torchvision==0.16.2+${CUDA_TAG}", listed="0.15.2, 0.16.0, 0.16.1, 0.16.2")
    assert stated(text) == ["requirement-placeholder-not-substituted"]
    (error,) = [e for e in extract(text, KB).installer_errors if e.kind == "placeholder-unexpanded"]
    assert "${CUDA_TAG} unexpanded" in error.meaning
    assert "bare $NAME" in extract(text.replace("${CUDA_TAG}", "$CUDA_TAG"), KB).installer_errors[0].meaning
    # Counter-case: the value written in names a real label; the family stays the family.
    assert "requirement-placeholder-not-substituted" not in stated(text.replace("${CUDA_TAG}", "cu999"))


# PyPI's linux-aarch64 torch releases for Python 3.10, up to 2.10.0
_AARCH64_PY310 = ("1.10.2, 1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, "
                  "2.1.2, 2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1, 2.4.0, 2.4.1, 2.5.0, 2.5.1, 2.6.0, 2.7.0, "
                  "2.7.1, 2.8.0, 2.9.0, 2.9.1, 2.10.0")


def test_a_build_published_for_the_platform_pips_plain_listing_shows_was_on_an_index_not_read() -> None:
    # torch 2.11.0's PyPI build for linux-aarch64 is a CUDA one; +cpu is on whl/cpu alone
    text = _NOT_FOUND.format(req="torch==2.11.0+cpu", listed=_AARCH64_PY310 + ", 2.11.0")
    assert ("index-not-given", "torch==2.11.0+cpu") in facts(text)
    assert stated(text) == ["pytorch-index-not-given"]


def test_a_named_pytorch_index_a_default_build_or_a_listing_of_several_platforms_stays_the_family() -> None:
    named = "Looking in links: https://download.pytorch.org/whl/torch_stable.html\n" + \
        _NOT_FOUND.format(req="torch==2.11.0+cpu", listed=_AARCH64_PY310 + ", 2.11.0")
    # whl/cpu held aarch64's CPU build (then PyPI's default there) unlabelled: torch-2.3.1-cp310-...aarch64
    default = _NOT_FOUND.format(req="torch==2.3.1+cpu", listed=_AARCH64_PY310.split(", 2.4.0")[0])
    several = _NOT_FOUND.format(req="torch==1.13.1+cu117", listed=_PY38.split(", 2.0.1")[0])
    for text in (named, default, several):
        assert "pytorch-index-not-given" not in stated(text)


_UV_ONLY = ("  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because only torch<={top} is available and you\n"
            "      require torch>=2.8, we can conclude that your requirements are unsatisfiable.\n")


def test_uv_finding_one_variants_builds_short_of_the_range_is_that_variant_never_built_there() -> None:
    # uv's report (pubgrub/report.rs) names the newest torch it found; a +label is no PyPI version
    text = _UV_ONLY.format(top="2.7.1+cu118")
    assert ("build-unpublished", "torch>=2.8 from the cu118 index") in facts(text)
    assert stated(text) == ["torch-cuda-build-not-published"]
    dependency = text.replace("you\n      require", "vllm==0.10.0 depends on")
    assert "torch-cuda-build-not-published" in stated(dependency)
    # Counter-cases: a variant the range has builds of, and a plain version (PyPI's or any index's).
    for top in ("2.7.1+cu126", "2.7.1"):
        assert "torch-cuda-build-not-published" not in stated(_UV_ONLY.format(top=top))
