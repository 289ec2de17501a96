"""What the commands share: host options, the machine they talk about, the data."""

from __future__ import annotations

import argparse

from torchsmith import TYPE_CHECKING
from torchsmith.errors import TorchsmithError
from torchsmith.host import Host
from torchsmith.install.target_choice import TargetChoice, looks_like_version, select_target
from torchsmith.machine import PLATFORMS, Machine
from torchsmith.overrides import Overrides, build_overrides, parse_described_gpu

if TYPE_CHECKING:
    from typing import Callable, List, Mapping, Optional

    from torchsmith.install.target_choice import TargetDefault
    from torchsmith.kb import KnowledgeBase

__all__ = ["DESCRIBED", "Context", "add_host_options", "add_json_option"]

DESCRIBED = "none: a described machine (--host or flags); --python PATH names a local one"


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print exactly one JSON document on stdout")


def add_host_options(parser: argparse.ArgumentParser, *, python_flag: bool = True) -> None:
    """``--host FILE`` and the overrides that describe a machine without probing it."""
    group = parser.add_argument_group("host (describe another machine instead of probing this one)")
    group.add_argument("--host", metavar="FILE", help="a host profile from `torchsmith probe --json`")
    group.add_argument("--platform", choices=PLATFORMS, help="operating system and CPU")
    group.add_argument("--driver", metavar="VERSION", help="NVIDIA driver version, e.g. 535.104.05")
    group.add_argument("--driver-cuda", metavar="X.Y",
                       help="highest CUDA the driver supports (nvidia-smi's 'CUDA Version')")
    group.add_argument("--gpu", action="append", metavar="CC[:NAME]", default=None,
                       help="a GPU by compute capability (8.6, 12.0:RTX 5090) or product name "
                            "('RTX 3090', 'Radeon RX 7900 XTX', MI300X, 'Arc A770'), or nvidia / "
                            "amd / intel when the model is not known (repeat for each GPU)")
    group.add_argument("--no-gpu", action="store_true", help="plan for a machine with no GPU")
    if python_flag:
        group.add_argument("--python", metavar="X.Y|PATH",
                           help="the target Python: a version (3.12) or an interpreter path")
    group.add_argument("--jetson", metavar="L4T", help="an NVIDIA Jetson on this L4T release, e.g. 35.2.1")
    group.add_argument("--rocm-gfx", action="append", metavar="GFX", default=None,
                       help="an AMD GPU by gfx target, e.g. gfx1100 (repeat for each GPU)")
    group.add_argument("--rocm-version", metavar="X.Y", help="installed ROCm version")
    group.add_argument("--glibc", metavar="X.Y",
                       help="the target's glibc (ldd --version), e.g. 2.17 on CentOS 7")
    parser.add_argument("--kb", metavar="DIR",
                        help="compatibility data to use instead of the packaged data "
                             "(also TORCHSMITH_KB)")


def require_inspected(machine: Machine, python: Optional[str]) -> None:
    """``--python PATH`` that could not be run is an error: describing torchsmith's own Python
    instead would answer a question nobody asked (``--python foo`` is no version either)."""
    if not python or machine.python.source == f"ran {python}":
        return
    problem = next((n.problem for n in machine.notes if n.source == f"python {python}"), "no answer")
    raise TorchsmithError(f"cannot inspect the environment of {python}: {problem}",
                          code="python-not-inspectable",
                          hint="--python takes a version (3.12, 3.13t) or a working interpreter's path")


# Flags that describe another machine. Not --no-gpu (this machine, its GPU set aside), not
# --python X.Y, not the TORCHSMITH_* variables (they correct this machine's detection).
_DESCRIBING = ("host", "platform", "driver", "driver_cuda", "gpu", "jetson", "rocm_gfx", "rocm_version",
               "glibc")


class Context:
    """Per-invocation state: parsed args, and the host, machine and data, made once when asked."""

    def __init__(self, args: argparse.Namespace, environ: Optional[Mapping[str, str]] = None) -> None:
        self.args = args
        if environ is None:
            from torchsmith.host.live import process_environ

            environ = process_environ()
        self.environ = dict(environ)
        self.warnings: List[str] = []
        self._machine: Optional[Machine] = None
        self._kb: Optional[KnowledgeBase] = None
        self._host: Optional[Host] = None

    def host(self) -> Host:
        """This machine, seen with this invocation's environment: the one LiveHost of a command."""
        if self._host is None:
            from torchsmith.host.live import LiveHost

            self._host = LiveHost(self.environ)
        return self._host

    # --- the target environment ------------------------------------------------------
    def target(self, default: TargetDefault = "active", *, python: Optional[str] = None,
               interpreter_for: Optional[str] = None) -> TargetChoice:
        """The environment this command is about (``--python``/``--venv``/``--prefix``, else
        ``default``): :func:`~torchsmith.install.target_choice.select_target`."""
        a = self.args
        return select_target(self.host(), python=python or getattr(a, "python", None),
                             venv=getattr(a, "venv", None), prefix=getattr(a, "prefix", None),
                             default=default, interpreter_for=interpreter_for)

    def python_path(self) -> Optional[str]:
        """``--python PATH`` (not a version)."""
        value = getattr(self.args, "python", None)
        return str(value) if value and not looks_like_version(value) else None

    def environment_python(self) -> Optional[str]:
        """The interpreter of the environment the user means, when it is not torchsmith's own
        (None: this interpreter): what the machine is probed with. ``--venv``/``--prefix`` name
        where a command acts, not the Python it plans for, so they play no part."""
        return select_target(self.host(), python=getattr(self.args, "python", None)).python

    def environment(self) -> TargetChoice:
        """The environment a read-only command is about, by the one rule (``select_target``);
        for a described machine (``--host``, ``--gpu`` ... without ``--python PATH``) none."""
        if self.described():
            return TargetChoice(source=DESCRIBED)
        return select_target(self.host(), python=getattr(self.args, "python", None))

    def described(self) -> bool:
        """A profile or flags describe another machine, and ``--python`` names no local
        environment: this machine's packages and pip/uv constraints say nothing of it."""
        if self.python_path():
            return False
        return any(getattr(self.args, flag, None) for flag in _DESCRIBING)

    def described_by_flags(self) -> bool:
        """Flags describe another machine over this one's probe: the probe's local facts (CPU
        count, configured sources) are not the described machine's. A ``--host`` profile's are."""
        return self.described() and not getattr(self.args, "host", None)

    def constraint_reader(self) -> Optional[Callable[[str], Optional[str]]]:
        """How to read the user's pip/uv constraint files: None for a described machine."""
        return None if self.described() else self.host().read_text

    def python_version(self) -> Optional[str]:
        """``--python X.Y`` (not a path)."""
        value = getattr(self.args, "python", None)
        return str(value) if value and looks_like_version(value) else None

    # --- the machine -----------------------------------------------------------------
    def overrides(self) -> Overrides:
        from torchsmith.overrides import overrides_from_env

        a = self.args
        gpus = getattr(a, "gpu", None)
        flags = build_overrides(
            platform=getattr(a, "platform", None),
            driver=getattr(a, "driver", None),
            driver_cuda=getattr(a, "driver_cuda", None),
            gpus=tuple(parse_described_gpu(s, i) for i, s in enumerate(gpus)) if gpus else None,
            no_gpu=bool(getattr(a, "no_gpu", False)),
            python_version=self.python_version(),
            jetson=getattr(a, "jetson", None),
            rocm_gfx=tuple(getattr(a, "rocm_gfx", None) or ()) or None,
            rocm_version=getattr(a, "rocm_version", None),
            glibc=getattr(a, "glibc", None),
        )
        return flags.merged_over(overrides_from_env(self.environ))

    def machine(self) -> Machine:
        """The machine this command is about: ``--host FILE`` or a probe, then overrides."""
        if self._machine is None:
            from torchsmith.overrides import apply_overrides

            host_file = getattr(self.args, "host", None)
            if host_file:
                from torchsmith.probe import load_machine

                base = load_machine(host_file)
            else:
                from torchsmith.cli.progress import waiting
                from torchsmith.probe import probe

                with waiting(self.args, "probing this machine"):  # a hung mount, a slow nvidia-smi
                    base = probe(self.host(), python=self.environment_python())
                require_inspected(base, self.python_path())
            self._machine = apply_overrides(base, self.overrides())
        return self._machine

    # --- the data --------------------------------------------------------------------
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            from torchsmith.kb import load_kb

            self._kb = load_kb(getattr(self.args, "kb", None) or self.environ.get("TORCHSMITH_KB"))
            self.warnings.extend(self._kb.warnings)
        return self._kb

    def kb_version_if_loaded(self) -> Optional[str]:
        return self._kb.kb_version if self._kb is not None else None
