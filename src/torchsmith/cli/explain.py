"""Name the cause and the fix of an error message or a whole log (pip, uv, conda, docker, Python).

  torchsmith explain "RuntimeError: CUDA error: no kernel image is available ..."
  some-command 2>&1 | torchsmith explain -
  torchsmith explain --file build.log --json

Facts about the machine (its GPUs, driver, Python) are added from `--host FILE`, or from probing
this machine unless `--no-probe` is given. Text that matches no known failure gets an honest
"not recognised" and the checks worth running; exit code 0 either way (see docs/explain.md).
"""

from __future__ import annotations

import argparse
import codecs
import re
import shlex
import sys
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from torchsmith.cli.common import Context, add_host_options, add_json_option
from torchsmith.errors import KnowledgeBaseError, TorchsmithError, UsageError
from torchsmith.machine import Machine
from torchsmith.output import Caution, Result

if TYPE_CHECKING:
    from torchsmith.explain.catalog import Catalog
    from torchsmith.explain.matcher import Explanation
    from torchsmith.kb import KnowledgeBase

# What to run when nothing matched: each shows facts, none guesses a cause.
GENERIC_CHECKS = (
    "torchsmith doctor",
    "torchsmith probe",
    "python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"",
    "nvidia-smi",
)
_HUMAN_MAX = 4  # explanations shown in full on one screen; the rest by title
STATED = "the machine as stated"  # --no-probe with --gpu/--driver...: only those facts are known


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="*", metavar="TEXT",
                        help="the error message (words are joined); '-' reads standard input")
    parser.add_argument("--file", metavar="LOG", help="read the text from a log file (any encoding)")
    parser.add_argument("--no-probe", action="store_true",
                        help="explain the text alone, without facts about this machine")
    parser.add_argument("--signatures", metavar="FILE",
                        help="use this signature file instead of the packaged one")
    add_json_option(parser)
    add_host_options(parser, python_flag=False)


# A log is read whole up to 8 MiB; past that its first and last 4 MiB (where the first error
# and the final one are), so `explain --file /dev/zero`-like inputs stay bounded.
HEAD_BYTES = TAIL_BYTES = 4 * 1024 * 1024


# A byte-order mark names the encoding: Windows PowerShell 5's `>` and Out-File write UTF-16 LE with
# one, Notepad may write UTF-8 with one; without a mark a log is read as UTF-8.
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _decode(raw: bytes) -> str:
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8")
    if encoding == "utf-16" and len(raw) % 2:
        raw = raw[:-1]  # a head and tail joined at an odd byte: drop the half character
    return raw.decode(encoding, errors="replace")


def _read_stdin() -> Tuple[str, int]:
    """Standard input, bounded like a file: (text, bytes left out of the middle)."""
    if sys.stdin is None:  # started with `<&-`
        raise UsageError("standard input is closed: give the message as an argument or with --file LOG")
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        text = str(sys.stdin.read(HEAD_BYTES + TAIL_BYTES))
        return text, 0
    head = buffer.read(HEAD_BYTES)
    tail = bytearray()
    skipped = 0
    while True:
        chunk = buffer.read(1024 * 1024)
        if not chunk:
            break
        tail += chunk
        if len(tail) > TAIL_BYTES:
            skipped += len(tail) - TAIL_BYTES
            del tail[:len(tail) - TAIL_BYTES]
    return _decode(head + bytes(tail)), skipped


def _read_file(path: str) -> Tuple[str, int]:
    from torchsmith.host.live import NotAFileError, read_bounded

    try:
        raw, skipped = read_bounded(path, HEAD_BYTES, TAIL_BYTES)
    except NotAFileError as exc:
        raise UsageError(f"--file {path} is not a regular file (a device, FIFO or socket)",
                         hint="save the log to a file first, or pipe it: ... | torchsmith explain -"
                         ) from exc
    except (OSError, ValueError) as exc:
        raise TorchsmithError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}",
                              code="input-unreadable") from exc
    return _decode(raw), skipped


def read_text(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    """The text to explain and where it came from: TEXT words, standard input, or --file."""
    words: List[str] = list(args.text or [])
    stdin = words == ["-"]
    given = [bool(words), bool(args.file)]
    if sum(given) > 1:
        raise UsageError("give the text one way: TEXT, '-' (standard input) or --file LOG")
    skipped = 0
    if args.file:
        text, skipped = _read_file(args.file)
        origin: Dict[str, Any] = {"from": "file", "path": args.file}
    elif stdin:
        text, skipped = _read_stdin()
        origin = {"from": "stdin"}
    else:
        text = " ".join(words)
        origin = {"from": "arguments"}
    if skipped:
        origin["skipped_bytes"] = skipped
        origin["note"] = (f"the input is larger than {(HEAD_BYTES + TAIL_BYTES) >> 20} MiB: read its "
                          f"first and last {HEAD_BYTES >> 20} MiB, skipped {skipped} bytes between")
    if not text.strip():
        raise UsageError(
            "nothing to explain: give an error message, '-' to read standard input, or --file LOG",
        )
    origin["characters"] = len(text)
    origin["lines"] = text.count("\n") + (0 if text.endswith("\n") else 1)
    return text, origin


def _machine(args: argparse.Namespace, ctx: Context) -> Tuple[Optional[Machine], Optional[str]]:
    """The machine whose facts to add, and how it was known.

    ``--no-probe`` leaves this machine out; facts stated with ``--gpu``, ``--driver``... still
    describe one (and only those facts are known about it).
    """
    if args.no_probe and not args.host:
        overrides = ctx.overrides()
        if overrides.empty:
            return None, None
        from torchsmith.overrides import apply_overrides

        return apply_overrides(Machine(), overrides), STATED
    try:
        machine = ctx.machine()
    except TorchsmithError as exc:
        if args.host:
            raise
        ctx.warnings.append(f"explaining without facts about this machine: {exc}")
        return None, None
    return machine, (f"host profile {args.host}" if args.host else "this machine")


def _checks(machine: Optional[Machine]) -> List[str]:
    """The generic checks; a Jetson has no nvidia-smi: its L4T release tells the stack."""
    if machine is not None and machine.jetson is not None:
        return [c if c != "nvidia-smi" else "cat /etc/nv_tegra_release" for c in GENERIC_CHECKS]
    return list(GENERIC_CHECKS)


def _catalog(args: argparse.Namespace, ctx: Context) -> Tuple[Catalog, Optional[KnowledgeBase]]:
    """The signatures (``--signatures FILE``, else the data's) and the data for their facts;
    with a broken overlay, the packaged signatures and no facts from the data."""
    from torchsmith.explain.catalog import catalog_of, load_catalog

    try:
        kb: Optional[KnowledgeBase] = ctx.kb()
    except KnowledgeBaseError as exc:
        ctx.warnings.append(f"explaining without the knowledge base: {exc.message}")
        kb = None
    if args.signatures:
        return load_catalog(args.signatures), kb
    return catalog_of(kb), kb


def _names_a_file(args: argparse.Namespace, text: str, ctx: Context) -> bool:
    """One word given as TEXT that is a readable file here: the user most likely meant --file."""
    words = list(args.text or [])
    if len(words) != 1 or words == ["-"] or not text.strip() or any(c.isspace() for c in text):
        return False
    return ctx.host().read_text(text, limit=1) is not None


def run(args: argparse.Namespace, ctx: Context) -> Result:
    from torchsmith.explain.matcher import explain_report
    from torchsmith.explain.readout import for_the_vendor, next_checks, read_lines

    text, origin = read_text(args)
    if origin.get("note"):
        ctx.warnings.append(origin["note"])
    if _names_a_file(args, text, ctx):
        ctx.warnings.append(Caution(
            f"{text!r} names a file, read here as the error text itself: to explain what the file "
            f"holds, `torchsmith explain --file {shlex.quote(text)}`"))
    catalog, kb = _catalog(args, ctx)
    machine, machine_source = _machine(args, ctx)
    plan_args = f"--host {shlex.quote(args.host)}" if args.host else ""
    if not plan_args and getattr(args, "jetson", None):
        plan_args = f"--jetson {shlex.quote(args.jetson)}"
    report = explain_report(text, catalog, machine, plan_args=plan_args,
                            machine_probed=machine_source != STATED, kb=kb)
    explanations = report.explanations
    recognised = bool(explanations)
    data: Dict[str, Any] = {
        "recognised": recognised,
        "matches": [e.to_json() for e in explanations],
        "input": origin,
        "host": machine_source,
        "signatures": {"version": catalog.version, "count": len(catalog.signatures)},
        "extracted": report.extracted.to_json(),
        "contradicted": [{"id": sig_id, "evidence": evidence} for sig_id, evidence in report.contradicted],
    }
    read = read_lines(report.extracted)
    checks = next_checks(report.extracted) + for_the_vendor(report.extracted, _checks(machine))
    if not recognised:
        data["checks"] = checks
        data["read"] = read

    def human(out: IO[str]) -> None:
        _human(explanations, catalog_size=len(catalog.signatures), checks=checks,
               machine_source=machine_source, out=out, read=read)

    return Result(
        command="explain",
        status="ok" if recognised else "not-recognised",
        data=data,
        human=human,
    )


_ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S")


# Words a sentence has near its start and a command line does not.
_PROSE_WORDS = frozenset({"a", "an", "the", "is", "are", "was", "not", "to", "of", "it"})


def _is_command(step: str, previous: str) -> bool:
    """A step written as a command (``pip ...``, ``TORCH_CUDA_ARCH_LIST=... pip ...``): prose
    starts with a capital or reads as a sentence (``torch 1.15.0 is not ...``), and a
    lower-case line after one ending in ``or`` continues that sentence."""
    if previous.rstrip().endswith((", or", " or")):
        return False
    if _ENV_ASSIGNMENT.match(step):
        return True
    command = _split_note(step)[0]
    return step[:1].islower() and not _PROSE_WORDS.intersection(command.split()[:4]) \
        and not _bare_parenthesis(command)


def _bare_parenthesis(command: str) -> bool:
    """An unquoted ``(`` not opening ``$(...)``: a remark in parentheses inside the line, which a
    shell reads as a syntax error (``pip list | grep torch (in conda also ...): ...``); or a
    ``<placeholder>``, which it reads as a redirection: neither pastes."""
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not a command to paste either
        return True
    if "<" in tokens and ">" in tokens[tokens.index("<"):]:  # a <placeholder> to fill in first
        return True
    return any(token == "(" and not (i and tokens[i - 1].endswith("$")) for i, token in enumerate(tokens))


def _split_note(command: str) -> Tuple[str, str]:
    """(the command, the remark after it): ``nvidia-smi: what to read`` or ``cmd (why)``."""
    head, colon, rest = command.partition(": ")
    if colon and " " not in head:
        return head, rest
    if command.endswith(")") and " (" in command:
        start = command.rindex(" (")
        body = command[start + 2:-1]
        if body.count("(") == body.count(")") and command[:start].count('"') % 2 == 0 \
                and command[:start].count("'") % 2 == 0:
            return command[:start], body
    return command, ""


def fix_lines(steps: Sequence[str]) -> List[str]:
    """Fix steps for people: commands as ``$ command`` (exactly as written, to paste) with
    their remark as a shell comment; prose as ``- text``."""
    lines: List[str] = []
    previous = ""
    for step in steps:
        if _is_command(step, previous):
            command, note = _split_note(step)
            lines.append(f"$ {command}" + (f"  # {note}" if note else ""))
        else:
            lines.append(f"- {step}")
        previous = step
    return lines


def _human(explanations: Sequence[Explanation], *, catalog_size: int, checks: Sequence[str],
           machine_source: Optional[str], out: IO[str], read: Sequence[str] = ()) -> None:
    if not explanations:
        out.write(f"Not recognised: none of the {catalog_size} known failure signatures "
                  f"matches this text.\n")
        if read:
            out.write("What the text states:\n")
            out.writelines(f"  - {line}\n" for line in read)
        out.write("No cause is guessed. Worth running:\n")
        for check in checks:
            command, note = _split_note(check)
            out.write(f"  $ {command.strip()}" + (f"  # {note}" if note else "") + "\n")
        return
    count = len(explanations)
    out.write("1 known failure in this text.\n" if count == 1
              else f"{count} known failures in this text, root cause first.\n")
    from torchsmith.output import paint, use_color

    color = use_color(out)
    for number, item in enumerate(explanations[:_HUMAN_MAX], 1):
        out.write(f"\n{paint(f'{number}. {item.signature.title}', '1', color)}  "
                  f"[{item.signature.id}, line {item.line}]\n")
        out.write(f"   > {item.excerpt}\n")
        out.write(f"   Cause: {item.cause}\n")
        if item.candidates:
            out.write("   Candidates (the text proves none of them):\n")
            out.writelines(f"     - {c.cause} [{c.id}]. Check: {c.check}\n" for c in item.candidates)
        if item.reasoning:
            out.writelines(f"   From the text's facts: {line}\n" for line in item.reasoning)
        if item.host_facts:
            out.write(f"   On {machine_source}: " + "; ".join(item.host_facts) + "\n")
        out.write("   Fix:\n")
        out.writelines(f"     {line}\n" for line in fix_lines(item.fix))
    rest = explanations[_HUMAN_MAX:]
    if rest:
        out.write(f"\nAlso found (--json for details): "
                  f"{', '.join(f'{e.signature.id} (line {e.line})' for e in rest)}\n")
