"""What the renderers print that needs the machine or a decision, attached to the plan once.

:func:`attach_artifacts` runs at the end of :func:`torchsmith.plan.resolve.resolve`: the host
facts a renderer names (platform, Python, GPUs, driver, Jetson), the Dockerfile's base image
(chosen against the driver) and the conda-forge stack. A renderer then needs only the plan and
the data: ``render(plan, fmt, kb=kb)``. An artifact that cannot be made for this plan is a
:class:`~torchsmith.plan.model.Refusal`, raised when its format is asked for, never before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple, Union

from torchsmith.errors import TorchsmithError
from torchsmith.machine import Machine
from torchsmith.plan.conda_env import conda_stack
from torchsmith.plan.images import choose_base_image
from torchsmith.plan.model import BaseImage, CondaStack, HostGpu, HostSummary, Plan, Refusal
from torchsmith.records import replace

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = ["attach_artifacts", "host_summary"]


def host_summary(machine: Optional[Machine], plan: Plan) -> HostSummary:
    """The host facts renderers print; without a machine, only what the plan itself says."""
    if machine is None:
        return HostSummary(platform=plan.platform)
    nvidia = machine.nvidia
    gpus: Tuple[HostGpu, ...] = tuple(
        HostGpu(g.name, "nvidia", g.index, g.compute_capability, g.memory_mib)
        for g in (nvidia.visible_gpus if nvidia else ()))
    gpus += tuple(HostGpu(g.name, "amd", gfx=g.gfx) for g in (machine.rocm.gpus if machine.rocm else ()))
    jetson = machine.jetson
    return HostSummary(
        platform=machine.platform, python=machine.python.minor,
        python_executable=machine.python.executable, gpus=gpus,
        driver=nvidia.driver_version if nvidia else None,
        jetson_l4t=jetson.l4t if jetson else None,
        jetson_cc=jetson.compute_capability if jetson else None,
        cpu_count=machine.os.cpu_count)


def attach_artifacts(plan: Plan, machine: Optional[Machine], kb: KnowledgeBase) -> Plan:
    """``plan`` with its host summary, base image and conda stack (an ok plan's) filled in.

    ``machine`` None: a plan built without one (by hand, or read back); only the plan's facts.
    """
    host = host_summary(machine, plan)
    if not (plan.ok and plan.packages):
        return replace(plan, host=host)
    image: Union[BaseImage, Refusal]
    stack: Union[CondaStack, Refusal]
    try:
        image = choose_base_image(plan, machine, kb)
    except TorchsmithError as exc:
        image = Refusal.of(exc)
    except (KeyError, TypeError, ValueError) as exc:  # an overlay's table without a field
        image = _broken_data("containers", exc)
    try:
        stack = conda_stack(plan, kb, "{fmt}")
    except TorchsmithError as exc:
        stack = Refusal.of(exc)
    except (KeyError, TypeError, ValueError) as exc:
        stack = _broken_data("formats", exc)
    return replace(plan, host=host, base_image=image, conda_stack=stack)


def _broken_data(document: str, exc: Exception) -> Refusal:
    """The plan stands; only the format that needs this document says what it lacks."""
    return Refusal("kb-invalid", f"the {document} data lacks what this plan needs ({exc!r})",
                   hint=f"fix {document}.json in the --kb overlay, or remove it", data_error=True)
