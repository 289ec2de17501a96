"""Counter-cases from the review of the second half of the asserting signatures (issue 21, rv10b):
for each mend, the message with another cause's evidence, beside the case it was written for."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

_PIP_403 = "Could not install packages due to an EnvironmentError: 403 Client Error: Forbidden for url: "


def test_a_403_for_a_project_the_pytorch_index_hosts_is_no_project_it_does_not_host() -> None:
    # the case it was written for (pytorch/pytorch#81900): a dependency pip looked up on that index
    dependency = _PIP_403 + "https://download.pytorch.org/whl/cpu/typing-extensions/\n"
    assert stated(dependency) == ["pytorch-index-403"]
    # torch's own page on a variant index PyTorch published, or on the root index: the index hosts
    # it, so a proxy, CloudFront's WAF or its geographic restriction refused the request
    assert "pytorch-index-403" not in stated(_PIP_403 + "https://download.pytorch.org/whl/cu121/torch/\n")
    assert "pytorch-index-403" not in stated(_PIP_403 + "https://download.pytorch.org/whl/torchvision/\n")
    # a variant index PyTorch never published (no cu122) does not host torch: still stated
    assert stated(_PIP_403 + "https://download.pytorch.org/whl/cu122/torch/\n") == ["pytorch-index-403"]


_IOSTREAM = ("src/binding.cpp:1:10: fatal error: 'iostream' file not found\n#include <iostream>\n"
             "         ^~~~~~~~~~\n1 error generated.\n")


def test_clang_missing_a_standard_header_on_macos_is_no_gcc_installation_without_headers() -> None:
    # the case it was written for: clang on Linux, which takes libstdc++ from a GCC it selects
    assert stated("clang++ -c src/binding.cpp -I/home/u/venv/lib/python3.11/site-packages/torch/include\n"
                  + _IOSTREAM) == ["clang-cxx-stdlib-headers-missing"]
    # on macOS clang reads the SDK's libc++ and selects no GCC: a build asking for libstdc++ (a
    # deployment target below 10.9, as SeanNaren/warp-ctc#129) or a broken SDK is the cause
    macos = ("gcc -Wno-unused-result -arch x86_64 -I/Users/me/anaconda/envs/ocr/include -c src/binding.cpp "
             "-o build/temp.macosx-10.7-x86_64-3.6/src/binding.o -std=c++11\n"
             "warning: include path for stdlibc++ headers not found; pass '-stdlib=libc++' on the command "
             "line to use the libc++ standard library instead [-Wstdlibcxx-not-found]\n")
    assert "clang-cxx-stdlib-headers-missing" not in stated(macos + _IOSTREAM)
    assert "clang-cxx-stdlib-headers-missing" not in stated(
        "macOS 14.4 on an Apple M2, Command Line Tools at /Library/Developer/CommandLineTools\n" + _IOSTREAM)


def test_ffmpegs_libraries_missing_is_not_said_to_be_torchcodecs_where_another_decoder_loads_them() -> None:
    decord = ('  File "/opt/venv/lib/python3.10/site-packages/decord/__init__.py", line 4, in <module>\n'
              "OSError: libavcodec.so.58: cannot open shared object file: No such file or directory\n")
    found = explain_report(decord, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in found] == ["ffmpeg-shared-libs-missing"]
    # the id stays true (FFmpeg's libraries are not found); the cause no longer names torchcodec alone
    assert "decord" in found[0].cause and "libavcodec.so.58" in found[0].cause


def test_ddps_reducer_under_static_graph_is_said_to_be_a_changed_graph_not_only_unused_layers() -> None:
    # reducer.cpp words the same refusal per mode: static_graph=True means the used set changed
    static = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting "
              "a new one. This error indicates that your training graph has changed in this iteration, e.g., "
              "one parameter is used in first iteration, but then got unused in the second iteration. "
              "this is "
              "not compatible with static_graph set to True.\n")
    found = explain_report(static, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in found] == ["ddp-unused-parameters"]
    assert "static_graph" in found[0].fix[0] and "find_unused_parameters" not in " ".join(found[0].fix)
    # the reducer's wording without static_graph keeps the unused-parameter fixes
    plain = (static.split(" This error")[0]
             + " This error indicates that your module has parameters that were not used"
             " in producing loss.\n")
    found = explain_report(plain, CATALOG, kb=KB).explanations
    assert [e.signature.id for e in found] == ["ddp-unused-parameters"]
    assert not any("static_graph" in fix for fix in found[0].fix)


_WHEEL = "https://download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp310-cp310-linux_x86_64.whl"


def test_a_403_for_a_wheel_pytorch_published_is_no_retired_url() -> None:
    # the cases it was written for: a literal '+' (S3 reads a space: pytorch/pytorch#118732), and a
    # wheel the data does not record (torch 2.1.0 was never built for Python 3.6)
    literal = "https://download.pytorch.org/whl/cpu/torch-1.2.0+cpu-cp27-cp27m-manylinux1_x86_64.whl"
    assert stated(f"HTTP error 403 while getting {literal}\n") == ["wheel-url-gone"]
    unbuilt = _WHEEL.replace("cp310-cp310", "cp36-cp36m")
    assert stated(f"ERROR: HTTP error 403 while getting {unbuilt}\n") == ["wheel-url-gone"]
    # torch 2.1.0's cu121 build for Python 3.10 on Linux is published: something refused the request
    assert "wheel-url-gone" not in stated(f"ERROR: HTTP error 403 while getting {_WHEEL}\n")
