"""``torchsmith guard`` as one call each: switch the guard, report it, or check a command against it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from packaging.utils import canonicalize_name

from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.host import Host
from torchsmith.install import guard
from torchsmith.install.check import Prediction, parse_user_command, predict
from torchsmith.install.target import Target, installed_packages

__all__ = ["GUARD_ACTIONS", "GuardView", "check_against_guard", "guard_action"]

GUARD_ACTIONS = ("status", "on", "off", "check")


@dataclass
class GuardView:
    """The guard of one environment as it is now, and how its pins compare with what is installed."""

    target: Target
    status: guard.GuardStatus
    drift: Dict[str, Dict[str, Optional[str]]]  # name -> {"pinned", "installed"} where they differ

    @property
    def effective(self) -> bool:
        """Constraints applied by pip (and uv where hooked) as this environment is set now."""
        return self.status.on and not self.status.bypassed

    def warnings(self) -> List[str]:
        return [f"the guard's constraints are bypassed here: {reason}" for reason in self.status.bypassed]

    def to_json(self) -> Dict[str, Any]:
        status = self.status
        return {
            "drift": self.drift,
            "prefix": self.target.prefix,
            "on": status.on,
            "constraints_file": status.constraints_file,
            "pins": status.pins,
            "pip": status.pip_hook,
            "uv_activate_scripts": status.uv_hooks,
            "held": status.held,
            "bypassed": status.bypassed,
            "effective": self.effective,
        }


def guard_action(host: Host, target: Target, action: str) -> GuardView:
    """Switch the guard ``on``/``off`` (never under a running install), or only look (``status``)."""
    if action in ("on", "off"):
        from torchsmith.install.exclusive import exclusive

        with exclusive(target.prefix, what=f"guard {action}"):
            (guard.guard_on if action == "on" else guard.guard_off)(target.prefix)
    elif action != "status":
        raise UsageError(f"unknown guard action {action!r}")
    status = guard.guard_status(target.prefix, host.environ())  # with what this environment switches off
    installed = installed_packages(host, target) if status.pins else {}

    def version(name: str) -> Optional[str]:
        found = installed.get(canonicalize_name(name), {}).get("version")
        return None if found is None else str(found)

    # Pins that no longer match the environment (changed while the guard was off).
    drift = {name: {"pinned": pinned, "installed": version(name)}
             for name, pinned in sorted(status.pins.items()) if version(name) != pinned}
    return GuardView(target, status, drift)


def check_against_guard(host: Host, target: Target, command: Sequence[str]) -> Prediction:
    """What ``command`` (pip or uv install) would do to the guarded stack, changing nothing."""
    if not command:
        raise UsageError("give the command to check: torchsmith guard check -- pip install xformers")
    parse_user_command(command)  # a command it cannot check is a usage error before anything runs
    status = guard.guard_status(target.prefix)
    if status.constraints_file is None:
        raise TorchsmithError(f"{target.prefix} has no guard to check against", code="no-guard",
                              hint="install with `torchsmith install`, which writes one")
    prediction = predict(host, target, command, status.constraints_file, status.pins)
    if prediction.unguarded_problem and not prediction.changes:
        raise TorchsmithError(f"the command fails even without the guard: {prediction.unguarded_problem}",
                              code="command-fails", context=[" ".join(command)])
    return prediction
