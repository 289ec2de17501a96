"""Hardware as people describe it: a GPU by product name or family, and no driver given."""

from __future__ import annotations

from tests.plan.plan_hosts import host

from torchsmith.kb import load_kb
from torchsmith.plan.model import Plan, Request
from torchsmith.plan.resolve import resolve

KB = load_kb(packaged_only=True)


def _plan(**machine: object) -> Plan:
    return resolve(host(**machine), Request(), KB)  # type: ignore[arg-type]


def _torch(plan: Plan) -> str:
    return next(p.version for p in plan.packages if p.name == "torch")


def test_a_product_name_resolves_through_the_gpu_table() -> None:
    by_name = _plan(python="3.11", gpus=["RTX 3090"], driver="550.54.14")
    by_cc = _plan(python="3.11", gpus=["8.6"], driver="550.54.14")
    assert by_name.ok and (_torch(by_name), by_name.variant) == (_torch(by_cc), by_cc.variant)
    assert any("compute capability 8.6" in r for r in by_name.reasons)
    assert not any("family" in w for w in by_name.warnings)


def test_a_family_is_covered_model_by_model_and_said_so() -> None:
    plan = _plan(python="3.11", gpus=["RTX 30"], driver="550.54.14")
    assert plan.ok
    assert any("RTX 30 names a family" in w and "--gpu 8.6" in w for w in plan.warnings)
    assert any("GeForce RTX 3090" in r or "GeForce RTX 3060" in r for r in plan.reasons)


def test_an_unknown_name_plans_for_the_drivers_era_and_says_so() -> None:
    plan = _plan(python="3.11", gpus=["Quadro Nonesuch 9"], driver="550.54.14")
    assert plan.ok
    assert any("unknown model (Quadro Nonesuch 9)" in a for a in plan.assumptions)


def test_an_unknown_driver_is_an_assumption_said_first_with_the_flag_that_removes_it() -> None:
    plan = _plan(python="3.11", gpus=["8.6"])
    assert plan.ok
    first = plan.assumptions[0]
    assert first.startswith("NVIDIA driver not given: assumed one of the CUDA ")
    assert "--driver VERSION" in first and plan.variant is not None and plan.variant in first
    newest = _plan(python="3.11", gpus=["8.6"], driver="595.45.04")
    if (_torch(newest), newest.variant) != (_torch(plan), plan.variant):
        assert f"torch {_torch(newest)} {newest.variant}" in first  # what a newer driver gets


def test_a_given_driver_removes_the_assumption() -> None:
    plan = _plan(python="3.11", gpus=["8.6"], driver="595.45.04")
    assert not any(a.startswith("NVIDIA driver not given") for a in plan.assumptions)
