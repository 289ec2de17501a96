"""``torchsmith guard`` as one call each: switch the guard, report it, or check a command against it."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from packaging.utils import canonicalize_name

from torchsmith.errors import TorchsmithError, UsageError
from torchsmith.host import Host
from torchsmith.install import guard
from torchsmith.install.check import Prediction, parse_user_command, predict
from torchsmith.install.target import Target, installed_packages
from torchsmith.records import dataclass

__all__ = ["GUARD_ACTIONS", "GuardView", "check_against_guard", "guard_action"]

GUARD_ACTIONS = ("status", "on", "off", "check")

# Where `import torch` would load from, and the version written in those files, without importing
# it: find_spec locates a top-level package without running it. Two copies can share one name
# (`pip install --ignore-installed` writes over the files and leaves the old dist-info).
_IMPORTED_TORCH = r"""
import importlib.util, json, os, re
spec = importlib.util.find_spec("torch")
origin = getattr(spec, "origin", None) if spec else None
version = None
for name in ("version.py", "__init__.py") if origin else ():
    try:
        with open(os.path.join(os.path.dirname(origin), name), encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        continue
    found = re.search(r"^__version__\s*(?::\s*str\s*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    if found:
        version = found.group(1)
        break
print(json.dumps({"origin": origin, "version": version}))
"""


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
            "interrupted": status.interrupted,
        }


def guard_action(host: Host, target: Target, action: str) -> GuardView:
    """Switch the guard ``on``/``off`` (never under a running install), or only look (``status``)."""
    if action in ("on", "off"):
        from torchsmith.install.exclusive import exclusive

        with exclusive(target.prefix, what=f"guard {action}"):
            (guard.guard_on if action == "on" else guard.guard_off)(target.prefix)
    elif action != "status":
        raise UsageError(f"unknown guard action {action!r}")
    elif guard.guard_status(target.prefix).interrupted:  # a killed switch: finish it unless one runs now
        from torchsmith.install.exclusive import TargetBusy, exclusive

        try:
            with exclusive(target.prefix, what="guard status"):
                guard.finish_interrupted(target.prefix)
        except TargetBusy:
            pass  # reported as interrupted; the running command finishes it
    status = guard.guard_status(target.prefix, host.environ())  # with what this environment switches off
    installed = installed_packages(host, target) if status.pins else {}

    def version(name: str) -> Optional[str]:
        found = installed.get(canonicalize_name(name), {}).get("version")
        return None if found is None else str(found)

    # Pins that no longer match the environment (changed while the guard was off).
    drift = {name: {"pinned": pinned, "installed": version(name)}
             for name, pinned in sorted(status.pins.items()) if version(name) != pinned}
    torch_pin = status.pins.get("torch")
    imported = _imported_torch(host, target) if torch_pin else None
    imports = imported.get("version") if imported else None
    if imported and imports and imports != torch_pin and imports != version("torch"):
        # The metadata may agree with the pin while another copy's files are what imports.
        drift["torch"] = {"pinned": torch_pin, "installed": version("torch"),
                          "imports": imports, "imported_from": imported.get("origin")}
    return GuardView(target, status, drift)


def _imported_torch(host: Host, target: Target) -> Optional[Dict[str, Optional[str]]]:
    """{"origin", "version"} of the torch ``import torch`` would load in the target; None: unknown."""
    result = host.run([target.python, "-c", _IMPORTED_TORCH], timeout=30.0)
    try:
        data = result.last_json() if result.ok else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {key: str(data[key]) if data.get(key) is not None else None for key in ("origin", "version")}


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
