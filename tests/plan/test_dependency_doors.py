"""Dead ends that come from a dependency: the door names what it needs (plan/doors.py,
plan/transitive.py), and pip's refusal names who asked for the package that pins torch
(plan/conflict_words.py)."""

from __future__ import annotations

from tests.plan.plan_hosts import host
from tests.plan.test_transitive import H100, KB, _real

from torchsmith.plan.conflict_words import conflict_lines, parse_failure
from torchsmith.plan.model import Request
from torchsmith.plan.resolve import resolve

# pip 23.2.1's own output (pip install --dry-run against the local test index of tests/plan/test_confirm.py:
# alpha 1.0 -> beta>=2 -> torch==2.4.0, with torch==2.6.0+cu126 asked for).
PIP_CHAIN = """Looking in indexes: http://127.0.0.1:37949/simple/, http://127.0.0.1:37949/pytorch/cu126/
Collecting torch==2.6.0+cu126
  Downloading http://127.0.0.1:37949/pytorch/cu126/torch-2.6.0%2Bcu126-py3-none-any.whl (935 bytes)
Collecting alpha==1.0
  Downloading http://127.0.0.1:37949/simple/alpha-1.0-py3-none-any.whl (890 bytes)
Collecting beta>=2 (from alpha==1.0)
  Downloading http://127.0.0.1:37949/simple/beta-2.0-py3-none-any.whl (881 bytes)
INFO: pip is looking at multiple versions of beta to determine which version is compatible with other \
requirements. This could take a while.

The conflict is caused by:
    The user requested torch==2.6.0+cu126
    beta 2.0 depends on torch==2.4.0

ERROR: Cannot install alpha and torch==2.6.0+cu126 because these package versions have conflicting \
dependencies.
"""


def _whisperx(python: str, *pyannote: str) -> object:
    request = Request(requirements=("whisperx",), explicit=True,
                      published=(_real("whisperx-3.4.2"), *(_real(f"pyannote_audio-{v}") for v in pyannote)))
    return resolve(host(**{**H100, "python": python}), request, KB)  # type: ignore[arg-type]


def test_a_dependency_that_needs_a_newer_python_gets_a_python_door() -> None:
    plan = _whisperx("3.9", "4.0.0")
    assert not plan.ok  # type: ignore[attr-defined]
    door = plan.alternatives[0]  # type: ignore[attr-defined]
    assert door.kind == "python" and door.command == "torchsmith plan whisperx --python 3.10"
    assert "pyannote-audio>=3.3.2 (4.0.0), which needs Python >=3.10" in door.summary
    assert _whisperx("3.10", "4.0.0").ok  # type: ignore[attr-defined]  # the door's plan stands


def test_no_python_door_where_python_is_not_what_holds_it_back() -> None:
    plan = _whisperx("3.11", "4.0.0")
    assert plan.ok  # type: ignore[attr-defined]
    # A dependency release for this Python exists (3.4.0): torch, not Python, is the limit.
    capped = resolve(host(**{**H100, "python": "3.9"}), Request(  # type: ignore[arg-type]
        requirements=("whisperx", "torch<2.5"), explicit=True,
        published=(_real("whisperx-3.4.2"), _real("pyannote_audio-3.4.0"))), KB)
    assert not any(d.kind == "python" for d in capped.alternatives)


def test_pips_refusal_names_who_asked_for_the_package_that_pins_torch() -> None:
    failure = parse_failure(PIP_CHAIN)
    assert [(n.who, n.who_version, n.what, n.spec) for n in failure.needs] == [
        ("beta", "2.0", "torch", "==2.4.0"), ("alpha", "1.0", "beta", ">=2")]
    lines = conflict_lines(failure, {"torch": "2.6.0+cu126"}, "pip install --dry-run",
                           lambda name, torch, within: ("1.0", "test") if within == "" else None)
    assert lines[0] == ("pip install --dry-run refused the whole request: beta 2.0 requires torch==2.4.0, "
                        "but the plan installs torch 2.6.0+cu126 (alpha asks for beta>=2); no release of "
                        "beta within beta>=2 whose metadata torchsmith read pairs with torch 2.6.0.")
    # Packages pip collected that play no part in the conflict are not named.
    assert "ftfy" not in str(parse_failure("Collecting ftfy (from alpha==1.0)\n" + PIP_CHAIN).needs)
