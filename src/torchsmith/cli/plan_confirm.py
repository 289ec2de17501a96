"""``plan --confirm``: the installer's own resolver checks the whole plan (install/confirm.py).

By default it runs only when the request names packages beyond torchsmith's shipped data and
their index answered (so ``plan`` of the torch stack starts no resolver and stays within its
budget); ``--confirm`` forces it, ``--no-confirm`` forbids it. A refusal turns the plan into a
no-solution whose blocker says who pins what, with the release that pairs as the way out.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from torchsmith.plan.model import Blocker, Door, Plan, Request
from torchsmith.records import replace

if TYPE_CHECKING:
    from torchsmith.cli.common import Context
    from torchsmith.install.confirm import Confirmation
    from torchsmith.kb import KnowledgeBase
    from torchsmith.machine import Machine
    from torchsmith.plan.conflict_words import Pairing

__all__ = ["add_confirm_options", "confirm_mode", "confirmed", "pairing_from"]


def add_confirm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "confirmation (the installer's own resolver, in a dry run, on the whole plan)")
    choice = group.add_mutually_exclusive_group()
    choice.add_argument("--confirm", dest="confirm", action="store_const", const="always",
                        help="run uv pip compile (else pip install --dry-run) on the whole plan with the "
                        "planned torch index and your pip/uv configuration (default: only when the request "
                        "names packages beyond torchsmith's shipped data and their index answered)")
    choice.add_argument("--no-confirm", dest="confirm", action="store_const", const="never",
                        help="never run the installer's resolver (the plan says it was not confirmed)")
    group.add_argument("--confirm-timeout", type=float, default=None, metavar="SECONDS",
                       help="stop the resolver after this long (default: 60)")


def confirm_mode(args: argparse.Namespace) -> str:
    return str(getattr(args, "confirm", None) or "auto")


def pairing_from(request: Request, kb: KnowledgeBase, ctx: Optional[Context] = None) -> Pairing:
    """(package, torch) -> the newest release whose published pins pair with that torch, from the
    live read or the shipped snapshot (what the plan itself stands on), else read now from the
    configured index when ``ctx`` is given."""
    from torchsmith.kb.pkgmeta import PackageRecord, canonical
    from torchsmith.plan.published import pairing_release, snapshot_record

    def record_of(name: str) -> Optional[PackageRecord]:
        found = next((r for r in request.published if r.name == name), None) or snapshot_record(kb, name)
        if found is not None or ctx is None:
            return found
        from torchsmith.kb.metaread import read_unknown
        from torchsmith.kb.refresh import configured_indexes

        host = ctx.host()
        records, _unread = read_unknown([name], (), host.fetch_url,
                                        configured_indexes(host.environ(), host.read_text))
        return records[0] if records else None

    def pairing(name: str, torch: str, within: str) -> Optional[Tuple[str, str]]:
        record = record_of(canonical(name))
        release = pairing_release(record, torch, kb, within) if record is not None else None
        if record is None or release is None:
            return None
        how = "read now" if record.live else f"snapshot of {record.retrieved}"
        return release.version, f"{record.source}, {how}"

    return pairing


def confirmed(args: argparse.Namespace, ctx: Context, plan: Plan, request: Request, machine: Machine
              ) -> Tuple[Plan, Dict[str, Any]]:
    """The plan as the resolver left it, and ``data.confirmation``."""
    from torchsmith.install.confirm import CONFIRM_SECONDS, Confirmation, confirm_plan, skip_reason

    mode = confirm_mode(args)
    timeout = getattr(args, "confirm_timeout", None)
    if timeout is not None and not timeout > 0:
        from torchsmith.errors import UsageError

        raise UsageError(f"--confirm-timeout must be more than 0 seconds, not {timeout:g}")
    reached = bool(request.published) or any("has no project" in why for _n, why in request.unread)
    skipped = skip_reason(mode, request, reached) if plan.ok else "the plan found no working stack"
    if skipped:
        outcome = Confirmation("skipped" if mode != "auto" or not request.unread else "not-confirmed",
                               skipped)
        return _said(plan, outcome, request), outcome.to_json()
    host = ctx.host()
    from torchsmith.cli.progress import waiting
    from torchsmith.kb.refresh import configured_indexes

    configured = configured_indexes(host.environ(), host.read_text)
    uv_own = any(w.startswith("$UV_") or w.endswith("uv.toml") for _u, w in configured)
    index = configured[0] if configured and not uv_own else None
    from torchsmith.kb.pipsources import pip_sources

    # uv reads only its own configuration: pip's sources are given to it, unless uv has its own.
    sources = ((), ()) if uv_own else pip_sources(host.environ(), host.read_text)
    timeout = timeout or CONFIRM_SECONDS
    with waiting(args, "checking the whole plan with the installer's resolver"):
        outcome = confirm_plan(host, plan, request, glibc=machine.os.glibc or "", index=index,
                               timeout=timeout, pairing=pairing_from(request, ctx.kb(), ctx),
                               pip_sources=sources)
    return _said(plan, outcome, request), outcome.to_json()


def _said(plan: Plan, outcome: Confirmation, request: Request) -> Plan:
    """The confirmation in the plan's own words: a reason, a warning, or the blocker."""
    if outcome.status == "confirmed":
        line = f"{outcome.by} resolved the whole request ({len(outcome.resolved)} packages, " \
               f"{outcome.seconds:.1f} s)"
        if outcome.unchecked:
            line += f"; not given to it: {', '.join(outcome.unchecked)}"
        return replace(plan, reasons=(*plan.reasons, line), confirmed=line)
    if outcome.status == "not-confirmed":
        return replace(plan, warnings=(*plan.warnings, f"could not confirm the plan with the "
                                                                  f"installer's resolver: {outcome.reason}"))
    if outcome.status != "conflict":
        return plan
    need = next((n for n in outcome.needs if plan.package(n.what) is not None), None)
    constraint = need.said() if need is not None else "the whole request"
    doors = _doors(outcome, request)
    return replace(
        plan, status="no-solution", packages=(), unplanned=(),
        blocker=Blocker("resolver-conflict", constraint, outcome.lines[0]),
        reasons=(*outcome.lines, *plan.reasons), alternatives=(*doors, *plan.alternatives))


def _doors(outcome: Confirmation, request: Request) -> List[Door]:
    """For each clashing package: plan with its release that pairs with the planned torch, or,
    when none within what asks for it does, with the torch it needs."""
    from torchsmith.install.closure import requirement_name
    from torchsmith.plan.doors import plan_command

    doors: List[Door] = []
    for pair in outcome.pairs:
        if pair.version:
            pin = f"{pair.package}=={pair.version}"
            kept = [r for r in request.requirements if requirement_name(r) != pair.package]
            doors.append(Door("requirement", f"{pin} pairs with torch {pair.torch} by its published pins",
                              f"add {pin}", plan_command([*kept, pin])))
        elif pair.needs:
            family = requirement_name(pair.needs)
            kept = [r for r in request.requirements if requirement_name(r) != family]
            doors.append(Door("requirement", f"plan the torch {pair.package} needs ({pair.needs})",
                              f"add {pair.needs}", plan_command([*kept, pair.needs])))
    return doors
