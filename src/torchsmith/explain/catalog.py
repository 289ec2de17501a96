"""The failure signatures: loaded from ``signatures.json`` and validated once.

Each signature is data: regexes with named groups for the facts they carry, a plain cause, the
fix as steps, the doctor finding it corresponds to, and the public reports where the text is
seen. A file that does not validate is a one-line :class:`TorchsmithError`, never a traceback.
"""

from __future__ import annotations

import os
import re
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    List,
    Mapping,
    Optional,
    Pattern,
    Sequence,
    Tuple,
)

from torchsmith.errors import TorchsmithError
from torchsmith.explain.checknames import (
    CONFIRMATIONS,
    CONTRADICTIONS,
    HOST_FACT_KINDS,
    KB_FACTS,
    TRIGGER_FACTS,
)
from torchsmith.explain.families import Candidate, check_family_graph, family_causes, parse_candidates
from torchsmith.explain.literals import Literals, literal_prefix, required_literals
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = [
    "CATALOG_KIND",
    "CATALOG_SCHEMA",
    "CONFIRMATIONS",
    "CONTRADICTIONS",
    "HOST_FACT_KINDS",
    "KB_FACTS",
    "Catalog",
    "Signature",
    "catalog_of",
    "literal_prefix",
    "load_catalog",
    "parse_catalog",
]

CATALOG_KIND = "torchsmith.explain-signatures"
CATALOG_SCHEMA = 1

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# "{name}" or "{name|text used when the fact is absent}"
PLACEHOLDER = re.compile(r"\{(\w+)(?:\|([^{}]*))?\}")
_REQUIRED = ("id", "title", "patterns", "cause", "fix", "sources")
_KNOWN = frozenset((*_REQUIRED, "details", "related_finding", "priority", "fix_with_plan", "host_facts",
                    "supersedes", "near", "before", "not_before", "candidates", "fix_if", "fix_instead_if",
                    "kb_facts", "contradicted_by", "confirmed_by", "extracted", "explains", "harmless"))


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    patterns: Tuple[Pattern[str], ...]  # any one matching means the signature applies
    details: Tuple[Pattern[str], ...]  # run near the match only, for facts the patterns cannot carry cheaply
    cause: str
    fix: Tuple[str, ...]
    sources: Tuple[str, ...]
    related_finding: Optional[str] = None
    priority: int = 1  # 1 root cause, 2 direct effect, 3 downstream symptom
    # A warning that stops nothing: stated only when the text shows no failure of its own.
    harmless: bool = False
    fix_with_plan: bool = False  # the fix is another torch build: point at `torchsmith plan`
    host_facts: Tuple[str, ...] = ()
    # Signatures this one explains better when its match covers theirs (dropped then).
    supersedes: Tuple[str, ...] = ()
    needles: Tuple[str, ...] = ()  # literal_prefix() of each pattern
    required: Tuple[Literals, ...] = ()  # required_literals() of each pattern
    # A match counts only if one of these also matches in the lines around it.
    near: Tuple[Pattern[str], ...] = ()
    # ... and only if the same line before the match matches one of ``before`` (when given) and
    # none of ``not_before``: which library a symbol is missing from, for instance.
    before: Tuple[Pattern[str], ...] = ()
    not_before: Tuple[Pattern[str], ...] = ()
    # When the text cannot prove one cause: each candidate (its id, cause, and the check that tells it apart).
    candidates: Tuple[Candidate, ...] = ()
    # Steps that go first when the match carries a fact (e.g. a +cpu torch under a CUDA extension).
    fix_if: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # Steps that replace `fix` when the match carries a fact (the usual fix is wrong then).
    fix_instead_if: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    kb_facts: Tuple[str, ...] = ()
    # Checks of the text's facts that, when they hold, disprove this signature's cause.
    contradicted_by: Tuple[str, ...] = ()
    # Checks of which one must hold for the cause to be stated (a weak trigger needs evidence).
    confirmed_by: Tuple[str, ...] = ()
    # Extracted facts that state this failure however the text words it (explain.triggers).
    triggers: Tuple[str, ...] = ()
    # Effects this root cause accounts for: dropped from the answer wherever they occur.
    explains: Tuple[str, ...] = ()

    @property
    def groups(self) -> Tuple[str, ...]:
        names: List[str] = []
        for pattern in self.patterns + self.details:
            names.extend(n for n in pattern.groupindex if n not in names)
        return tuple(names)


@dataclass(frozen=True)
class Catalog:
    signatures: Tuple[Signature, ...]
    version: str
    path: str

    def get(self, signature_id: str) -> Optional[Signature]:
        return next((s for s in self.signatures if s.id == signature_id), None)

    def family_causes(self) -> Dict[str, FrozenSet[str]]:
        """Each family's candidate ids, with those of the families among them (explain.families)."""
        return family_causes(_family_graph(self.signatures))


def _invalid(where: str, problem: str) -> TorchsmithError:
    return TorchsmithError(
        f"{where}: {problem}",
        code="explain-data-invalid",
        hint="reinstall torchsmith, or fix the file given with --signatures",
    )


def _strings(value: Any, where: str, field: str, *, allow_empty: bool = False) -> Tuple[str, ...]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise _invalid(where, f"'{field}' must be a {'' if allow_empty else 'non-empty '}list of strings")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise _invalid(where, f"'{field}' must hold only non-empty strings")
    return tuple(value)


def _compile(texts: Sequence[str], where: str, field: str) -> Tuple[Pattern[str], ...]:
    compiled = []
    for text in texts:
        if "(?P=" in text:
            raise _invalid(where, f"{field} regex {text!r} uses a backreference (too slow on big logs)")
        try:
            compiled.append(re.compile(text, re.MULTILINE))
        except re.error as exc:
            raise _invalid(where, f"{field} regex {text!r} does not compile: {exc}") from exc
    return tuple(compiled)


def _check_placeholders(sig: Signature, where: str) -> None:
    """Every ``{name}`` must be a fact the signature can extract; optional facts need a default."""
    in_every_pattern = set(sig.patterns[0].groupindex) if sig.patterns else set()
    for pattern in sig.patterns[1:]:
        in_every_pattern &= set(pattern.groupindex)
    known = (set(sig.groups) | set(sig.kb_facts) | (TRIGGER_FACTS if sig.triggers else set())
             | ({"confirmation"} if sig.confirmed_by else set()))  # the evidence that confirmed it
    conditional = sig.fix_if + sig.fix_instead_if
    unknown_facts = [name for name, _ in conditional if name not in known]
    if unknown_facts:
        raise _invalid(where, f"fix_if names {unknown_facts[0]!r}, which this signature cannot carry")
    # A conditional step is used only when its fact is there.
    plain = (sig.cause, *sig.fix, *(t for c in sig.candidates for t in (c.cause, c.check)))
    texts = [(text, in_every_pattern) for text in plain]
    texts.extend((step, in_every_pattern | {name}) for name, steps in conditional for step in steps)
    for text, present in texts:
        for match in PLACEHOLDER.finditer(text):
            name, default = match.group(1), match.group(2)
            if name not in known:
                raise _invalid(where, f"placeholder {{{name}}} names no regex group of this signature")
            if default is None and name not in present:
                raise _invalid(where, f"placeholder {{{name}}} is not in every pattern and needs a default "
                                      f"({{{name}|text}})")


def _flag(raw: Any, where: str, name: str) -> bool:
    value = raw.get(name, False)
    if not isinstance(value, bool):
        raise _invalid(where, f"'{name}' must be true or false")
    return value


def _candidates(value: Any, where: str, family_id: str) -> Tuple[Candidate, ...]:
    try:
        return parse_candidates(value, family_id)
    except ValueError as exc:
        raise _invalid(where, str(exc)) from exc


def _family_graph(signatures: Sequence[Signature]) -> Dict[str, Tuple[str, ...]]:
    return {s.id: tuple(c.id for c in s.candidates) for s in signatures if s.candidates}


def _fix_if(value: Any, where: str) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise _invalid(where, "'fix_if' must map a fact name to a list of steps")
    return tuple((str(name), _strings(steps, where, f"fix_if.{name}")) for name, steps in value.items())


def _kb_facts(value: Any, where: str) -> Tuple[str, ...]:
    names = _strings(value, where, "kb_facts", allow_empty=True)
    unknown = sorted(set(names) - KB_FACTS)
    if unknown:
        raise _invalid(where, f"unknown kb_facts {', '.join(unknown)} (known: {', '.join(sorted(KB_FACTS))})")
    return names


def _checks(value: Any, where: str, name: str, known: FrozenSet[str]) -> Tuple[str, ...]:
    names = _strings(value, where, name, allow_empty=True)
    unknown = sorted(set(names) - known)
    if unknown:
        raise _invalid(where, f"unknown {name} {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return names


def _triggers(value: Any, where: str) -> Tuple[str, ...]:
    names = _strings(value, where, "extracted", allow_empty=True)
    bad = [n for n in names
           if not re.match(r"^(?:gpu|library|symbol|compiler|env|conda|installer):[\w.-]+(?::[\w-]+)?$", n)]
    if bad:
        raise _invalid(where, f"'extracted' entry {bad[0]!r} is not KIND:NAME "
                              "(gpu, library, symbol, compiler, env, conda, installer)")
    return names


def _identify(raw: Any, index: int, path: str) -> Tuple[str, str]:
    """(the signature's id, where it is for messages), once its fields are the known ones."""
    where = f"{path}: signature #{index + 1}"
    if not isinstance(raw, Mapping):
        raise _invalid(where, "must be an object")
    sig_id = raw.get("id")
    if not isinstance(sig_id, str) or not _ID.match(sig_id):
        raise _invalid(where, f"'id' must be kebab-case, got {sig_id!r}")
    where = f"{path}: signature {sig_id!r}"
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise _invalid(where, f"missing {', '.join(missing)}")
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise _invalid(where, f"unknown field(s) {', '.join(unknown)}")
    return sig_id, where


def _signature(raw: Any, index: int, path: str) -> Signature:
    sig_id, where = _identify(raw, index, path)
    for field in ("title", "cause"):
        if not isinstance(raw[field], str) or not raw[field].strip():
            raise _invalid(where, f"'{field}' must be a non-empty string")
    sources = _strings(raw["sources"], where, "sources")
    bad = [s for s in sources if not s.startswith(("https://", "http://"))]
    if bad:
        raise _invalid(where, f"source {bad[0]!r} is not a URL")
    related = raw.get("related_finding")
    if related is not None and (not isinstance(related, str) or not _ID.match(related)):
        raise _invalid(where, f"'related_finding' must be a kebab-case code or null, got {related!r}")
    priority = raw.get("priority", 1)
    if priority not in (1, 2, 3) or isinstance(priority, bool):
        raise _invalid(where, f"'priority' must be 1, 2 or 3, got {priority!r}")
    with_plan, harmless = _flag(raw, where, "fix_with_plan"), _flag(raw, where, "harmless")
    host_facts = _strings(raw.get("host_facts", []), where, "host_facts", allow_empty=True)
    unknown_kinds = sorted(set(host_facts) - HOST_FACT_KINDS)
    if unknown_kinds:
        raise _invalid(where, f"unknown host_facts {', '.join(unknown_kinds)} "
                              f"(known: {', '.join(sorted(HOST_FACT_KINDS))})")
    # A signature fired only by extracted facts may have no pattern of its own.
    only_extracted = bool(raw.get("extracted"))
    patterns = _compile(_strings(raw["patterns"], where, "patterns", allow_empty=only_extracted),
                        where, "pattern")
    sig = Signature(
        id=sig_id,
        title=raw["title"].strip(),
        patterns=patterns,
        details=_compile(_strings(raw.get("details", []), where, "details", allow_empty=True),
                         where, "detail"),
        cause=raw["cause"].strip(),
        fix=_strings(raw["fix"], where, "fix"),
        sources=sources,
        related_finding=related,
        priority=priority,
        harmless=harmless,
        fix_with_plan=with_plan,
        host_facts=host_facts,
        supersedes=_strings(raw.get("supersedes", []), where, "supersedes", allow_empty=True),
        needles=tuple(literal_prefix(p.pattern) for p in patterns),
        required=tuple(required_literals(p) for p in patterns),
        near=_compile(_strings(raw.get("near", []), where, "near", allow_empty=True), where, "near"),
        before=_compile(_strings(raw.get("before", []), where, "before", allow_empty=True), where, "before"),
        not_before=_compile(_strings(raw.get("not_before", []), where, "not_before", allow_empty=True),
                            where, "not_before"),
        candidates=_candidates(raw.get("candidates", []), where, sig_id),
        fix_if=_fix_if(raw.get("fix_if", {}), where),
        fix_instead_if=_fix_if(raw.get("fix_instead_if", {}), where),
        kb_facts=_kb_facts(raw.get("kb_facts", []), where),
        contradicted_by=_checks(raw.get("contradicted_by", []), where, "contradicted_by", CONTRADICTIONS),
        confirmed_by=_checks(raw.get("confirmed_by", []), where, "confirmed_by", CONFIRMATIONS),
        triggers=_triggers(raw.get("extracted", []), where),
        explains=_strings(raw.get("explains", []), where, "explains", allow_empty=True),
    )
    _check_placeholders(sig, where)
    return sig


def parse_catalog(data: Any, path: str = "<signatures>") -> Catalog:
    """Validate the decoded JSON document of a signature file."""
    if not isinstance(data, Mapping) or data.get("kind") != CATALOG_KIND:
        raise _invalid(path, f"not a torchsmith signature file (kind must be {CATALOG_KIND!r})")
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema > CATALOG_SCHEMA:
        raise _invalid(path, f"schema {schema!r} is not one this torchsmith reads ({CATALOG_SCHEMA})")
    version = data.get("version")
    if not isinstance(version, str) or not version:
        raise _invalid(path, "'version' must be a non-empty string")
    raw_sigs = data.get("signatures")
    if not isinstance(raw_sigs, list) or not raw_sigs:
        raise _invalid(path, "'signatures' must be a non-empty list")
    signatures = tuple(_signature(raw, i, path) for i, raw in enumerate(raw_sigs))
    seen: Dict[str, int] = {}
    for sig in signatures:
        if sig.id in seen:
            raise _invalid(path, f"signature id {sig.id!r} appears twice")
        seen[sig.id] = 1
    for sig in signatures:
        unknown = [other for other in sig.supersedes + sig.explains if other not in seen or other == sig.id]
        if unknown:
            raise _invalid(path, f"signature {sig.id!r} supersedes unknown signature {unknown[0]!r}")
    try:
        check_family_graph(_family_graph(signatures))
    except ValueError as exc:
        raise _invalid(path, str(exc)) from exc
    return Catalog(signatures=signatures, version=version, path=path)


_CACHE: Dict[str, Catalog] = {}
_OF_KB: Dict[int, Tuple[Mapping[str, Any], Catalog]] = {}


def catalog_of(kb: Optional[KnowledgeBase]) -> Catalog:
    """The signatures of ``kb``: its ``signatures`` document (the overlay's file when it has
    one), validated once per document. Without a knowledge base (its overlay is broken), the
    packaged signatures: a doctor or explain in a damaged setup still names known failures."""
    from torchsmith.kb.documents import DATA_DIR, document_path, read_document

    if kb is None:
        path = document_path("signatures", DATA_DIR, None)
        document = read_document("signatures", DATA_DIR, None)
    else:
        document, path = kb.document("signatures"), kb.document_path("signatures")
    cached = _OF_KB.get(id(document))
    if cached is not None and cached[0] is document:
        return cached[1]
    catalog = parse_catalog(document, path)
    if len(_OF_KB) > 8:
        _OF_KB.clear()
    _OF_KB[id(document)] = (document, catalog)
    return catalog


def load_catalog(path: str) -> Catalog:
    """Read and validate a signature file given by the user (``explain --signatures FILE``)."""
    path = os.path.abspath(path)
    cached = _CACHE.get(path)
    if cached is not None:
        return cached
    from torchsmith.errors import parse_json_bytes, read_json_bytes

    try:
        raw = read_json_bytes(path)
    except OSError as exc:
        raise TorchsmithError(f"cannot read signature file {path}: {exc.strerror or exc}",
                              code="explain-data-invalid") from exc
    try:
        data = parse_json_bytes(raw)
    except ValueError as exc:
        raise _invalid(path, f"not valid JSON ({exc})") from exc
    catalog = parse_catalog(data, path)
    _CACHE[path] = catalog
    return catalog
