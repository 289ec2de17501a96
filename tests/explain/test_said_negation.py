"""A pattern that reads a person's words (``(?#said)``) counts only where the sentence states what it
reads: not where its clause denies it, asks it or supposes it, nor where a negation the pattern does
not need stands inside the match. Tool messages read by the same signatures still count. Texts
written for these tests."""

from __future__ import annotations

import re

import pytest
from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.extract import extract
from torchsmith.explain.negation import SAID, denied, denied_in_clause

_NO_COMPILER = re.compile(r"(?#said)here(?: is|'s) no (?P<compiler>gcc|g\+\+) (?:in|installed)\b")


@pytest.mark.parametrize("text", [
    "The build fails because there is no g++ installed in the image.",
    # the negation is another clause's, or another verb's
    "torch.compile does not work because there is no gcc in the container.",
    "I don't know why there is no g++ in the image.",
    "No, there is no gcc in the image: `which gcc` prints nothing.",
])
def test_a_person_stating_the_cause_is_read(text: str) -> None:
    assert stated(text) == ["no-cxx-compiler"]


@pytest.mark.parametrize("text", [
    "I do not think there is no gcc installed: gcc 11.4 is on PATH.",
    "g++ is installed, so it is not that there is no gcc in the container.",
    "It's not true that there's no g++ in the image.",
    "If there is no gcc in the image, torch.compile fails.",
    "Not sure whether there is no g++ installed in the runner.",
    "Is it because there's no g++ installed?",
    "I doubt there is no gcc in the container.",
])
def test_a_person_denying_asking_or_supposing_the_cause_is_not(text: str) -> None:
    assert "no-cxx-compiler" not in stated(text)


def test_a_negation_inside_the_match_counts_only_where_the_pattern_does_not_need_it() -> None:
    # reloading nvidia_uvm said to have fixed it, and said not to have
    assert stated("After `sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm` the error is fixed.") == [
        "nvidia-uvm-not-loaded"]
    for text in ("Reloading the nvidia_uvm module has not fixed it.",
                 "Reloading the nvidia-uvm module hasn't fixed it either.",
                 "sudo modprobe nvidia_uvm never fixed anything here."):
        assert "nvidia-uvm-not-loaded" not in stated(text), text
    # Windows' own "was not found" is the pattern's statement; a person's "is not missing" denies it
    assert stated("The code execution cannot proceed because VCRUNTIME140_1.dll was not found.") == [
        "windows-dll-load-failed"]
    assert stated("I checked and VCRUNTIME140.dll is not missing, it is in System32.") == []
    assert stated("missing MSVCP140.dll") == ["windows-dll-load-failed"]
    assert stated("I'm not missing MSVCP140.dll, it is in System32") == []


def test_the_audited_signatures_keep_their_tool_messages() -> None:
    expired = ("pip._vendor.urllib3.exceptions.SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
               "failed: certificate has expired (_ssl.c:1006)")
    assert stated(expired) == ["index-certificate-expired"]
    assert stated("I doubt the certificate has expired, curl reaches the index.") == []
    assert stated("cudnn64_8.dll is missing") == ["cudnn-library-missing"]
    assert stated("I don't think cudnn64_8.dll is missing") == []
    assert stated("The NVIDIA GPU at PCI:0000:01:00 requires use of the NVIDIA open kernel modules.") == [
        "blackwell-needs-open-kernel-module"]
    assert stated("For the RTX 5090 the open kernel modules are required.") == [
        "blackwell-needs-open-kernel-module"]
    assert stated("I don't think open kernel modules are required for a 4090.") == []


def test_the_readers_of_words_in_extract_share_the_clauses_check() -> None:
    # a pip install said to have replaced the GPU build, and said not to have
    assert stated("$ pip install whisperx\nIt uninstalled torch-2.4.1+cu121 and installed torch-2.5.0.") == [
        "pip-replaced-torch-build"]
    denial = "$ pip install whisperx\nIt did not uninstall torch-2.4.1+cu121, it only added numpy."
    assert stated(denial) == []


def test_the_check_reads_the_clause_the_match_stands_in() -> None:
    text = "torch.compile does not work, because there is no gcc in the image"
    assert not denied_in_clause(text, text.index("here is no"))
    text = "I do not think that there is no gcc in the image"
    assert denied_in_clause(text, text.index("here is no"))
    match = _NO_COMPILER.search("Is it that there is no gcc installed? Yes.")
    assert match is not None and denied(_NO_COMPILER, match.string, match)
    # a tool's pattern (no mark) is never denied: its message is a statement
    tool = re.compile(_NO_COMPILER.pattern[len(SAID):])
    found = tool.search("I do not think there is no gcc installed")
    assert found is not None and not denied(tool, found.string, found)


def test_the_mark_opens_a_pattern() -> None:
    # the matcher reads the mark at a pattern's start only: anywhere else it would be ignored
    marked = [p.pattern for s in CATALOG.signatures for p in s.patterns if SAID in p.pattern]
    assert len(marked) >= 10 and all(p.startswith(SAID) and p.count(SAID) == 1 for p in marked)


def test_the_symptoms_read_in_words_share_the_clauses_check() -> None:
    # a hang of a distributed run, stated and said to be gone
    assert extract("Training with DDP on 4 GPUs hangs at the first allreduce.", KB).symptoms == [
        "distributed-hang"]
    assert extract("After NCCL_P2P_DISABLE=1 the DDP run no longer hangs on 4 GPUs.", KB).symptoms == []
    # results said to differ, and said not to
    assert "discrepancy" in extract("On the A100 I get wrong results compared to the CPU.", KB).symptoms
    assert extract("On the A100 I don't get wrong results, only slower ones.", KB).symptoms == []
    # reloading nvidia_uvm said to have fixed the error, and said not to have
    error = "RuntimeError: CUDA error: unknown error\n"
    reload = "sudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n"
    assert "nvidia-uvm-not-loaded" in stated(error + "These commands solve my problem:\n" + reload)
    assert "nvidia-uvm-not-loaded" not in stated(error + "These commands did not really solve my problem:\n"
                                                 + reload)
