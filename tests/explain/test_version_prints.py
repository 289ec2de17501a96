"""Versions a text shows in Python's and pip's own output formats, read as installed versions: pip
show's "Name:" line with the "Version:" line it prints next (src/pip/_internal/commands/show.py),
and a module's __version__ printed on the line after the expression (the REPL's quoted echo,
IPython's Out[n], print()'s first value). Texts written from those formats; counter-cases."""

from __future__ import annotations

from tests.explain.test_signatures import stated

from torchsmith.explain.extract.distributions import installed_versions

_NMS = "RuntimeError: operator torchvision::nms does not exist\n"


def test_pip_show_and_printed_versions_are_read() -> None:
    assert installed_versions("Name: torch\nVersion: 2.1.0\nSummary: Tensors\n") == {"torch": "2.1.0"}
    repl = ">>> torch.__version__\n'2.3.0+cu121'\n>>> torchvision.__version__\n'0.15.2+cu117'\n"
    assert installed_versions(repl) == {"torch": "2.3.0+cu121", "torchvision": "0.15.2+cu117"}
    ipython = "In [2]: torchvision.__version__\nOut[2]: '0.16.0'\n"
    assert installed_versions(ipython) == {"torchvision": "0.16.0"}
    printed = 'python -c "import torch; print(torch.__version__, torch.version.cuda)"\n2.3.1+cu121 12.1\n'
    assert installed_versions(printed) == {"torch": "2.3.1+cu121"}


def test_an_assignment_or_a_line_that_is_no_version_is_not_read() -> None:
    assert installed_versions('torch.__version__ = "1.0"\nimport torch\n') == {}
    assert installed_versions(">>> torchvision.__version__\nTraceback (most recent call last):\n") == {}
    assert installed_versions("Name: torch\nSummary: Tensors\n") == {}


def test_printed_versions_decide_a_companion_built_for_another_torch() -> None:
    # torchvision 0.15.2's Requires-Dist pins torch==2.0.1 (torch_requires.json)
    pair = ">>> torch.__version__\n'2.3.0+cu121'\n>>> torchvision.__version__\n'{}'\n"
    assert stated(pair.format("0.15.2+cu117") + _NMS) == ["companion-needs-other-torch"]
    # the pair torchvision 0.18.0 was released for: the family stays a family
    assert stated(pair.format("0.18.0+cu121") + _NMS) == ["torchvision-ops-missing"]
