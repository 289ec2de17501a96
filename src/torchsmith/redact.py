"""Credentials never leave torchsmith: one redaction applied at every output boundary.

Everything torchsmith prints (text, ``--json``, warnings, errors) and every file it writes
(captures, profiles, locks, exports, the refresh overlay, rendered scripts) passes through
:func:`redact` or :func:`redact_data`. What it hides:

- userinfo of a URL (``https://alice:p@ss@host/``: the authority ends at its *last* ``@``);
- secret-looking query parameters (``?token=``, ``access_token=``, ``key=``, ``sig=`` ...);
- token-like URL path segments (``https://pypi.fury.io/<token>/me/``): a segment with a run of
  at least 16 letters and digits mixing both, or any unbroken run of 32; package names,
  versions and file names (words, dots) are left alone, and so are lowercase hex digests of 40
  characters or more (git commits in source links, sha256, PyPI's file paths): a token made
  only of 40+ lowercase hex digits in a URL path is the one kind this misses;
- ``password``/``token``/``secret`` values in ``key = value``, ``key: value`` and netrc
  (``password VALUE``) form, and ``Authorization:`` header values;
- environment variables whose name says they hold a secret (``*_PASSWORD``, ``*TOKEN*``...).

:func:`strip_credentials` gives a URL without userinfo for files that must stay usable (a
lock's index): the credentials then come from the user's own configuration (netrc, keyring,
``--torch-index``), never from a torchsmith file.
"""

from __future__ import annotations

import re

from torchsmith import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Tuple

__all__ = ["MASK", "redact", "redact_data", "secret_name", "split_credentials", "strip_credentials"]

MASK = "***"

# Every pattern starts only where a token starts (a look-behind), so a long run of word
# characters is scanned once, not once per position: redaction stays linear on any output.
_URL = r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+"
# The authority of a URL: up to the first "/", "?" or "#"; userinfo ends at its last "@".
_AUTHORITY = r"(?s)^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)(.*)$"
# A value ends where a citation's bracket closes (unescaped brackets are not URL characters).
_QUERY = r"([?&;])([A-Za-z0-9_.-]+)=([^&#;\s\"'\])]*)"
_QUERY_NAME = (r"(?i)(?:^|[_.-])(?:token|key|apikey|secret|password|passwd|pwd|sig|signature|auth|"
               r"credentials?|jwt|session|sessionid|sid|ticket)s?$")
# Credentials recognised by their shape wherever they stand: a JSON Web Token (three base64url
# parts, the first two JSON objects, so "eyJ"), a UUID used as a path token.
_JWT = r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_CLASS_CHANGE = r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])"
_CODE_HOSTS = frozenset({"github.com", "raw.githubusercontent.com", "codeload.github.com", "gitlab.com",
                         "bitbucket.org", "huggingface.co"})
_DIGEST_PARENTS = frozenset({"tree", "blob", "commit", "commits", "raw", "blame", "archive", "compare",
                             "src", "packages"})
# In text (``password = x``, ``"token": "x"``) only names that cannot mean anything else.
_ASSIGNED = (r"(?<![A-Za-z0-9_/\\-])([A-Za-z][A-Za-z0-9_-]*)([\"']?[ \t]*[=:][ \t]*[\"']?)"
             r"([^\s\"',;}]+)")
_ASSIGNED_NAME = (r"(?i)(?:^|[_-])(?:token|secret|password|passwd|pwd|credentials?|"
                  r"(?:api|access|private|secret)[_-]?key)s?$")
# The shell's working directories, whose names end like "pwd" (password).
_NOT_SECRETS = frozenset({"PWD", "OLDPWD"})
_NETRC = r"(?i)((?<![/\\])\b(?:password|passwd)[ \t]+)(?![=:]|\*\*\*)\S+"
_AUTH_HEADER = (r"(?i)(\bauthorization[ \t]*[:=][ \t]*(?:(?:basic|bearer|token|digest)[ \t]+)?)"
                r"(?!\*\*\*)\S+")
_NOT_A_NAME = r"[\s/\\]"
_SEGMENT_RUN = r"[A-Za-z0-9]+"
_DIGEST = r"^[0-9a-f]+$"
# A whole word of the name: HF_TOKEN, UV_INDEX_X_PASSWORD; not "tokenizers" or "author".
_SECRET_ENV = (r"(?i)(?:^|[_-])(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|API_?KEY|ACCESS_KEY|AUTH)S?"
               r"(?:$|[_-])")


def _token_like(segment: str, previous: str = "", host: str = "") -> bool:
    """Whether a URL path segment looks like a credential by its shape alone."""
    if segment == MASK:
        return False
    if re.search(_JWT, segment) or re.fullmatch(_UUID, segment):
        return True
    if "." in segment:
        return False  # file names, versions, hosts
    if len(segment) >= 40 and re.match(_DIGEST, segment):
        # A content address where code hosts and package indexes put one (a commit after
        # tree/blob, PyPI's /packages/ab/cd/<digest>/); anywhere else 40 hex digits are a token.
        return not (host.lower() in _CODE_HOSTS or previous in _DIGEST_PARENTS
                    or bool(re.fullmatch(r"[0-9a-f]{2}", previous)))
    for run in re.findall(_SEGMENT_RUN, segment):
        if len(run) >= 32:
            return True
        if len(run) >= 16 and re.search(r"\d", run) and re.search(r"[A-Za-z]", run):
            return True
        if len(run) >= 12 and len(re.findall(_CLASS_CHANGE, run)) >= 4:
            return True  # letters and digits interleaved like random text, not "manylinux2014"
    return False


_TRAILING = ".,;:!?)]}"
_OPENING = {")": "(", "]": "[", "}": "{"}


def _split_trailing(url: str) -> Tuple[str, str]:
    """(the URL, the punctuation after it): a citation's ``[source: URL]`` or a sentence's
    final period is text around the URL; a bracket the URL opened itself (``[::1]``) stays."""
    end = len(url)
    while end and url[end - 1] in _TRAILING:
        closing = url[end - 1]
        opening = _OPENING.get(closing)
        if opening and url.count(opening, 0, end) >= url.count(closing, 0, end):
            break
        end -= 1
    return url[:end], url[end:]


def _redact_url_in_text(found: str) -> str:
    url, after = _split_trailing(found)
    return _redact_url(url) + after


def _redact_url(url: str) -> str:
    match = re.match(_AUTHORITY, url)
    if not match:
        return url
    scheme, authority, rest = match.groups()
    if "@" in authority:
        authority = MASK + "@" + authority.rsplit("@", 1)[1]
    path, sep, tail = rest.partition("?") if "?" in rest else rest.partition("#")
    if not sep:
        path, tail = rest, ""
    host = authority.rsplit("@", 1)[-1].split(":", 1)[0]
    parts = path.split("/")
    path = "/".join(MASK if _token_like(part, parts[i - 1] if i else "", host) else part
                    for i, part in enumerate(parts))
    url = scheme + authority + path + sep + tail
    return re.sub(_QUERY, _query_value, url) if "=" in url else url


def _query_value(match: re.Match[str]) -> str:
    name, value = match.group(2), match.group(3)
    secret = re.search(_QUERY_NAME, name) or (value != MASK and _token_like(value))
    return f"{match.group(1)}{name}={MASK if secret else value}"


def _assigned_value(match: re.Match[str]) -> str:
    name = match.group(1)
    if not re.search(_ASSIGNED_NAME, name) or match.group(3) == MASK or name in _NOT_SECRETS:
        return match.group(0)
    return match.group(1) + match.group(2) + MASK


def redact(text: str) -> str:
    """``text`` with every credential it holds replaced by ``***``."""
    if not text:
        return text
    # Each pattern is tried only where the character it cannot match without is (compiled on
    # first use: a probe's output needs few of them).
    if ":" in text:
        text = re.sub(_URL, lambda m: _redact_url_in_text(m.group(0)), text)
    if "=" in text:
        text = re.sub(_QUERY, _query_value, text)
    if ":" in text or "=" in text:
        text = re.sub(_AUTH_HEADER, lambda m: m.group(1) + MASK, text)
        text = re.sub(_ASSIGNED, _assigned_value, text)
    if "eyJ" in text:
        text = re.sub(_JWT, MASK, text)
    if " " in text or "\t" in text:
        text = re.sub(_NETRC, lambda m: m.group(1) + MASK, text)
    return text


def secret_name(name: str) -> bool:
    """Whether an environment variable's (or setting's) name says its value is a secret; a key
    holding a path or several words (``pip /home/tokens/pip.conf [global] index-url``) is no name."""
    return not re.search(_NOT_A_NAME, name) and bool(re.search(_SECRET_ENV, name))


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like structure with every string redacted, and the values of keys that
    name a secret (``{"UV_INDEX_X_PASSWORD": ...}``) masked whole."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out: Dict[Any, Any] = {}
        for key, item in value.items():
            masked = isinstance(key, str) and isinstance(item, str) and item and secret_name(key)
            out[redact(key) if isinstance(key, str) else key] = MASK if masked else redact_data(item)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(redact_data(item) for item in value)
    return value


def split_credentials(url: str) -> Tuple[str, str]:
    """(``url`` without its userinfo, the userinfo) -- ``("", "")`` parts when absent."""
    match = re.match(_AUTHORITY, url.strip())
    if not match or "@" not in match.group(2):
        return url.strip(), ""
    scheme, authority, rest = match.groups()
    userinfo, host = authority.rsplit("@", 1)
    return scheme + host + rest, userinfo


def strip_credentials(url: str) -> str:
    """``url`` without userinfo or secret query parameters: safe to store, usable with the
    credentials of the user's own netrc or keyring."""
    bare, _userinfo = split_credentials(url)
    return re.sub(_QUERY, _query_value, bare)
