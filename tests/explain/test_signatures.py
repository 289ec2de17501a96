"""Every signature against verbatim error texts from public reports, and texts that must not match.

Corpus files (tests/explain/corpus/<signature-id>--<n>.txt) start with header lines:
``# source: URL`` (where the text was published), ``# fact: name=value`` (a fact the match must
carry), ``# also: other-id`` (another signature the text legitimately shows).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from torchsmith.explain import catalog_of, find_signatures
from torchsmith.explain.catalog import HOST_FACT_KINDS
from torchsmith.explain.host import _RENDER
from torchsmith.explain.matcher import Found, explain_report
from torchsmith.kb import load_kb

HERE = Path(__file__).parent
CORPUS = sorted((HERE / "corpus").glob("*.txt"))
NEGATIVE = sorted((HERE / "negative").glob("*.txt"))
KB = load_kb(packaged_only=True)
CATALOG = catalog_of(KB)
# Signatures the channel/installer/loader facts extract() reads fire (some have no pattern of their own).
_FACT_TRIGGERS = ("conda:", "installer:", "library:", "env:optional-dependency", "env:torch-sees-no-gpu")
TRIGGERED_ONLY = {sig.id for sig in CATALOG.signatures
                  if not sig.patterns or any(t.startswith(_FACT_TRIGGERS) for t in sig.triggers)}


def recognised(text: str) -> List[Found]:
    """What explain finds: the patterns, plus the signatures only extracted facts fire."""
    found = find_signatures(text, CATALOG)
    seen = {f.signature.id for f in found}
    report = explain_report(text, CATALOG, kb=KB)
    found.extend(Found(e.signature, 0, 0, e.line, e.excerpt, dict(e.facts)) for e in report.explanations
                 if e.signature.id in TRIGGERED_ONLY and e.signature.id not in seen)
    return found


def stated(text: str) -> List[str]:
    """The causes and families explain states for the text, in its order."""
    return [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]


def read_sample(path: Path) -> Tuple[Dict[str, List[str]], str]:
    """Header fields and the verbatim text after them."""
    headers: Dict[str, List[str]] = {}
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    body_start = 0
    for body_start, line in enumerate(lines):  # noqa: B007
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        headers.setdefault(key.strip(), []).append(value.strip())
    else:
        body_start = len(lines)
    return headers, "".join(lines[body_start:])


def test_packaged_catalog_has_at_least_30_signatures_with_sources() -> None:
    ids = [s.id for s in CATALOG.signatures]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)
    for sig in CATALOG.signatures:
        assert sig.sources, sig.id
        assert all(url.startswith("https://") for url in sig.sources), sig.id


def test_every_signature_is_tested_on_a_real_text() -> None:
    covered = {path.name.split("--")[0] for path in CORPUS}
    missing = sorted({s.id for s in CATALOG.signatures} - covered)
    assert not missing, f"signatures without a verbatim sample: {missing}"
    unknown = sorted(covered - {s.id for s in CATALOG.signatures})
    assert not unknown, f"corpus files for no signature: {unknown}"


def test_every_corpus_sample_cites_its_source() -> None:
    for path in CORPUS:
        headers, body = read_sample(path)
        assert headers.get("source"), path.name
        assert all(url.startswith("https://") for url in headers["source"]), path.name
        assert body.strip(), path.name


def test_every_host_fact_kind_has_a_renderer() -> None:
    assert set(_RENDER) == set(HOST_FACT_KINDS)


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_sample_is_recognised_with_its_facts(path: Path) -> None:
    headers, text = read_sample(path)
    expected: Set[str] = {path.name.split("--")[0], *headers.get("also", [])}
    found = recognised(text)
    assert {f.signature.id for f in found} == expected
    match = next(f for f in found if f.signature.id == path.name.split("--")[0])
    for fact in headers.get("fact", []):
        name, _, value = fact.partition("=")
        actual = match.facts.get(name)
        if isinstance(actual, list):
            actual = " ".join(actual)
        assert actual == value, f"{path.name}: fact {name}"
    # The excerpt is the text's own line where the match starts.
    assert match.excerpt
    assert match.excerpt.rstrip("…").lstrip("…") in text.splitlines()[match.line - 1].strip()


@pytest.mark.parametrize("path", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_healthy_output_matches_nothing(path: Path) -> None:
    _, text = read_sample(path)
    assert text.strip()
    assert find_signatures(text, CATALOG) == []


def test_a_log_with_several_errors_lists_all_root_cause_first() -> None:
    parts = [
        "Collecting torch\nSuccessfully installed torch-2.6.0\n",
        read_sample(HERE / "corpus" / "nccl-system-error--1.txt")[1],  # priority 3, line 3
        read_sample(HERE / "corpus" / "no-kernel-image--1.txt")[1],  # priority 2
        read_sample(HERE / "corpus" / "arch-not-compiled--2.txt")[1],  # priority 1, after the others
    ]
    log = "".join(parts)
    found = find_signatures(log, CATALOG)
    # the capability warning's patterns also belong to gpu-too-old-for-torch (its confirmation decides)
    assert [f.signature.id for f in found] == [
        "arch-not-compiled", "gpu-too-old-for-torch", "no-kernel-image", "nccl-system-error"]
    lines = log.splitlines()
    for item in found:
        assert item.excerpt in lines[item.line - 1]
    assert found[3].line == 3


def test_equal_priority_matches_keep_log_order() -> None:
    log = ("step 1\nRuntimeError: CUDA error: invalid device ordinal\n"
           "later\nOSError: CUDA_HOME environment variable is not set. Please set it.\n")
    found = find_signatures(log, CATALOG)
    assert [(f.signature.id, f.line) for f in found] == [
        ("invalid-device-ordinal", 2), ("cuda-home-not-set", 4)]


def test_binary_garbage_is_not_recognised_and_does_not_crash() -> None:
    rng = random.Random(6)
    raw = bytes(rng.randrange(256) for _ in range(200_000))
    text = raw.decode("utf-8", errors="replace")
    assert find_signatures(text, CATALOG) == []


def test_an_error_inside_binary_noise_is_found_on_its_line() -> None:
    rng = random.Random(7)
    noise = bytes(rng.choice([b for b in range(256) if b != 0x0A]) for _ in range(5000))
    raw = noise + b"\n\x00\x01 AssertionError: Torch not compiled with CUDA enabled\x1b[0m\n" + noise
    found = find_signatures(raw.decode("utf-8", errors="replace"), CATALOG)
    # the message is also code-hardcodes-cuda's pattern (its confirmation, an +xpu torch, decides)
    assert [f.signature.id for f in found] == ["torch-not-compiled-with-cuda", "code-hardcodes-cuda"]
    assert found[0].line == 2
    assert found[0].excerpt == "AssertionError: Torch not compiled with CUDA enabled"


def test_a_10_mb_log_is_scanned_whole(tmp_path: Path) -> None:
    """Correctness on a big log; the time target lives in bench/explain_bench.py."""
    line = "2026-11-20 10:02:31 INFO step 1234 loss=0.5321 lr=3e-4 tokens/s=181234 gpu_mem=7.81GiB\n"
    count = 10 * 1024 * 1024 // len(line)
    log = line * count + "RuntimeError: The NVIDIA driver on your system is too old (found version 12020).\n"
    found = find_signatures(log, CATALOG)
    assert [f.signature.id for f in found] == ["driver-too-old"]
    assert found[0].line == count + 1
    assert found[0].facts == {"driver_cuda": "12.2"}


def test_a_very_long_line_gives_a_short_excerpt_around_the_match() -> None:
    text = "x" * 5000 + " RuntimeError: CUDA error: device-side assert triggered " + "y" * 5000
    (found,) = find_signatures(text, CATALOG)
    assert "device-side assert triggered" in found.excerpt
    assert len(found.excerpt) <= 250


def test_related_findings_are_codes_that_doctor_or_plan_emit() -> None:
    """`related_finding` links an explanation to the doctor finding (or plan rejection) it matches."""
    src = HERE.parents[1] / "src" / "torchsmith"
    emitted = "".join(p.read_text(encoding="utf-8")
                      for folder in ("doctor", "plan") for p in sorted((src / folder).rglob("*.py")))
    for sig in CATALOG.signatures:
        if sig.related_finding is not None:
            assert f'"{sig.related_finding}"' in emitted, sig.id


def test_docs_list_every_signature() -> None:
    docs = (HERE.parents[1] / "docs" / "explain.md").read_text(encoding="utf-8")
    missing = [s.id for s in CATALOG.signatures if f"| `{s.id}` |" not in docs]
    assert not missing, f"add to docs/explain.md: {missing}"


def test_a_build_isolation_error_is_not_also_called_a_wrong_interpreter() -> None:
    _, build = read_sample(HERE / "corpus" / "build-isolation-hides-torch--3.txt")
    (found,) = find_signatures(build, CATALOG)
    assert found.signature.id == "build-isolation-hides-torch"
    assert found.excerpt == "ModuleNotFoundError: No module named 'torch'"
    assert found.line == 6
    # The same error outside a build still means another interpreter.
    later = build + "\n$ python train.py\nModuleNotFoundError: No module named 'torch'\n"
    assert [f.signature.id for f in find_signatures(later, CATALOG)] == [
        "build-isolation-hides-torch", "no-module-named-torch"]


def test_near_context_must_be_close_to_the_match() -> None:
    far = ("File \"/tmp/pip-build-env-abc/overlay/x.py\"\n" + "ok\n" * 20
           + "ModuleNotFoundError: No module named 'torch'\n")
    assert [f.signature.id for f in find_signatures(far, CATALOG)] == ["no-module-named-torch"]
