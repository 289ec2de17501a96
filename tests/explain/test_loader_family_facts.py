"""Loader and compiled-companion failures decided by a fact the text holds (a compiled module shown
absent, the file that uses it, a header torch removed, whose symbol a library lacks), with the texts
where that fact is absent or points elsewhere, which stay a family or say nothing."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_a_packages_compiled_module_shown_absent_is_an_extension_not_built() -> None:
    # CPython: "cannot import name %R from %R (%S)" once the submodule file was not found
    text = ("Traceback (most recent call last):\n"
            '  File "/home/ana/detr/models/ops/functions.py", line 4, in <module>\n'
            "    from maskrcnn_benchmark import _C\n"
            "ImportError: cannot import name '_C' from 'maskrcnn_benchmark' "
            "(/home/ana/maskrcnn-benchmark/maskrcnn_benchmark/__init__.py)\n")
    assert stated(text) == ["extension-not-built"]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert "maskrcnn_benchmark" in found.cause and "compiled file is not there" in found.cause


def test_torchs_own_compiled_module_missing_is_not_a_packages_extension() -> None:
    for owner in ("torch", "torchvision", "torchaudio"):
        text = f"ImportError: cannot import name '_C' from '{owner}' (/src/{owner}/{owner}/__init__.py)\n"
        assert "extension-not-built" not in stated(text), owner


def test_undefined_c_module_in_a_packages_file_is_an_extension_not_built() -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.10/site-packages/roi_tools/layers/roi_align.py", '
            "line 21, in forward\n"
            "    output = _C.roi_align_forward(input, roi, spatial_scale)\n"
            "NameError: name '_C' is not defined\n")
    assert stated(text) == ["extension-not-built"]
    assert stated("error: name '_C' is not defined in roi_align.py\n") == ["extension-not-built"]


def test_undefined_c_module_in_torch_or_nowhere_shown_is_not_an_extension_not_built() -> None:
    in_torch = ("Traceback (most recent call last):\n"
                '  File "/home/u/pytorch/torch/__init__.py", line 61, in <module>\n'
                "    _C._initExtension()\n"
                "NameError: name '_C' is not defined\n")
    assert "extension-not-built" not in stated(in_torch)
    assert "extension-not-built" not in stated("NameError: name '_C' is not defined\n")
    assert "extension-not-built" not in stated("error: name '_C' is not defined in __init__.py\n")


def test_a_frame_line_cut_at_its_head_still_names_its_file() -> None:
    text = ("\\envs\\seg\\lib\\site-packages\\roi_tools\\layers\\nms.py\", line 9, in nms\n"
            "    keep = _C.nms(boxes, scores, thresh)\n"
            "NameError: name '_C' is not defined\n")
    assert stated(text) == ["extension-not-built"]


def test_a_removed_th_header_retold_as_its_include_line_is_source_for_another_torch() -> None:
    # torch 1.11 removed the THC headers (its release notes); the compiler's words retyped around <...>
    text = "building roiaware_pool3d: <THCUNN/THCUNN.h> No such file or directory, with torch 1.13\n"
    assert stated(text) == ["extension-source-needs-other-torch"]
    assert stated("src/iou3d.cpp includes <THC/THC.h> and compiles fine with torch 1.10\n") == []


def test_a_companion_library_lacking_a_torch_c_shim_symbol_needs_another_torch() -> None:
    # torch/csrc/stable/c/shim.h: torch_* C functions, each added in one torch release
    text = ("OSError: /opt/venv/lib/python3.12/site-packages/torchcodec/libtorchcodec_core7.so: "
            "undefined symbol: torch_dtype_float8_e8m0fnu\n")
    assert stated(text) == ["companion-needs-other-torch"]
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.cause.startswith("torchcodec")
    assert stated("libtorchaudio.so: undefined symbol: aoti_torch_get_device_index\n") == [
        "companion-needs-other-torch"]
    told = "undefined symbol: torch_new_scalar_int while loading libtorchcodec_core8.so\n"
    assert stated(told) == ["companion-needs-other-torch"]


def test_a_companion_library_lacking_another_librarys_symbol_is_not_a_torch_mismatch() -> None:
    # an FFmpeg function: the FFmpeg found is another release, not torch
    ffmpeg = "OSError: libtorchcodec_core7.so: undefined symbol: av_packet_side_data_get\n"
    assert "companion-needs-other-torch" not in stated(ffmpeg)
    # a torch C symbol missing from a library that is no companion's: which package is not shown
    other = "OSError: /tmp/build/libmykernels.so: undefined symbol: torch_dtype_float4_e2m1fn_x2\n"
    assert "companion-needs-other-torch" not in stated(other)


def test_torchs_c_shim_names_are_torchs_symbols() -> None:
    from torchsmith.explain.extract.loader import symbol_owner
    assert symbol_owner("torch_dtype_float4_e2m1fn_x2", None)[0] == "torch"
    assert symbol_owner("aoti_torch_create_tensor_from_blob", None)[0] == "torch"
    assert symbol_owner("torchvision_version", None)[0] is None


C10_126 = ('OSError: [WinError 126] The specified module could not be found. Error loading '
           '"C:\\Users\\me\\venv\\Lib\\site-packages\\torch\\lib\\{dll}" or one of its dependencies.\n')


def test_c10_dll_not_loading_is_the_visual_cpp_runtime_missing() -> None:
    # c10.dll imports only Windows, the UCRT and MSVCP140/VCRUNTIME140(_1) in every wheel read
    assert stated(C10_126.format(dll="c10.dll")) == ["vc-redist-missing"]
    (found,) = explain_report(C10_126.format(dll="c10.dll"), CATALOG, kb=KB).explanations
    assert "VCRUNTIME140.DLL" in found.cause
    ctypes_words = ("FileNotFoundError: Could not find module 'C:\\Python39\\lib\\site-packages\\torch\\lib\\"
                    "c10.dll' (or one of its dependencies). "
                    "Try using the full path with constructor syntax.\n")
    assert stated(ctypes_words) == ["vc-redist-missing"]


def test_a_torch_dll_that_needs_torchs_own_dlls_stays_the_family() -> None:
    # shm.dll also imports c10.dll and torch_cpu.dll: which one failed is not shown
    assert stated(C10_126.format(dll="shm.dll")) == ["windows-dll-load-failed"]
    # another package's DLL of a name torch also ships
    other = ("FileNotFoundError: Could not find module 'C:\\env\\Lib\\site-packages\\uvloop\\uv.dll' "
             "(or one of its dependencies).\n")
    assert "vc-redist-missing" not in stated(other)


def test_c10_dll_failing_otherwise_or_in_a_gpu_build_is_not_judged_by_the_cpu_wheels() -> None:
    init = ('OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. '
            'Error loading "C:\\venv\\Lib\\site-packages\\torch\\lib\\c10.dll" or one of its dependencies.\n')
    assert "vc-redist-missing" not in stated(init)
    gpu = "torch 2.5.1+cu124\n" + C10_126.format(dll="c10.dll")
    assert "vc-redist-missing" not in stated(gpu)


NMS = ('Traceback (most recent call last):\n'
       '  File "/venv/lib/python3.11/site-packages/torchvision/_meta_registrations.py", '
       'line 164, in <module>\n'
       '    @torch.library.register_fake("torchvision::nms")\n'
       'RuntimeError: operator torchvision::nms does not exist\n')


def test_a_companion_shown_at_a_release_pinned_to_another_torch_needs_that_torch() -> None:
    # torchvision 0.21.0's Requires-Dist pins torch==2.6.0 (companions.json, read from its wheels)
    listing = "torch        2.8.0+cu128\ntorchvision  0.21.0+cu124\n"
    assert stated(listing + NMS) == ["companion-needs-other-torch"]
    (found,) = explain_report(listing + NMS, CATALOG, kb=KB).explanations
    assert "torch==2.6.0" in found.cause and "2.8.0+cu128" in found.cause
    pip = "Successfully installed torch-2.8.0 torchvision-0.21.0\n"
    assert stated(pip + NMS) == ["companion-needs-other-torch"]


def test_a_companion_whose_pin_the_torch_meets_or_that_the_data_lacks_stays_the_family() -> None:
    matching = "torch        2.8.0\ntorchvision  0.23.0\n"  # 0.23.0 pins torch==2.8.0
    assert stated(matching + NMS) == ["torchvision-ops-missing"]
    unknown = "torch        2.8.0\ntorchvision  0.0.1\n"
    assert stated(unknown + NMS) == ["torchvision-ops-missing"]
    assert stated(NMS) == ["torchvision-ops-missing"]


def test_a_mismatched_companion_beside_another_failure_is_not_its_cause() -> None:
    listing = "torch        2.8.0\ntorchvision  0.21.0\n"
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert "companion-needs-other-torch" not in stated(listing + oom)


def test_installed_versions_are_read_from_pips_own_listings() -> None:
    from torchsmith.explain.extract.distributions import installed_versions
    text = ("torch        2.8.0+cu128\n"
            "Requirement already satisfied: torchvision in ./venv/lib/python3.10/site-packages (0.22.1)\n"
            "[pip3] torchaudio==2.1.0\n"
            "Successfully installed torch-2.9.0 xformers-0.0.32\n"
            "pip install torchvision==0.24.0\n")  # a request, not an installed version
    assert installed_versions(text) == {"torch": "2.9.0", "torchvision": "0.22.1", "torchaudio": "2.1.0",
                                        "xformers": "0.0.32"}


def test_a_third_party_extension_pinned_to_another_torch_is_not_called_a_companion() -> None:
    listing = "torch        2.8.0\nflash-attn   2.5.8\n"
    text = listing + ("ImportError: /venv/lib/python3.11/site-packages/"
                      "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
                      "undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    assert "companion-needs-other-torch" not in stated(text)


def test_a_compiled_module_a_package_tolerates_missing_is_not_the_failure() -> None:
    # vllm's XPU build has no vllm._C and says so in a warning; the failure is elsewhere
    text = ('WARNING 07-12 23:25:17 _custom_ops.py:14] Failed to import from vllm._C with '
            'ModuleNotFoundError("No module named \'vllm._C\'")\n'
            "WARNING 07-12 23:25:17 warn.py:9] ImportError(\"cannot import name '_C' from 'vllm'\")\n")
    assert "extension-not-built" not in stated(text)


def test_a_crash_inside_pybind11s_type_registration_is_a_pybind11_clash() -> None:
    # glog's failure handler prints the crashing frame as "PC: @ <address> <symbol>" (signalhandler.cc)
    glog = ("*** Aborted at 1600000000 (unix time) try \"date -d @1600000000\" "
            "if you are using GNU date ***\n"
            "PC: @     0x7f0000542db6 pybind11::detail::generic_type::initialize()\n"
            "*** SIGSEGV (@0x0) received by PID 42 (TID 0x7f00) from PID 0; stack trace: ***\n")
    assert stated(glog) == ["pybind11-clash-between-packages"]
    gdb = ("#0  0x00007ffff1234567 in "
           "pybind11::detail::make_new_python_type(pybind11::detail::type_record const&)\n")
    assert stated(gdb) == ["pybind11-clash-between-packages"]
    # pybind11 further down the stack is not where it crashed
    deeper = ("PC: @     0x7f0000001234 at::native::add_out()\n"
              "    @     0x7f0000542db6 pybind11::detail::generic_type::initialize()\n")
    assert "pybind11-clash-between-packages" not in stated(deeper)


def test_a_python_error_in_a_mismatched_companion_is_not_called_a_torch_mismatch() -> None:
    # torchvision 0.21.0 beside torch 2.8.0 is a mismatch, but this failure is an API the caller expects
    text = ("torch        2.8.0\ntorchvision  0.21.0\n"
            "  File \"/venv/lib/python3.11/site-packages/basicsr/data/degradations.py\", "
            "line 8, in <module>\n"
            "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'\n")
    assert "companion-needs-other-torch" not in stated(text)
    pyd = ("torch        2.8.0\ntorchaudio   2.1.0\n"
           "FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\torchaudio\\lib\\"
           "libtorchaudio.pyd' (or one of its dependencies).\n")
    assert "companion-needs-other-torch" in stated(pyd)
