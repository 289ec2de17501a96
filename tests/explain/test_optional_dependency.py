"""A module torch's own code imports that torch does not require (its published Requires-Dist,
kb/data/torch_requires.json): an optional dependency; each with the text that must not be read so."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report

SITE = "/home/u/.venv/lib/python3.11/site-packages"


def _raised_in(path: str, module: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/u/export.py", line 3, in <module>\n'
            "    torch.onnx.export(model, args, dynamo=True)\n"
            f'  File "{path}", line 18, in <module>\n'
            f"    import {module}\n"
            f"ModuleNotFoundError: No module named '{module}'\n")


def test_a_module_no_torch_release_requires_is_an_optional_dependency() -> None:
    text = _raised_in(f"{SITE}/torch/onnx/_internal/exporter/_core.py", "onnxscript")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "optional-dependency-not-installed"
    assert "imports onnxscript" in found.cause and "no torch release lists it" in found.cause
    assert "torch/onnx/_internal/exporter/_core.py" in found.cause


def test_a_module_torch_declares_as_an_extra_names_the_extra() -> None:
    text = _raised_in(f"{SITE}/torch/utils/_config_module.py", "yaml")  # pyyaml installs yaml
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "optional-dependency-not-installed"
    assert "torch[pyyaml]" in found.cause


def test_a_requirement_torch_installs_or_torch_own_module_is_not_optional() -> None:
    # sympy and typing_extensions are requirements; torchgen ships in torch's own wheel
    for module in ("sympy", "typing_extensions", "torchgen", "torch._C"):
        assert "optional-dependency-not-installed" not in stated(
            _raised_in(f"{SITE}/torch/__init__.py", module)), module
    # nvidia-* wheels install the nvidia namespace
    assert "optional-dependency-not-installed" not in stated(
        _raised_in(f"{SITE}/torch/__init__.py", "nvidia.cudnn"))


def test_raised_outside_torch_is_not_torch_optional_dependency() -> None:
    # the user's own import, and another package's: their requirements are not torch's
    own = "Traceback (most recent call last):\n  File \"/home/u/export.py\", line 3\n" \
          "ModuleNotFoundError: No module named 'onnxscript'\n"
    assert "optional-dependency-not-installed" not in stated(own)
    other = _raised_in(f"{SITE}/ultralytics/utils/export.py", "onnxscript")
    assert "optional-dependency-not-installed" not in stated(other)
    # a torch checkout being built is no installed torch
    build = _raised_in("/src/pytorch/torch/onnx/_internal/exporter/_core.py", "onnxscript")
    assert "optional-dependency-not-installed" not in stated(build)


def test_pkg_resources_from_torch_is_the_setuptools_cause() -> None:
    text = _raised_in(f"{SITE}/torch/utils/cpp_extension.py", "pkg_resources")
    assert stated(text) == ["setuptools-missing"]


def test_a_module_torch_load_unpickles_is_the_checkpoint_s_not_torch_s() -> None:
    # torch.load's unpickler imports the modules a checkpoint names (YOLOv5's 'models'): the
    # innermost frame is torch's, but its line imports nothing of torch's own
    text = ("Traceback (most recent call last):\n"
            '  File "detect.py", line 12, in <module>\n'
            "    model = torch.load('best.pt', map_location='cpu')['model']\n"
            f'  File "{SITE}/torch/serialization.py", line 882, in _load\n'
            "    result = unpickler.load()\n"
            f'  File "{SITE}/torch/serialization.py", line 875, in find_class\n'
            "    return super().find_class(mod_name, name)\n"
            "ModuleNotFoundError: No module named 'models'\n")
    assert "optional-dependency-not-installed" not in stated(text)
    # a frame shown without its line proves no import either
    bare = f'  File "{SITE}/torch/onnx/_internal/exporter/_core.py", line 18, in <module>\n' \
           "ModuleNotFoundError: No module named 'onnxscript'\n"
    assert "optional-dependency-not-installed" not in stated(bare)


def test_the_torch_release_the_text_names_decides_what_it_requires() -> None:
    # numpy was a requirement of torch 1.1 to 1.8.1 and is none of 2.x (torch_requires.json)
    text = _raised_in(f"{SITE}/torch/_tensor.py", "numpy")
    (found,) = explain_report("PyTorch version: 2.4.0\n" + text, CATALOG, kb=KB).explanations
    assert found.signature.id == "optional-dependency-not-installed"
    assert "torch 2.4.0 does not list it" in found.cause
    assert "optional-dependency-not-installed" not in stated("PyTorch version: 1.7.1\n" + text)
    # no release named: what any release required is not called optional
    assert "optional-dependency-not-installed" not in stated(text)


def test_a_submodule_missing_is_an_installed_package_of_another_release() -> None:
    # Python's import names the first part it cannot find: 'onnxscript.ir' missing means onnxscript
    # is installed, a release without that submodule, not that it is not installed
    text = _raised_in(f"{SITE}/torch/onnx/_internal/exporter/_core.py", "onnxscript").replace(
        "    import onnxscript\n", "    from onnxscript import ir\n").replace(
        "No module named 'onnxscript'", "No module named 'onnxscript.ir'")
    assert "optional-dependency-not-installed" not in stated(text)
