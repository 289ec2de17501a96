"""pip on Windows (its own location lines on a drive, or the shell's prompt before pip) that found no
torch==X+variant while it listed plain releases only: where the data says X+variant has a Windows
wheel for the Python pip ran under, the PyTorch index was not read. Texts written from pip's formats
(req_install.py, resolvelib/factory.py); counter-cases where the Python lacks the build, nothing was
listed (no torch fits at all: a 32-bit Python), the text names the PyTorch index, or no Windows."""

from __future__ import annotations

from typing import List

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract

_TEXT = ("(venv) C:\\Users\\me\\app>pip install -r requirements.txt\n"
         "Requirement already satisfied: numpy in c:\\users\\me\\app\\venv\\lib\\site-packages (1.26.4)\n"
         "ERROR: Could not find a version that satisfies the requirement {pin} (from versions: {listed})\n"
         "ERROR: No matching distribution found for {pin}\n")
_PY312 = "2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1"  # the Windows releases with Python 3.12 wheels, to 2.3.1


def kinds(text: str) -> List[str]:
    return [e.kind for e in extract(text, KB).installer_errors]


def test_a_windows_build_for_the_python_pip_ran_under_is_the_index_not_read() -> None:
    text = _TEXT.format(pin="torch==2.2.2+cu121", listed=_PY312)
    assert "index-not-given" in kinds(text)
    assert stated(text) == ["pytorch-index-not-given"]
    prompt_only = text.replace("Requirement already satisfied: numpy in c:\\users\\me\\app\\venv\\lib\\"
                               "site-packages (1.26.4)\n", "")
    assert stated(prompt_only) == ["pytorch-index-not-given"]


def test_no_statement_where_the_python_lacks_it_nothing_fits_the_index_is_named_or_no_windows() -> None:
    no_py312 = _TEXT.format(pin="torch==2.1.0+cu121", listed=_PY312)  # 2.1.0 has no cp312 wheel
    none_listed = _TEXT.format(pin="torch==2.2.2+cu121", listed="none")
    named = _TEXT.format(pin="torch==2.2.2+cu121", listed=_PY312).replace(
        "pip install -r requirements.txt", "pip install -r requirements.txt --extra-index-url "
        "https://download.pytorch.org/whl/cu118")
    linux = _TEXT.format(pin="torch==2.2.2+cu121", listed=_PY312).replace(
        "(venv) C:\\Users\\me\\app>", "$ ").replace("c:\\users\\me\\app\\venv\\lib\\site-packages",
                                                     "/home/me/app/venv/lib/python3.12/site-packages")
    for text in (no_py312, none_listed, named, linux):
        assert "index-not-given" not in kinds(text)
