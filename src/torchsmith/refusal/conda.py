"""conda's, mamba's and pixi's (rattler's) refusals, read in the forms their solvers write them.

- libsolv's problem rules (openSUSE/libsolv@30fc1a2515f292933d08451055a2c901d6ccb634 src/problems.c),
  which conda-libmamba-solver and mamba print under "Encountered problems while solving:": "nothing
  provides {dep} needed by {pkg}", "nothing provides requested {dep}", "package {pkg} requires {dep}, but
  none of the providers can be installed", "package {pkg} has constraint {dep} conflicting with {pkg}".
- libmamba's problem tree (mamba-org/mamba@0118b8be18a7e8ba670970d00bf15cc8fa1b8c3a
  libmamba/src/solver/problems_graph.cpp, ``TreeExplainer``): "The following packages are incompatible",
  then one node a line under "├─ "/"└─ "/"│  " indents: "{pkg} is requested and can be installed",
  "{pkg} is not installable because it requires", "{pkg} would require", "{pkg}, which requires",
  "{pkg}, which does not exist (perhaps a missing channel)", "__cuda is missing on the system", ...
- resolvo's conflict tree, which pixi and py-rattler print
  (prefix-dev/resolvo@0ca6a0b3e5d55b5a9fa4a49538cbf5acb6634097 src/conflict.rs, ``DisplayUnsat``):
  "{req} can be installed with any of the following options:", "{candidate} would require",
  "{req}, for which no candidates were found.", "No candidates were found for {req}.",
  "{candidate} would constrain", "{candidate} is excluded because {reason}", ...
- conda's own solver (conda/conda@9c644e1e92ad349a30f2fd956c0b2388b6a3129b conda/exceptions.py,
  ``UnsatisfiableError``): "Package {dep} conflicts for:" then chains "a -> b[version='>=1'] -> c",
  "feature:/linux-64::__glibc==2.17=0" for what the system has; ``PackagesNotFoundError``'s list.
In both trees a requirement's asker is the nearest node above it that requires. Pure: no I/O."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from torchsmith.refusal.model import Have, Missing, Offer, Requirement, clean, package

__all__ = ["read"]

_WORDS = ("Unsatisfiable", "Encountered problems while solving", "nothing provides", "Could not solve",
          "LibMamba", "The following packages are incompatible",
          "The following package could not be installed",
          "Found conflicts", "PackagesNotFoundError", "Cannot solve the request", "No candidates were found",
          "missing in current")
_RESOLVO = ("Cannot solve the request", "any of the following options", "for which no candidates were found",
            "No candidates were found for", " would constrain")
_LIBSOLV = (
    (re.compile(r"nothing provides requested (?P<what>[^\n]+?)\s*$", re.MULTILINE), "request"),
    (re.compile(r"nothing provides (?P<what>[^\n]+?) needed by (?P<who>\S+?)(?:`|\s|$)", re.MULTILINE),
     "needs"),
    (re.compile(r"package (?P<who>\S+) requires (?P<what>[^\n]+?), "
                r"but none of the providers can be installed"), "needs"),
    (re.compile(r"package (?P<who>\S+) has constraint (?P<what>[^\n]+?) conflicting with (?P<have>\S+)"),
     "constraint"),
)
# (how a tree node ends, what it is): "req" a requirement of the node above that requires, "asks"
# a node whose children are its requirements, "missing" a requirement nothing provides.
_NODES = (
    (" is not installable because it conflicts with any installable versions previously reported", "req"),
    (", which conflicts with any installable versions previously reported", "req"),
    (" conflicts with any installable versions previously reported", "req"),
    (" is requested and can be installed", "req"),
    (" is installable and it requires", "req asks"),
    (" is not installable because it requires", "req asks"),
    (", which requires", "req asks"),
    (" is installable with the potential options", "req"),
    (" is not installable because there are no viable options", "req"),
    (" with the potential options", "req"),
    (" but there are no viable options", "req"),
    (", which can be installed (as previously explained)", "req"),
    (", which cannot be installed (as previously explained)", "req"),
    (", which can be installed with any of the following options", "req"),
    (" can be installed with any of the following options", "req"),
    (", which cannot be installed because there are no viable options", "req"),
    (" cannot be installed because there are no viable options", "req"),
    (", which can be installed", "req"),
    (", which does not exist (perhaps a missing channel)", "req missing"),
    (" does not exist (perhaps a typo or a missing channel)", "req missing"),
    (", for which no candidates were found", "req missing"),
    (", which is missing on the system", "req"),
    (" is missing on the system", "req"),
    (" would require", "asks"),
    (" would constrain", "asks"),
    (" is locked, but another version is required as reported above", "have"),
    (", which conflicts with the versions reported above", "offer"),
)
_TREE_START = re.compile(r"The following packages? (?:are incompatible|could not be installed)|"
                         r"Cannot solve the request because of:")
_BRANCH = re.compile(r"[├└]─ ")
_CHAIN = re.compile(r"^\s*(?:-\s+)?(?P<chain>[^\s>-][^\s]*(?: -> [^\s]+)+)\s*$", re.MULTILINE)
_FEATURE = re.compile(r"feature:[|@]*/[\w-]+::(?P<name>__\w+)==(?P<version>[^=\s]+)")
_YOUR = re.compile(r"Your (?:python: python=(?P<python>\S+)|installed CUDA driver is: (?P<cuda>\S+))")
_MISSING_BLOCK = re.compile(
    r"(?:PackagesNotFoundError|packages are not available from current channels|"
    # conda 4.2/4.3 (conda/exceptions.py): "Package(s) missing in current [osx-64 ]channels:"
    r"Packages? missing in current (?:[\w-]+ )?channels:|"
    r"The following packages are (?:missing|not available))[^\n]*\n"
    r"(?P<block>(?:[ \t]*\n|[ \t]*-[ \t]*\S[^\n]*\n?){1,20})"
)


def _built(said: str) -> Tuple[str, str]:
    """``cudatoolkit-11.0.3-h15472ef_6`` -> (``cudatoolkit``, ``11.0.3``)."""
    parts = said.rsplit("-", 2)
    return (package(parts[0]), parts[1]) if len(parts) == 3 else (package(said), "")


def _spec(said: str) -> Tuple[str, str]:
    """``__cuda >=11.0`` -> (``__cuda``, ``>=11.0``); ``python[version='>=3.6']`` -> (python, >=3.6)."""
    said = re.sub(r"^[^\s:]*::", "", clean(said))
    match = re.match(r"(?P<name>[A-Za-z0-9_][\w.-]*)(?P<rest>.*)$", said)
    if match is None:
        return "", ""
    rest = match.group("rest").strip()
    version = re.match(r"\[version='(?P<v>[^']*)'(?P<more>[^\]]*)\]", rest)
    if version:
        rest = (version.group("v") + " " + version.group("more").strip(", ")).strip()
    return package(match.group("name")), rest


def _libsolv(text: str, installer: str) -> Tuple[List[Requirement], List[Have], List[Missing]]:
    needs: List[Requirement] = []
    have: List[Have] = []
    missing: List[Missing] = []
    for pattern, kind in _LIBSOLV:
        for match in pattern.finditer(text):
            what, spec = _spec(match.group("what"))
            if kind == "request":
                needs.append(Requirement(installer, "", "", what, spec, "", "", clean(match.group("what"))))
                missing.append(Missing(installer, clean(match.group("what"))))
                continue
            who, version = _built(match.group("who"))
            needs.append(Requirement(installer, who, version, what, spec, "", match.group("who"),
                                     clean(match.group("what"))))
            if kind == "constraint":
                name, built = _built(match.group("have"))
                have.append(Have(installer, name, built, match.group("have")))
    return needs, have, missing


def _node(line: str) -> Tuple[str, str]:
    """(the package or requirement a tree line names, what the line is)."""
    said = line.strip().rstrip(".;:").strip()
    if said.startswith("No candidates were found for "):
        return said[len("No candidates were found for "):], "req missing"
    if said.startswith("the constraint ") and said.endswith(" cannot be fulfilled"):
        return said[len("the constraint "):-len(" cannot be fulfilled")], "req"
    if " is excluded because " in said:
        return said, "offer"
    for ending, kind in _NODES:
        if said.endswith(ending):
            return said[:-len(ending)].strip(), kind
    return said, ""


def _tree_lines(text: str) -> List[Tuple[int, str]]:
    """(depth, node) of each line of the solver's tree; depth 0 for a line without a branch."""
    lines: List[Tuple[int, str]] = []
    read_from = -1
    for start in _TREE_START.finditer(text):
        if start.start() < read_from:
            continue  # "Cannot solve the request because of: The following packages are incompatible"
        read_from = text.find("\n", start.end())
        base: Optional[int] = None
        for line in text[start.end():].split("\n")[1:]:
            branch = _BRANCH.search(line)
            if branch is None:
                if line.strip() and not re.match(r"^[\s│]*$", line) and not lines:
                    lines.append((0, line.strip()))
                    continue
                break
            base = branch.start() if base is None else min(base, branch.start())
            lines.append(((branch.start() - base) // 3 + 1, line[branch.end():]))
        inline = text[start.end():].split("\n", 1)[0].strip()
        if inline and not inline.startswith("The following"):
            lines.insert(0, (0, inline))
    return lines


def _candidate(said: str) -> Tuple[str, str, str]:
    """(name, versions, as said) of a tree's package: resolvo lists the versions it merged with " | ",
    each version once per build (``jaxlib 0.4.23 | 0.4.23``)."""
    name, versions = _spec(said)
    versions = " | ".join(dict.fromkeys(v.strip() for v in versions.split(" | ")))
    return name, versions, f"{said.split(' ', 1)[0]} {versions}".strip()


def _tree(text: str, installer: str) -> Tuple[List[Requirement], List[Have], List[Missing], List[Offer]]:
    needs: List[Requirement] = []
    have: List[Have] = []
    missing: List[Missing] = []
    offers: List[Offer] = []
    askers: List[Tuple[int, str, str, str]] = []  # (depth, name, version, as said)
    for depth, line in _tree_lines(text):
        said, kind = _node(line)
        askers = [a for a in askers if a[0] < depth]
        if " would require " in said:  # a candidate and its requirement pasted onto one line
            candidate, said = said.split(" would require ", 1)
            askers.append((depth, *_candidate(candidate)))
        name, spec = _spec(said)
        if not name:
            continue
        if "req" in kind:
            who = askers[-1] if askers else (0, "", "", "")
            needs.append(Requirement(installer, who[1], who[2], name, spec, "", who[3], said))
        if "missing" in kind:
            missing.append(Missing(installer, said))
        if "asks" in kind:
            askers.append((depth, *_candidate(said)))
        if kind == "have":
            have.append(Have(installer, name, spec, said))
        if kind == "offer" or (not kind and depth and " " in said):  # a candidate the channel had
            offers.append(Offer(installer, name, line.strip().rstrip(".;:")))
    return needs, have, missing, offers


def _chains(text: str, installer: str) -> Tuple[List[Requirement], List[Have]]:
    needs: List[Requirement] = []
    for match in _CHAIN.finditer(text):
        links = match.group("chain").split(" -> ")
        if any(link.startswith("feature:") for link in links):
            continue
        who, who_version, who_said = "", "", ""
        for link in links:
            what, spec = _spec(link)
            needs.append(Requirement(installer, who, who_version, what, spec, "", who_said, clean(link)))
            who, who_version, who_said = what, spec, clean(link)
    have = [Have(installer, package(m.group("name")), m.group("version"), m.group(0))
            for m in _FEATURE.finditer(text)]
    for match in _YOUR.finditer(text):
        name = "python" if match.group("python") else "__cuda"
        have.append(Have(installer, name, match.group("python") or match.group("cuda"), match.group(0)))
    return needs, have


def _not_available(text: str, installer: str) -> List[Missing]:
    return [Missing(installer, clean(line.strip()[1:])) for block in _MISSING_BLOCK.finditer(text)
            for line in block.group("block").splitlines() if line.strip().startswith("-")]


def read(text: str) -> Tuple[List[Requirement], List[Have], List[Missing], List[Offer]]:
    """(requirements, what the system has, what no channel has, what was offered) of the solvers' words."""
    if not any(word in text for word in _WORDS):
        return [], [], [], []
    installer = "rattler" if any(word in text for word in _RESOLVO) else "conda"
    needs, have, missing = _libsolv(text, installer)
    tree = _tree(text, installer)
    chained, system = _chains(text, installer)
    return (needs + tree[0] + chained, have + tree[1] + system,
            _not_available(text, installer) + missing + tree[2], tree[3])
