"""pip's own words for where a package is installed (req_install.py's "Requirement already
satisfied: <req> in <location>", misc.py's "pip X from <location>/pip (python 3.Y)") against the
site-packages a failing import's frames run from. Texts written from those formats; counter-cases
where the places agree, the module differs, or no frame shows an interpreter's site-packages."""

from __future__ import annotations

from typing import List

from tests.explain.test_signatures import KB, stated

from torchsmith.explain.extract import extract

_WINDOWS = ("C:\\Users\\me>pip install sageattention\n"
            "Requirement already satisfied: sageattention in {location} (1.0.6)\n\n"
            "Traceback (most recent call last):\n"
            '  File "D:\\ComfyUI_windows_portable\\ComfyUI\\nodes.py", line 2131, in load_custom_node\n'
            "    module_spec.loader.exec_module(module)\n"
            '  File "D:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\comfy_kit\\attn.py", '
            "line 3, in <module>\n"
            "    import {module}\n"
            "ModuleNotFoundError: No module named '{module}'\n")

_POSIX = ("$ pip --version\npip 24.0 from /usr/lib/python3/dist-packages/pip (python 3.10)\n"
          "$ pip install flash-attn --no-build-isolation\n"
          "Successfully installed flash-attn-2.5.8\n"
          "$ python train.py\nTraceback (most recent call last):\n"
          '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 41, '
          "in <module>\n"
          "    import flash_attn\n"
          "ModuleNotFoundError: No module named 'flash_attn'\n")


def kinds(text: str) -> List[str]:
    return [e.kind for e in extract(text, KB).installer_errors]


def test_a_module_pip_put_in_one_site_packages_missing_where_the_frames_run_is_another_python() -> None:
    user_site = "c:\\users\\me\\appdata\\local\\programs\\python\\python312\\lib\\site-packages"
    text = _WINDOWS.format(location=user_site, module="sageattention")
    assert "installed-for-another-python" in kinds(text)
    assert stated(text) == ["different-python-interpreter"]
    # pip's own interpreter line with what it installed reads the same
    assert stated(_POSIX) == ["different-python-interpreter"]


def test_the_same_site_packages_in_pips_spelling_is_no_other_python() -> None:
    # pip lower-cases on Windows (normcase) and prints a location below its working directory relative
    same = "d:\\comfyui_windows_portable\\python_embeded\\lib\\site-packages"
    assert "installed-for-another-python" not in kinds(_WINDOWS.format(location=same, module="sageattention"))
    relative = _POSIX.replace("pip 24.0 from /usr/lib/python3/dist-packages/pip",
                              "pip 24.0 from ./lib/python3.10/site-packages/pip")
    assert "installed-for-another-python" not in kinds(relative.replace("/usr/lib", "/opt/conda/lib"))


def test_another_module_or_no_interpreter_frame_proves_nothing() -> None:
    user_site = "c:\\users\\me\\appdata\\local\\programs\\python\\python312\\lib\\site-packages"
    other_module = _WINDOWS.format(location=user_site, module="sageattention").replace(
        "No module named 'sageattention'", "No module named 'triton'")
    assert "installed-for-another-python" not in kinds(other_module)
    script_only = "\n".join(line for line in _POSIX.splitlines() if "site-packages/transformers" not in line)
    assert "installed-for-another-python" not in kinds(script_only)
    assert "different-python-interpreter" not in stated(script_only)
