"""The questions the knowledge base exists to answer, from the packaged data, with sources."""

from __future__ import annotations

from typing import Sequence

import pytest

from torchsmith.kb import KnowledgeBase, load_kb


@pytest.fixture
def kb() -> KnowledgeBase:
    return load_kb(packaged_only=True)


def assert_sourced(kb: KnowledgeBase, ids: Sequence[str]) -> None:
    assert ids, "a fact without a source"
    for ref in ids:
        source = kb.sources[ref]
        assert source.url and source.retrieved


def test_torch_2_8_on_a_gtx_1080_runs_only_the_cu126_build(kb: KnowledgeBase) -> None:
    gpu = kb.gpu_by_name("NVIDIA GeForce GTX 1080")
    assert gpu is not None and gpu.compute_capability == "6.1" and gpu.family == "Pascal"
    assert_sourced(kb, gpu.sources)
    release = kb.release("2.8.0")
    assert release is not None
    verdicts = {v.name: kb.kernel_for(v, gpu.compute_capability, "linux-x86_64")
                for v in release.variants if v.kind == "cuda"}
    # sm_61 was never compiled: a GTX 10xx runs the sm_60 SASS of the same major.
    assert verdicts == {"cu126": ("sass", "sm_60"), "cu128": None, "cu129": None}
    for variant in release.variants:
        assert_sourced(kb, variant.sources)


def test_the_oldest_torch_for_an_rtx_5090_is_2_7_0_cu128(kb: KnowledgeBase) -> None:
    gpu = kb.gpu_by_name("NVIDIA GeForce RTX 5090")
    assert gpu is not None and gpu.arch == "sm_120"
    oldest = None
    for release in reversed(kb.releases):
        # SASS: the PTX of the 1.x wheels (compute_37, compute_50) would JIT, slowly, on any GPU.
        hits = [v for v in release.variants
                if v.kind == "cuda" and (kb.kernel_for(v, gpu.compute_capability, "linux-x86_64")
                                         or ("", ""))[0] == "sass"]
        if hits:
            oldest = (release.version, [v.name for v in hits])
            assert_sourced(kb, hits[0].sources)
            break
    assert oldest == ("2.7.0", ["cu128"])


def test_minimum_linux_drivers_for_cu126_and_cu128(kb: KnowledgeBase) -> None:
    cu126 = kb.cuda_release("cu126")
    cu128 = kb.cuda_release("12.8")
    assert cu126 is not None and cu128 is not None
    assert (cu126.min_driver_linux, cu126.minor_compat_min_driver_linux) == ("560.28.03", "525.60.13")
    assert (cu128.min_driver_linux, cu128.minor_compat_min_driver_linux) == ("570.26", "525.60.13")
    assert cu128.min_driver_windows == "570.65"
    assert_sourced(kb, cu126.sources)
    assert kb.sources["NV_RN"].url.startswith("https://docs.nvidia.com/")


def test_the_nvidia_wheel_for_jetpack_5_1(kb: KnowledgeBase) -> None:
    jetpack = kb.jetpack_for_l4t("35.2.1")
    assert jetpack is not None and jetpack.jetpack == "5.1"
    assert (jetpack.cuda, jetpack.python) == ("11.4", "3.8")
    assert kb.jetpack("5.1") is jetpack
    own = [w for w in jetpack.wheels if not w.listed_for]  # those the 5.1 row lists itself
    wheel = own[0]  # newest first
    assert [w.torch for w in own] == [
        "2.0.0a0+8aa34602.nv23.03", "1.14.0a0+44dac51c.nv23.02", "1.14.0a0+44dac51c.nv23.01"]
    # and the JetPack 5.1.1/5.1.2 wheels, built for every L4T R35 with 5.1's CUDA and cuDNN
    assert {(w.torch, w.listed_for, w.l4t) for w in jetpack.wheels if w.listed_for} == {
        ("2.1.0a0+41361538.nv23.06", "5.1.2", "==35.*"), ("2.0.0+nv23.05", "5.1.1", "==35.*")}
    assert wheel.url == ("https://developer.download.nvidia.com/compute/redist/jp/v51/pytorch/"
                         "torch-2.0.0a0+8aa34602.nv23.03-cp38-cp38-linux_aarch64.whl")
    assert wheel.python == "3.8" and wheel.torchvision == "0.15.1"
    assert "libopenblas-dev" in jetpack.prerequisites
    assert_sourced(kb, wheel.sources)


def test_torchvision_for_torch_2_5_1(kb: KnowledgeBase) -> None:
    release = kb.release("2.5.1+cu124")
    assert release is not None and release.torchvision == "0.20.1"
    assert_sourced(kb, release.sources)
    [pin] = [r for r in kb.torch_requirements("torchvision") if r.version == "0.20.1"]
    assert pin.torch == "==2.5.1"


def test_prebuilt_mmcv_for_torch_2_1_cu121(kb: KnowledgeBase) -> None:
    [row] = kb.paired_wheels("mmcv", torch="2.1.2", variant="cu121")
    assert row.find_links == "https://download.openmmlab.com/mmcv/dist/cu121/torch2.1.0/index.html"
    assert "2.1.0" in row.versions
    assert row.uncertain and not row.confirmed_from  # from mmcv's docs: the find-links page itself not read
    assert_sourced(kb, row.sources)


def test_gpu_names_as_drivers_report_them(kb: KnowledgeBase) -> None:
    for name, cc in [("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA A100-SXM4-80GB", "8.0"),
                     ("Tesla V100-SXM2-16GB", "7.0"), ("nvidia geforce rtx 3060 laptop gpu", "8.6"),
                     ("NVIDIA GeForce RTX 3060 Ti", "8.6"), ("NVIDIA H100 80GB HBM3", "9.0"),
                     ("Jetson AGX Orin", "8.7"), ("NVIDIA GB10", "12.1"),
                     ("NVIDIA TITAN X (Pascal)", "6.1"), ("NVIDIA GeForce GTX TITAN X", "5.2")]:
        model = kb.gpu_by_name(name)
        assert model is not None and model.compute_capability == cc, name
    assert kb.gpu_by_name("NVIDIA GeForce RTX 3060 Ti").name == "GeForce RTX 3060 Ti"  # type: ignore[union-attr]
    assert kb.gpu_by_name("Matrox G200") is None
    assert kb.gpu_by_pci_id("0x2684").name == "GeForce RTX 4090"  # type: ignore[union-attr]


def test_driver_branch_to_highest_cuda(kb: KnowledgeBase) -> None:
    assert kb.driver_max_cuda("535.104.05") == "12.2"
    assert kb.driver_max_cuda("535.54.02") == "12.1"
    assert kb.driver_max_cuda("570.124.06") == "12.8"
    assert kb.driver_max_cuda("572.16", system="windows") == "12.8"
    assert kb.driver_max_cuda("418.39") == "10.1"
    assert kb.driver_max_cuda("not a driver") is None


def test_the_traps_of_the_fact_sheet(kb: KnowledgeBase) -> None:
    def sass(version: str, variant: str, platform: str = "linux-x86_64") -> Sequence[str]:
        build = kb.release(version).variant(variant)  # type: ignore[union-attr]
        assert build is not None, (version, variant)
        return build.sass(platform)

    # Maxwell/Pascal leave with cu128; Volta returns in 2.8-2.10 cu128 and leaves in 2.11.
    assert "sm_50" in sass("2.7.0", "cu126") and "sm_50" not in sass("2.7.0", "cu128")
    assert "sm_70" not in sass("2.7.0", "cu128") and "sm_70" in sass("2.8.0", "cu128")
    assert "sm_70" not in sass("2.11.0", "cu128")
    # Blackwell arrives with cu128 in 2.7; Kepler (sm_37) only in cu11x builds.
    assert "sm_120" in sass("2.7.0", "cu128") and "sm_100" in sass("2.7.0", "cu128")
    assert "sm_37" in sass("2.5.1", "cu118") and "sm_37" not in sass("2.5.1", "cu121")
    # Thor (sm_110) only in the aarch64 cu13x builds.
    assert "sm_110" in sass("2.11.0", "cu130", "linux-aarch64") and "sm_110" not in sass("2.11.0", "cu130")
    # PTX: 1.0-1.3.0 built 3.5;5.0+PTX (compute_50), 1.3.1-1.5 and every Windows cu11x 3.7+PTX.
    assert sass("1.3.0", "cu100")[0] == "sm_35" and kb.release("1.3.0").variant("cu100").ptx(  # type: ignore[union-attr]
        "linux-x86_64") == ("compute_50",)
    assert kb.release("2.5.1").variant("cu118").ptx("windows-x86_64") == ("compute_37",)  # type: ignore[union-attr]
    assert kb.release("2.5.1").variant("cu118").ptx("linux-x86_64") == ()  # type: ignore[union-attr]
    # macOS x86_64 ends at 2.2.2.
    assert kb.release("2.2.2").pythons("macos-x86_64")  # type: ignore[union-attr]
    assert not kb.release("2.3.0").pythons("macos-x86_64")  # type: ignore[union-attr]
    # PyPI's aarch64 wheel is CPU-only up to 2.10, then CUDA.
    assert kb.release("2.10.0").pypi_default["linux-aarch64"] == "cpu"  # type: ignore[union-attr]
    assert kb.release("2.11.0").pypi_default["linux-aarch64"] == "cu130"  # type: ignore[union-attr]
    assert kb.release("2.8.0").pypi_default["linux-x86_64"] == "cu128"  # type: ignore[union-attr]
    # The conda `pytorch` channel ends after 2.5.
    [channel] = [c for c in kb.conda_channels if c.channel == "pytorch"]
    assert channel.last_version == "2.5.1"
    assert_sourced(kb, channel.sources)
    # Free-threaded Python tags.
    assert "3.13t" in kb.release("2.7.0").pythons("linux-x86_64")  # type: ignore[union-attr]
    assert "3.13t" not in kb.release("2.12.1").pythons("linux-x86_64")  # type: ignore[union-attr]
    # WSL installs the Linux wheels.
    assert sass("2.8.0", "cu126", "wsl-x86_64") == sass("2.8.0", "cu126")


def test_releases_span_1_0_to_2_15_newest_first(kb: KnowledgeBase) -> None:
    versions = [r.version for r in kb.releases]
    assert versions[0] == "2.15.0" and versions[-1] == "1.0.0"
    assert {"1.8.1", "1.12.1", "2.5.1"} <= set(versions)
    old = kb.release("1.7.1")
    assert old is not None and old.uncertain and old.variant("cu110") is not None
    assert old.variant("cu110").index_url == "https://download.pytorch.org/whl/cu110"  # type: ignore[union-attr]
    assert kb.release("9.9.9") is None


def test_rocm_and_other_tables(kb: KnowledgeBase) -> None:
    builds = kb.rocm_variants("gfx1100")
    assert builds and all("gfx1100" in v.gfx for _, v in builds)
    # 2.14's rocm7.14 is a multi-arch build (TheRock device packages), its targets recorded, not empty.
    assert (builds[0][0].version, builds[0][1].name) == ("2.14.1", "rocm7.14")
    assert {"gfx908", "gfx942", "gfx1032", "gfx1151", "gfx1201"} <= set(builds[0][1].gfx)
    assert kb.rocm_variants()[0][0].version == "2.14.1"
    assert [(r.version, v.name) for r, v in kb.rocm_release("6.2")][-1] == ("2.5.0", "rocm6.2")
    assert ("2.6.0", "rocm6.2.4") in [(r.version, v.name) for r, v in kb.rocm_release("rocm6.2")]
    target, route = kb.gfx_target("gfx1031"), kb.hsa_override("gfx1031")
    assert target is not None and route is not None and route.value == "10.3.0"
    assert target.in_wheels  # derived: the multi-arch rocm7.14 builds list gfx1031
    assert target.therock == {"linux-x86_64": "release-ready", "windows-x86_64": "release-ready"}
    old_card = kb.gfx_target("gfx90c")
    assert old_card is None or not old_card.in_wheels
    assert kb.minor_compat("13.0").min_driver_linux == "580"  # type: ignore[union-attr]
    assert kb.arch_support("12.8.1").max_arch == "sm_120"  # type: ignore[union-attr]
    assert kb.arch_support("13.0").min_arch == "sm_75"  # type: ignore[union-attr]
    assert {b.extra for b in kb.framework_builds("jax")} == {"cuda12", "cuda13"}
    assert any(r.package == "xformers" and r.torch == "==2.5.1" for r in kb.torch_requirements())
    assert kb.paired_wheels("pyg", torch="2.5.1", variant="cu124")[0].packages


def test_every_row_cites_known_sources(kb: KnowledgeBase) -> None:
    from torchsmith.kb.model import TABLE_FILES

    for table in TABLE_FILES:
        for row in kb.table(table):
            assert_sourced(kb, row.sources)
