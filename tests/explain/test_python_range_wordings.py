"""A locker's own words for a project whose declared Python range is wider than a dependency's:
poetry's header (src/poetry/mixology/failure.py, printed only for a PythonCause among the failure's
incompatibilities) and uv's RequiresPython hint (crates/uv-resolver/src/pubgrub/report.rs). Texts
written from those format strings, not copied from threads; with the counter-cases where the
locker's words are absent."""

from __future__ import annotations

from typing import Any, Dict

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

_POETRY = ("Updating dependencies\nResolving dependencies...\n\n"
           "The current project's {words} ({project}) is not compatible with some of the required "
           "packages Python requirement:\n"
           "  - {package} requires Python {needs}, so it will not be {verb} for Python {left}\n\n"
           "Because demo depends on {package} ({version}) which requires Python {needs}, version "
           "solving failed.\n")

_UV = ("  × No solution found when resolving dependencies for split\n"
       "  (markers: python_full_version >= '3.14'):\n"
       "  ╰─▶ Because the requested Python version (>=3.10) does not satisfy Python>=3.9,<3.14 and\n"
       "      triton==3.4.0 depends on Python>=3.9,<3.14, we can conclude that triton==3.4.0 cannot\n"
       "      be used.\n"
       "      And because torch==2.8.0 depends on triton==3.4.0 and your project depends on torch==2.8.0,\n"
       "      we can conclude that your project's requirements are unsatisfiable.\n\n"
       "      hint: {hint} (>=3.10) includes Python versions that are not supported by your dependencies\n"
       "      (e.g., triton==3.4.0 only supports >=3.9, <3.14). Consider using a more restrictive\n"
       "      `requires-python` value (like >=3.9, <3.14).\n")


def _facts(text: str) -> Dict[str, Any]:
    report = explain_report(text, CATALOG, kb=KB)
    return next(e.facts for e in report.explanations if e.signature.id == "project-python-range-open-ended")


def test_poetrys_header_is_a_project_range_wider_than_a_dependency_in_both_of_its_wordings() -> None:
    for words, verb in (("supported Python range", "installable"), ("Python requirement", "satisfied")):
        text = _POETRY.format(words=words, project=">=3.8", package="torch", needs=">=3.9.0",
                              verb=verb, left=">=3.8,<3.9.0", version="2.6.0")
        assert stated(text) == ["project-python-range-open-ended"]
        facts = _facts(text)
        shown = (facts["project_range"], facts["package"], facts["package_python"])
        assert shown == (">=3.8", "torch", ">=3.9.0")


def test_uvs_requires_python_hint_wrapped_as_printed_explains_the_pin_conflict_it_derives() -> None:
    for hint in ("The `requires-python` value", "The `Requires-Python` requirement"):
        text = _UV.format(hint=hint)
        assert stated(text) == ["project-python-range-open-ended"]
        assert _facts(text)["package"] == "triton"


def test_without_the_lockers_python_words_a_failed_solve_is_not_the_python_range() -> None:
    # poetry's plain failure (no PythonCause: no header) and uv's derivation without its hint
    poetry = ("Because demo depends on torch (9.9.9) which doesn't match any versions, "
              "version solving failed.\n")
    uv = _UV.format(hint="").split("      hint:")[0]
    for text in (poetry, uv):
        assert "project-python-range-open-ended" not in stated(text)
    # a package's own Requires-Python refusal for the running interpreter is another cause
    pip = "ERROR: Package 'demo' requires a different Python: 3.8.10 not in '>=3.9'\n"
    assert stated(pip) == ["package-python-version-unsupported"]
