"""Setup failures read in their tools' own words (the Docker registry, conda, NGC containers'
entrypoint check, uv's and libmamba's refusals), each source cited in its signature: what each
message proves, and the look-alike texts that must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_a_missing_nvidia_cuda_tag_is_an_unpublished_tag_and_other_images_are_not() -> None:
    pulled = ("Error response from daemon: manifest for nvidia/cuda:10.2-devel-ubuntu18.04 not found: "
              "manifest unknown: manifest unknown\n")
    (found,) = explain_report(pulled, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-image-tag-removed" and found.facts["tag"] == "10.2-devel-ubuntu18.04"
    built = ("ERROR: failed to solve: nvidia/cuda:11.1-devel-ubuntu20.04: docker.io/nvidia/cuda:"
             "11.1-devel-ubuntu20.04: not found\n")
    assert stated(built) == ["cuda-image-tag-removed"]
    # Counter-case: another image's missing tag says nothing about NVIDIA's policy.
    assert stated(pulled.replace("nvidia/cuda:", "pytorch/pytorch:")) == []


def test_a_channel_404_from_a_mirror_is_the_mirror_and_from_anaconda_org_is_not() -> None:
    text = ("UnavailableInvalidChannel: HTTP 404 NOT FOUND for channel nvidia "
            "<http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia>\n\nThe channel is not accessible or is "
            "invalid.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "conda-mirror-lacks-channel" and found.facts["channel"] == "nvidia"
    # Counter-case: anaconda.org itself answering 404 is a channel that does not exist (a typo).
    assert "conda-mirror-lacks-channel" not in stated(
        text.replace("http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia", "https://conda.anaconda.org/nvidai"))
    # a channel the data does not know may be a typo, which a mirror answers 404 for too; Anaconda's
    # own older hosts are no mirror
    typo = text.replace("channel nvidia", "channel nvidai").replace("anaconda/nvidia", "anaconda/nvidai")
    assert "conda-mirror-lacks-channel" not in stated(typo)
    old_host = text.replace("http://mirrors.tuna.tsinghua.edu.cn/anaconda/nvidia", "https://repo.continuum.io/nvidia")
    assert "conda-mirror-lacks-channel" not in stated(old_host)


def test_ngc_containers_driver_check_names_the_drivers() -> None:
    text = ("ERROR: This container was built for NVIDIA Driver Release 545.23 or later, but\n"
            "       version 535.104.05 was detected and compatibility mode is UNAVAILABLE.\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "driver-too-old"
    assert (found.facts["required_driver"], found.facts["driver"]) == ("545.23", "535.104.05")
    # Counter-case: no driver version at all (a container without GPU access) is not an old driver.
    assert "driver-too-old" not in stated(text.replace("version 535.104.05 was", "version  was"))


def test_uvs_quoted_build_is_the_extension_build_family() -> None:
    # uv quotes what it failed to build: "Failed to build `flash-attn==2.6.3`".
    uv = "  \u251c\u2500\u25b6 Failed to download and build `flash-attn==2.6.3`\n"
    assert stated(uv) == ["extension-build-failed"]
    # Counter-case: a name the family does not list is no CUDA extension build.
    assert stated(uv.replace("flash-attn", "pyyaml")) == []
