"""Is torch there, and does ``import torch`` work?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from torchsmith.doctor.checks.common import (
    Report,
)
from torchsmith.doctor.fixes import KbSource, install_fix, kb_of, python_of, quoted
from torchsmith.doctor.model import Fact, Finding
from torchsmith.machine import Machine

if TYPE_CHECKING:
    from torchsmith.explain.matcher import Explanation


def check_no_torch(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    if report.get("torch"):
        return None
    # Records of an install whose files are gone: a half-finished uninstall or a deleted directory.
    conda = [r for r in report.get("conda") or () if r.get("name") == "pytorch"]
    facts = [Fact(f"no importable torch on sys.path of {python_of(report)}", "inspect_env.py")]
    facts.extend(Fact(f"conda lists pytorch {r['version']} ({r['build']}) but its files are gone",
                      str(r.get("file"))) for r in conda)
    facts.extend(Fact(f"metadata of torch {i['version']} remains, but no torch package beside it",
                      str(i.get("metadata"))) for i in report.get("torch_installs") or ())
    broken = len(facts) > 1
    return Finding("no-torch", "error" if broken else "warning",
                   "torch's files are missing from this environment" if broken
                   else "torch is not installed in this environment",
                   tuple(facts), install_fix(report, machine, kb))


def _explained(text: str, machine: Machine, kb: KbSource) -> Optional[Explanation]:
    """The known failure ``text`` shows (``torchsmith explain``'s first explanation), or None."""
    try:
        from torchsmith.explain import catalog_of, explain

        data = kb_of(kb)
        found = explain(text, catalog_of(data), machine, kb=data)
    except Exception:  # the catalog is optional here: without it the finding stands on its own
        return None
    return found[0] if found else None


def check_torch_import_fails(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    dynamic = report.get("dynamic") or {}
    if dynamic.get("status") != "failed":
        return None
    error = str(dynamic.get("error") or "").strip()
    last = error.splitlines()[-1] if error else f"exit code {dynamic.get('returncode')}"
    code = dynamic.get("returncode")
    facts = [Fact(line.strip(), "import torch (child process)") for line in error.splitlines()[-3:]]
    if isinstance(code, int) and code < 0:
        facts.append(Fact(f"the process was killed by signal {-code}", "import torch (child process)"))
    known = _explained(error, machine, kb) if error else None
    if known is not None:
        note = f"{known.signature.title} ({known.signature.id}): {known.cause}"
        fix = install_fix(report, machine, kb)
    else:
        note = ("reinstalling the plan's build replaces mismatched or missing libraries; "
                "`torchsmith explain` names the cause of a known message")
        fix = (*install_fix(report, machine, kb), f"torchsmith explain {quoted(last[:200])}")
    return Finding("torch-import-fails", "error", f"`import torch` fails: {last[:160]}", tuple(facts),
                   fix, note=note)


def check_torch_import_hangs(report: Report, machine: Machine, kb: KbSource) -> Optional[Finding]:
    dynamic = report.get("dynamic") or {}
    if dynamic.get("status") != "timeout":
        return None
    python = quoted(python_of(report))
    return Finding(
        "torch-import-hangs", "error",
        f"`import torch` did not finish within {dynamic.get('timeout'):.0f} s (killed)",
        (Fact(f"{python} -c 'import torch' was still running after {dynamic.get('timeout')} s",
              "import torch (child process)"),),
        (f"timeout 300 {python} -X importtime -c 'import torch' 2>&1 | sort -t'|' -k2 -n | tail -5",
         "nvidia-smi", f"torchsmith doctor --python {python} --timeout 300"),
        note="a hung driver (nvidia-smi hangs too), a stale lock on a network filesystem or a very "
             "slow disk are the usual causes; -X importtime shows which module is slow",
    )
