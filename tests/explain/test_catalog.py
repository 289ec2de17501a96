"""The signature file's validation, fact decoding, placeholders and the machine's facts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from torchsmith.errors import TorchsmithError
from torchsmith.explain import catalog_of, explain, load_catalog, parse_catalog
from torchsmith.explain.catalog import literal_prefix
from torchsmith.explain.host import host_facts
from torchsmith.explain.matcher import PLAN_STEP, normalise_fact, render_text
from torchsmith.kb import load_kb
from torchsmith.machine import (
    AmdGpu,
    Machine,
    NvidiaGpu,
    NvidiaInfo,
    OsInfo,
    PythonInfo,
    RocmInfo,
)

KB = load_kb(packaged_only=True)
DEFAULT_PATH = KB.document_path("signatures")
PACKAGED: Dict[str, Any] = json.loads(Path(DEFAULT_PATH).read_text(encoding="utf-8"))


def one_signature(**changes: Any) -> Dict[str, Any]:
    doc = copy.deepcopy(PACKAGED)
    sig = dict(doc["signatures"][0])
    sig.update(changes)
    doc["signatures"] = [sig]
    return doc


def invalid(doc: Any) -> str:
    with pytest.raises(TorchsmithError) as info:
        parse_catalog(doc, "sigs.json")
    assert info.value.code == "explain-data-invalid"
    assert "\n" not in str(info.value)
    return str(info.value)


def test_the_packaged_file_validates() -> None:
    assert parse_catalog(PACKAGED).version == PACKAGED["version"]


@pytest.mark.parametrize(("doc", "message"), [
    ([], "not a torchsmith signature file"),
    ({**PACKAGED, "kind": "other"}, "not a torchsmith signature file"),
    ({**PACKAGED, "schema": 99}, "schema 99"),
    ({**PACKAGED, "signatures": []}, "non-empty list"),
    (one_signature(id="Not Kebab"), "kebab-case"),
    (one_signature(patterns=["(unclosed"]), "does not compile"),
    (one_signature(patterns=[r"(?P<x>a)(?P=x)"]), "backreference"),
    (one_signature(patterns=[], extracted=[]), "'patterns' must be a non-empty list"),
    (one_signature(cause="see {nothing}"), "placeholder {nothing}"),
    (one_signature(sources=["github issue 5"]), "is not a URL"),
    (one_signature(priority=7), "'priority' must be 1, 2 or 3"),
    (one_signature(host_facts=["gpus", "horoscope"]), "unknown host_facts horoscope"),
    (one_signature(colour="red"), "unknown field(s) colour"),
    (one_signature(near=["[unclosed"]), "near regex '[unclosed' does not compile"),
])
def test_a_bad_signature_file_is_a_one_line_error(doc: Any, message: str) -> None:
    assert message in invalid(doc)


def test_a_missing_field_is_named() -> None:
    doc = one_signature()
    del doc["signatures"][0]["fix"]
    assert "missing fix" in invalid(doc)


def test_duplicate_ids_are_rejected() -> None:
    doc = copy.deepcopy(PACKAGED)
    doc["signatures"].append(copy.deepcopy(doc["signatures"][0]))
    assert "appears twice" in invalid(doc)


def test_an_optional_fact_in_a_placeholder_needs_a_default() -> None:
    doc = one_signature(patterns=[r"first (?P<thing>\w+)", "second"], cause="it was {thing}")
    assert "needs a default" in invalid(doc)
    doc["signatures"][0]["cause"] = "it was {thing|something}"
    assert parse_catalog(doc).signatures[0].cause == "it was {thing|something}"


def test_only_a_confirmed_signature_may_cite_its_confirmation() -> None:
    doc = one_signature(patterns=["first"], cause="proved: {confirmation|the text shows it}")
    doc["signatures"][0].pop("confirmed_by", None)
    assert "names no regex group" in invalid(doc)
    doc["signatures"][0]["confirmed_by"] = ["overflow_shown"]
    assert parse_catalog(doc).signatures[0].confirmed_by == ("overflow_shown",)


def test_unreadable_and_corrupted_files_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(TorchsmithError, match="cannot read signature file"):
        load_catalog(str(tmp_path / "absent.json"))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(Path(DEFAULT_PATH).read_text(encoding="utf-8")[:500])
    with pytest.raises(TorchsmithError, match="not valid JSON") as info:
        load_catalog(str(truncated))
    assert info.value.code == "explain-data-invalid"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TorchsmithError, match="not valid JSON"):
        load_catalog(str(binary))


@pytest.mark.parametrize(("name", "raw", "value"), [
    ("driver_cuda", "11040", "11.4"),
    ("driver_cuda", "12080", "12.8"),
    ("driver_cuda", "9000", "9.0"),
    ("built_cuda", "1201", "12.1"),
    ("built_cuda", "1107", "11.7"),
    ("compiled_cudnn", "(8, 5, 0)", "8.5.0"),
    ("runtime_cudnn", "7102", "7.1.2"),
    ("runtime_cudnn", "90100", "9.1.0"),
    ("arch_list", "sm_50 sm_90 ", ["sm_50", "sm_90"]),
    ("anything", "  as is ", "as is"),
])
def test_facts_are_decoded(name: str, raw: str, value: Any) -> None:
    assert normalise_fact(name, raw) == value


def test_placeholders_use_facts_then_defaults() -> None:
    template = "GPU {arch|unknown}, list {arch_list|none}, {companion_version|} done"
    assert render_text(template, {"arch": "sm_120", "arch_list": ["sm_80", "sm_90"]}) == \
        "GPU sm_120, list sm_80 sm_90, done"
    assert render_text(template, {}) == "GPU unknown, list none, done"


GPU_HOST = Machine(
    os=OsInfo(system="linux", arch="x86_64", glibc="2.31", wsl=True, wsl_libcuda=False),
    python=PythonInfo(version="3.12.3", executable="/usr/bin/python3"),
    nvidia=NvidiaInfo(driver_version="535.104.05", driver_cuda="12.2",
                      gpus=(NvidiaGpu(index=0, name="NVIDIA GeForce RTX 5090", compute_capability="12.0"),)),
)


def test_arch_facts_compare_the_machine_with_the_build() -> None:
    text = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
            "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_80 sm_90.\n")
    (item,) = explain(text, catalog_of(KB), GPU_HOST, kb=KB)
    assert item.host_facts == ["GPU 0: NVIDIA GeForce RTX 5090 (sm_120)",
                               "Not in the build's arch list: sm_120"]
    assert item.fix[0] == PLAN_STEP.format(args="")
    assert "`torchsmith plan`" in item.fix[0] and "`torchsmith install`" in item.fix[0]


def test_a_log_from_another_machine_is_called_out() -> None:
    (item,) = explain("GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current "
                      "PyTorch installation.", catalog_of(KB), GPU_HOST, kb=KB)
    assert any("sm_61, which this machine does not have" in line for line in item.host_facts)


def test_driver_glibc_and_wsl_facts() -> None:
    lines = host_facts(["driver", "glibc", "wsl"], {"driver_cuda": "11.4", "version": "GLIBC_2.33"}, GPU_HOST)
    assert lines == [
        "NVIDIA driver 535.104.05, supports CUDA up to 12.2",
        "The log reports a driver for CUDA 11.4: the log may come from another machine or from before a "
        "driver change",
        "glibc 2.31",
        "This system's glibc 2.31 is older than the 2.33 needed",
        "WSL2: /usr/lib/wsl/lib/libcuda.so missing: install or update the NVIDIA driver on Windows",
    ]


def test_facts_absent_from_the_machine_are_said_plainly() -> None:
    bare = Machine(os=OsInfo(system="linux", arch="x86_64"))
    assert host_facts(["gpus", "driver", "toolkits", "rocm", "wsl", "apple"], {}, bare) == [
        "No NVIDIA GPU found", "No NVIDIA driver found", "No CUDA toolkit (nvcc) found",
        "No ROCm installation found",
    ]
    assert host_facts(["gpus"], {}, None) == []


def test_rocm_and_visible_device_facts() -> None:
    machine = Machine(
        rocm=RocmInfo(version="6.2.4", gpus=(AmdGpu(name="AMD Radeon RX 6700 XT", gfx="gfx1031"),),
                      hsa_override_gfx_version="10.3.0"),
        nvidia=NvidiaInfo(gpus=(NvidiaGpu(0, "A"), NvidiaGpu(1, "B")), visible=(1,)),
    )
    assert host_facts(["rocm", "visible_devices"], {}, machine) == [
        "ROCm 6.2.4", "AMD GPU: AMD Radeon RX 6700 XT (gfx1031)", "HSA_OVERRIDE_GFX_VERSION=10.3.0 is set",
        "1 of 2 GPU(s) visible: valid indexes are 0 to 0",
    ]


def test_supersedes_must_name_a_known_signature() -> None:
    assert "supersedes unknown signature 'nothing-like-this'" in invalid(
        one_signature(supersedes=["nothing-like-this"]))


@pytest.mark.parametrize(("source", "prefix"), [
    ("Torch not compiled", "Torch not compiled"),
    (r"\.so(?:\.\d+)*: undefined", ".so"),
    ("capac?i?ty", "capa"),  # an optional character ends the prefix before it
    ("foo+bar", "foo"),
    ("ab{2}", "a"),
    (r"error \(802\) : system", "error (802) : system"),
    (r"\bdepends on", ""),
    ("first|second", ""),  # top-level alternation: no common prefix
    (r"(?P<lib>libcudnn\w*\.so)", "libcudnn"),  # a leading group's own prefix
    ("(?:ab)?c", ""),  # an optional leading group
    ("(?P<x>a|b)c", ""),
    (r"(?#said)here(?: is|'s) no", "here"),  # a regex comment (a said pattern's mark) matches nothing
])
def test_literal_prefix(source: str, prefix: str) -> None:
    assert literal_prefix(source) == prefix


def test_every_needle_starts_its_patterns_matches_in_the_corpus() -> None:
    """The prefilter may only skip text where the pattern cannot match."""
    corpus = Path(__file__).parent / "corpus"
    texts = [p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.txt"))]
    catalog = catalog_of(KB)
    for sig in catalog.signatures:
        for pattern, needle in zip(sig.patterns, sig.needles):
            for text in texts:
                for match in pattern.finditer(text):
                    assert match.group(0).startswith(needle), (sig.id, pattern.pattern)


def test_stated_facts_do_not_claim_absence() -> None:
    stated = Machine(nvidia=NvidiaInfo(gpus=(NvidiaGpu(0, "RTX 5090", compute_capability="12.0"),)))
    assert host_facts(["gpus", "driver", "toolkits"], {}, stated) == [
        "GPU 0: RTX 5090 (sm_120)", "No NVIDIA driver found", "No CUDA toolkit (nvcc) found"]
    assert host_facts(["gpus", "driver", "toolkits"], {}, stated, looked=False) == [
        "GPU 0: RTX 5090 (sm_120)"]


def test_a_long_repetitive_log_is_read_for_its_distinct_lines_with_the_same_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Needles missing from a long log's distinct lines are missing from the log: the same
    signatures fire with the shortcut as without it, at the same places."""
    from torchsmith.explain import matcher
    from torchsmith.kb import load_kb

    catalog = catalog_of(load_kb(None))
    noise = ("Epoch 3/90: 100%|##########| 391/391 [00:41<00:00, loss=1.532]\n"
             "Requirement already satisfied: numpy in ./.venv/lib/python3.12/site-packages (2.3.5)\n")
    log = (noise * 9000 + "ImportError: libcudart.so.11.0: cannot open shared object file: No such file\n"
           + noise * 9000 + "RuntimeError: CUDA error: no kernel image is available for execution on "
           "the device\n")
    assert len(log) > matcher._REPEATS_FROM
    assert matcher._absent_needles(log, catalog)  # the shortcut is taken
    with_shortcut = [(f.signature.id, f.offset, f.facts) for f in matcher.find_signatures(log, catalog)]
    monkeypatch.setattr(matcher, "_REPEATS_FROM", len(log) + 1)
    assert not matcher._absent_needles(log, catalog)
    without = [(f.signature.id, f.offset, f.facts) for f in matcher.find_signatures(log, catalog)]
    assert with_shortcut == without and len(without) >= 2


def test_a_signature_fired_only_by_extracted_facts_needs_no_pattern() -> None:
    doc = one_signature(patterns=[], extracted=["conda:platform"], cause="{package|x} on {subdir|y}")
    (sig,) = parse_catalog(doc).signatures
    assert sig.patterns == () and sig.triggers == ("conda:platform",)
