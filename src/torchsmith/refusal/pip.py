"""pip's refusals, read in the forms pip writes them.

From pypa/pip@0179718a94882eddf835e86e0bd0163508e5044b:
- src/pip/_internal/resolution/resolvelib/factory.py ``get_installation_error``: "Cannot install ...
  because these package versions have conflicting dependencies." then "The conflict is caused by:"
  and one line per cause, "{parent.name} {parent.version} depends on {req}" or "The user requested
  {req}", then "The user requested (constraint) {name}{spec}";
  ``_report_single_requirement_conflict``: "Could not find a version that satisfies the requirement
  {req} (from {parent}) (from versions: ...)", "No matching distribution found for {req}";
  ``_report_requires_python_error``: "Package 'x' requires a different Python: 3.8.10 not in '>=3.9'";
  and before "Could not find ...", "Ignored the following versions that require a different python
  version: 1.0 Requires-Python >=3.99; ...".
- src/pip/_internal/resolution/resolvelib/requirements.py ``format_for_error``: a range's parts are
  joined by ", " and a last " and " (``torch<2.0 and >=1.8``); an unavailable one is "x (unavailable)".
- src/pip/_internal/commands/install.py ``_warn_about_conflicts``: "{name} {version} requires {req},
  but you have {dep} {version} which is incompatible." and "... requires {req}, which is not installed."
- its progress lines, "Collecting beta>=2 (from alpha==1.0)", say who asked for a package.
Pure: no I/O."""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from torchsmith.kb.pkgmeta import canonical
from torchsmith.refusal.model import Have, Missing, Offer, Requirement, clean, split_requirement

__all__ = ["read"]

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_LIST_WORDS = ("The conflict is caused by", "conflicting dependencies", "The user requested ")
_DEPENDS = re.compile(rf"^\s*(?P<who>{_NAME}) (?P<version>\S+) depends on (?P<req>[^\n]+?)\s*$", re.MULTILINE)
_USER = re.compile(r"^\s*The user requested (?P<constraint>\(constraint\) )?(?P<req>[^\n]+?)\s*$",
                   re.MULTILINE)
_EXPLICIT = re.compile(rf"^(?P<name>{_NAME}) (?P<version>\d\S*) \(from ")
_INSTALLED = re.compile(
    rf"^\W*(?P<who>{_NAME}) (?P<version>\S+) (?:requires|has requirement) (?P<req>[^\n]+?), "
    rf"(?:but you(?:'ll)? have (?P<have>{_NAME}) (?P<have_version>\S+) which is incompatible"
    r"|which is not installed)", re.MULTILINE)
_PYTHON_ONE = re.compile(r"Package '(?P<who>[^']+)' requires a different Python: (?P<have>\S+) not in "
                         r"'(?P<spec>[^']*)'")
_PYTHON_MANY = re.compile(rf"^'(?P<spec>[^']*)' \(required by (?P<who>{_NAME}) (?P<version>\S+)\)",
                          re.MULTILINE)
_PYTHON_HAVE = re.compile(r"Packages require a different Python\. (?P<have>\S+) not in:")
_NO_VERSION = re.compile(r"Could not find a version that satisfies the requirement (?P<req>[^\s\n]+)"
                         r"(?P<rest>[^\n]*)")
_IGNORED = re.compile(r"Ignored the following versions that require a different python version: "
                      r"(?P<list>[^\n]*)\n[^\n]*?Could not find a version that satisfies the requirement "
                      r"(?P<req>[^\s\n]+)")
_NO_DISTRIBUTION = re.compile(r"No matching distribution found for (?P<req>[^\s\n]+)")
# A listing a log or a report cut short (no closing parenthesis) is read as far as it goes, less
# its last item, which may be cut inside a version.
_FROM_VERSIONS = re.compile(r"\(from versions: (?P<versions>[^)\n]*)(?P<closed>\))?")
_COLLECTING = re.compile(rf"^\s*Collecting (?P<req>{_NAME}[^\s(]*)[^(\n]*\(from (?P<who>{_NAME})"
                         r"(?:==(?P<version>[^\s,()>-]+))?", re.MULTILINE)


def _requirement(who: str, version: str, said: str) -> Requirement:
    said = clean(said)
    explicit = _EXPLICIT.match(said)
    if explicit:  # a candidate from a URL or file: "torch 2.0.0 (from https://...)"
        what, spec, markers = canonical(explicit.group("name")), "==" + explicit.group("version"), ""
    else:
        what, spec, markers = split_requirement(said.replace(" (unavailable)", ""))
    return Requirement("pip", canonical(who) if who else "", version, what, spec, markers,
                       f"{who} {version}".strip(), said)


def _conflict_list(text: str) -> List[Requirement]:
    if not any(word in text for word in _LIST_WORDS):
        return []
    found = [_requirement(m.group("who"), m.group("version"), m.group("req"))
             for m in _DEPENDS.finditer(text)]
    found.extend(_requirement("", "", m.group("req")) for m in _USER.finditer(text))
    return found


def _askers(text: str, needs: List[Requirement]) -> List[Requirement]:
    """Who asked for each package of the conflict, from pip's "Collecting ... (from ...)" lines, up
    the chain to what was asked for (the conflict list itself does not say)."""
    asked: Dict[str, Requirement] = {}
    for match in _COLLECTING.finditer(text):
        found = _requirement(match.group("who"), match.group("version") or "", match.group("req"))
        asked.setdefault(found.what, found)
    chained: List[Requirement] = []
    wanted = [n.who for n in needs if n.who]
    while wanted:
        parent = asked.pop(wanted.pop(0), None)
        if parent is not None and parent not in needs:
            chained.append(parent)
            wanted.append(parent.who)
    return chained


def _installed(text: str) -> Tuple[List[Requirement], List[Have]]:
    needs: List[Requirement] = []
    have: List[Have] = []
    for match in _INSTALLED.finditer(text):
        needs.append(_requirement(match.group("who"), match.group("version"), match.group("req")))
        if match.group("have"):
            said = f"{match.group('have')} {match.group('have_version')}"
            have.append(Have("pip", canonical(match.group("have")), match.group("have_version"), said))
    return needs, have


def _python(text: str) -> Tuple[List[Requirement], List[Have]]:
    needs: List[Requirement] = []
    have: List[Have] = []
    for match in _PYTHON_ONE.finditer(text):
        needs.append(Requirement("pip", canonical(match.group("who")), "", "python", match.group("spec"),
                                 "", match.group("who"), f"Python{match.group('spec')}"))
        have.append(Have("pip", "python", match.group("have"), f"Python {match.group('have')}"))
    for match in _IGNORED.finditer(text):  # versions the index had, each for another Python
        name = split_requirement(match.group("req"))[0]
        for version, spec in re.findall(r"(\S+) Requires-Python ([^;]+)", match.group("list")):
            needs.append(Requirement("pip", name, version, "python", spec.strip(), "", f"{name} {version}",
                                     f"Python{spec.strip()}"))
    if _PYTHON_HAVE.search(text):
        for match in _PYTHON_MANY.finditer(text):
            who = f"{match.group('who')} {match.group('version')}"
            needs.append(Requirement("pip", canonical(match.group("who")), match.group("version"), "python",
                                     match.group("spec"), "", who, f"Python{match.group('spec')}"))
        python = _PYTHON_HAVE.search(text)
        if python:
            have.append(Have("pip", "python", python.group("have"), f"Python {python.group('have')}"))
    return needs, have


def _not_found(text: str) -> Tuple[List[Missing], List[Offer]]:
    missing: List[Missing] = []
    offers: List[Offer] = []
    for match in _NO_VERSION.finditer(text):
        versions = _FROM_VERSIONS.search(match.group("rest"))
        listed = versions.group("versions").strip() if versions else "none"
        if versions and not versions.group("closed"):
            listed = listed.rpartition(",")[0].strip()
        if listed in ("", "none"):
            missing.append(Missing("pip", clean(match.group("req"))))
            continue
        missing.append(Missing("pip", clean(match.group("req")), tuple(v.strip() for v in listed.split(","))))
        name = split_requirement(match.group("req"))[0]
        offers.append(Offer("pip", name, f"{name} versions: {listed}"))
    missing.extend(Missing("pip", clean(m.group("req"))) for m in _NO_DISTRIBUTION.finditer(text))
    return missing, offers


def read(text: str) -> Tuple[List[Requirement], List[Have], List[Missing], List[Offer]]:
    """(requirements, what is installed, what no index has, what the index offered) of pip's words."""
    listed = _conflict_list(text)
    after, installed = _installed(text)
    python, interpreter = _python(text)
    missing, offers = _not_found(text)
    needs = [r for r in listed if r.who]
    requirements = needs + _askers(text, needs) + after + python + [r for r in listed if not r.who]
    return requirements, installed + interpreter, missing, offers
