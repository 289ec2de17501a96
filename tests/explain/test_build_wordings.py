"""Messages of a compiled research extension's build (gcc, nvcc's EDG front end, MSVC, apex's and
flash-attn's setup.py) and of its first import: what each proves, and the look-alike texts that
must not be read the same way."""

from __future__ import annotations

from tests.explain.test_signatures import CATALOG, KB, stated

from torchsmith.explain.matcher import explain_report


def test_a_cstdint_type_missing_from_std_is_a_compiler_newer_than_the_source() -> None:
    # nvcc (EDG) and GCC wordings; GCC 13's libstdc++ stopped including <cstdint> transitively
    for line in ('impl.h(24): error: namespace "std" has no member "uintptr_t"\n',
                 'impl.h(37): error: identifier "uint32_t" is undefined\n',
                 "src/a.h:12:5: error: 'uint64_t' does not name a type\n",
                 "src/a.h:12:5: error: 'uintptr_t' is not a member of 'std'\n"):
        assert stated(line) == ["compiler-too-new-for-source"], line
    # Counter-cases: a torch name missing is a source for another torch; other std names are not this.
    assert stated('error: namespace "at" has no member "Type"\n') == ["extension-source-needs-other-torch"]
    assert stated('error: namespace "std" has no member "optional"\n') == []


def test_a_missing_third_party_header_is_a_family_and_torchs_own_headers_are_not() -> None:
    msvc = 'fatal error C1083: Cannot open include file: "glm/glm.hpp": No such file or directory\n'
    sparsehash = "hashmap_cpu.hpp:4:10: fatal error: google/dense_hash_map: No such file or directory\n"
    for line in ("fatal error: EGL/egl.h: No such file or directory\n", msvc, sparsehash):
        (found,) = explain_report(line, CATALOG, kb=KB).explanations
        assert found.signature.id == "build-library-headers-missing" and len(found.candidates) == 3
    # torch's removed TH/THC headers prove the source needs an older torch (removed in torch 1.11/1.12)
    assert stated("dcn_v2_cpu.cpp:7:10: fatal error: TH/TH.h: No such file or directory\n") == [
        "extension-source-needs-other-torch"]
    for header in ("Python.h", "cuda_runtime.h", "cstdint", "bits/c++config.h"):
        text = f"fatal error: {header}: No such file or directory\n"
        assert "build-library-headers-missing" not in stated(text)


def test_setup_scripts_own_nvcc_checks() -> None:
    # apex's raise_if_cuda_home_none / flash-attn's check_if_cuda_home_none, and a shell without nvcc
    assert stated("UserWarning: mamba_ssm was requested, but nvcc was not found.\n") == ["cuda-home-not-set"]
    shell = "Obtained compute capability 80 from PyTorch\nsh: 1: nvcc: not found\n"
    assert stated(shell) == ["cuda-home-not-set"]
    # apex's check_cuda_torch_binary_vs_bare_metal refuses any difference, minor included
    apex = ("Cuda compilation tools, release 12.3, V12.3.52\n"
            "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match "
            "the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.\n")
    (found,) = explain_report(apex, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-cuda-mismatch"
    assert (found.facts["torch_cuda"], found.facts["toolkit_cuda"]) == ("12.1", "12.3")


def test_an_extensions_own_kernel_check_reporting_no_kernel_image_names_its_kernel() -> None:
    text = ("CUDA kernel failed : no kernel image is available for execution on the device\n"
            "void group_points_kernel_wrapper(int, int, const float*) at L:38 in group_points_gpu.cu\n")
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "extension-arch-not-compiled"
    assert found.facts["kernel"] == "group_points_kernel_wrapper"
    # Counter-case: CUDA's message alone does not say whose kernel it is.
    cuda = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    assert stated(cuda) == ["no-kernel-image"]


def test_a_companions_own_module_missing_a_torch_symbol_is_the_companion_for_another_torch() -> None:
    symbol = "undefined symbol: _ZN2at13nanmedian_outERNS_6TensorES1_RKS0_lb\n"
    for library in ("/usr/local/lib/python3.6/dist-packages/_XLAC.cpython-36m-x86_64-linux-gnu.so",
                    "/venv/lib/python3.10/site-packages/torchaudio/lib/libtorchaudio.so"):
        assert stated(f"ImportError: {library}: {symbol}") == ["companion-needs-other-torch"], library
    # Counter-case: any other extension's module is the extension built against another torch.
    mmcv = "/venv/lib/python3.10/site-packages/mmcv/_ext.cpython-310-x86_64-linux-gnu.so"
    assert stated(f"ImportError: {mmcv}: {symbol}") == ["extension-abi-mismatch"]


def test_a_core_thrust_name_missing_is_a_toolkit_newer_than_the_source() -> None:
    # CCCL (CUDA 12.x, 13) removed transitive includes; sort_by_key is in every Thrust release
    line = 'src/spmm.cu(112): error: namespace "thrust" has no member "sort_by_key"\n'
    (found,) = explain_report(line, CATALOG, kb=KB).explanations
    assert found.signature.id == "cuda-toolkit-too-new-for-source" and found.facts["name"] == "sort_by_key"
    # Counter-case: a Thrust name that is not one of its long-standing algorithms proves nothing here.
    assert stated('error: namespace "thrust" has no member "cuda_cub"\n') == []


def test_pybind11s_unregistered_default_argument_type_is_a_family() -> None:
    # pybind11/attr.h: process_attribute<arg_v> (debug and release wordings)
    for text in ("ImportError: arg(): could not convert default argument 'timer: tv::Timer' in method "
                 "'<class 'spconv.core_cc.Gemm'>.__init__' into a Python object (type not registered yet?)\n",
                 "ImportError: arg(): could not convert default argument into a Python object (type not "
                 "registered yet?). Compile in debug mode for more information.\n"):
        (found,) = explain_report(text, CATALOG, kb=KB).explanations
        assert found.signature.id == "pybind11-type-not-registered" and len(found.candidates) == 3


_PAGE = "https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/py38_cu110_pyt171/download.html"
_NONE = ("ERROR: Could not find a version that satisfies the requirement {0} (from versions: none)\n"
         "ERROR: No matching distribution found for {0}\n")


def test_a_torch_build_page_read_and_no_version_found_is_the_project_without_that_wheel() -> None:
    # pip's "Looking in links:" (search_scope.py) then "(from versions: none)": nothing installs here
    text = f"Looking in links: {_PAGE}\n" + _NONE.format("pytorch3d")
    found = [e.signature.id for e in explain_report(text, CATALOG, kb=KB).explanations]
    assert found[0] == "companion-wheels-not-published"
    pyg = "Looking in links: https://data.pyg.org/whl/torch-2.5.0+cu124.html\n" + _NONE.format("pyg-lib")
    assert "companion-wheels-not-published" in stated(pyg)
    # Counter-cases: torch itself missing, a page not named for a torch build, a version that exists.
    for other in (f"Looking in links: {_PAGE}\n" + _NONE.format("torch"),
                  "Looking in links: https://example.org/wheels/\n" + _NONE.format("pytorch3d"),
                  f"Looking in links: {_PAGE}\n" + _NONE.format("pytorch3d").replace("none", "0.7.4")):
        assert "companion-wheels-not-published" not in stated(other), other
    # pip could not read the page (network, TLS): "none" is no proof; a 404 for the page still is
    unread = (f"Looking in links: {_PAGE}\nWARNING: Could not fetch URL {_PAGE}: There was a problem "
              "confirming the ssl certificate - skipping\n" + _NONE.format("pytorch3d"))
    assert "companion-wheels-not-published" not in stated(unread)
    gone = unread.replace("There was a problem confirming the ssl certificate",
                          f"404 Client Error: Not Found for url: {_PAGE}")
    assert "companion-wheels-not-published" in stated(gone)


def test_windows_compilers_missing_python_headers_in_any_language() -> None:
    # MSVC's C1083 keeps its code and the file name in every UI language; TinyCC (triton-windows'
    # bundled compiler) says "include file '%s' not found" (tccpp.c).
    cases = ('x.h(12): fatal error C1083: \u65e0\u6cd5\u6253\u5f00\u5305\u62ec\u6587\u4ef6: '
             '\u201cPython.h\u201d: No such file or directory\n',
             "cuda_utils.c(12): fatal error C1083: \u041d\u0435 \u0443\u0434\u0430\u0435\u0442\u0441\u044f: "
             "Python.h: No such file or directory,\n",
             "x.c(3): fatal error C1083: Impossible d'ouvrir le fichier : 'Python.h' : No such file\n",
             "x.c(3): fatal error C1083: include ファイルを開けません。'Python.h':No such file\n",
             "C:/Temp/cuda_utils.c:13: error: include file 'Python.h' not found\n",
             "E:/python_embeded/Include/Python.h:12: error: include file 'pyconfig.h' not found\n",
             "/usr/include/python3.12/Python.h:12:10: fatal error: pyconfig.h: No such file or directory\n")
    for text in cases:
        assert stated(text) == ["python-headers-missing"], text
    (found,) = explain_report(cases[4], CATALOG, kb=KB).explanations
    assert "embeddable Python" in found.fix[0]
    # Counter-cases: another header whose name ends the same, another compiler's missing include.
    mine = "fatal error C1083: Cannot open include file: 'MyPython.h': No such file or directory\n"
    numpy = "a.c:1: error: include file 'numpy/arrayobject.h' not found\n"
    for text in (mine, numpy):
        assert "python-headers-missing" not in stated(text), text


def test_msvc_started_without_its_environment_and_tritons_own_msvc_warning() -> None:
    # cl.exe that cannot open its own C++ library's or the SDK's CRT headers ran without vcvarsall's INCLUDE.
    for text in ("fatal error C1083: Cannot open include file: 'algorithm': No such file or directory\n",
                 "fatal error C1083: Cannot open include file: 'stdio.h': No such file or directory\n",
                 "C:\\x\\windows_utils.py:186: UserWarning: Failed to find MSVC.\n"):
        assert stated(text) == ["msvc-build-tools-missing"], text
    # Counter-case: a project's own header is the missing-library family, not the compiler's setup.
    third_party = ("fatal error C1083: Cannot open include file: 'algorithm_ext.hpp': "
                   "No such file or directory\n")
    assert "msvc-build-tools-missing" not in stated(third_party)


def test_msvc_stl_refusing_an_old_nvcc_is_the_unsupported_pair() -> None:
    text = "yvals_core.h(902): error STL1002: Unexpected compiler version, expected CUDA 12.4 or newer.\n"
    (found,) = explain_report(text, CATALOG, kb=KB).explanations
    assert found.signature.id == "unsupported-msvc" and found.facts["cuda_min"] == "12.4"
    assert found.fix[0].startswith("Install CUDA 12.4 or newer")
    # Counter-case: the STL refusing an old MSVC or Clang (STL1001/STL1000) says nothing of CUDA.
    old_msvc = "error STL1001: Unexpected compiler version, expected MSVC 19.44 or newer.\n"
    assert "unsupported-msvc" not in stated(old_msvc)


def test_tritons_compiler_command_from_a_cc_that_is_not_one_compiler() -> None:
    # triton/runtime/build.py takes CC as is; a path it finds itself is one executable.
    listed = (r"Failed to compile. cc_cmd: ['C:\\VS\\x86\\cl.exe;C:\\VS\\x64\\cl.exe;', "
              r"'C:\\Temp\\cuda_utils.c', '-O3']" "\n")
    folder = r"Failed to compile. cc_cmd: ['C:\\VS\\x64\\', 'C:\\Temp\\cuda_utils.c', '-O3']" "\n"
    for text in (listed, folder):
        assert stated(text) == ["cc-env-var-invalid"], text
    # Counter-case: one compiler executable (the bundled TinyCC) that failed for another reason.
    one = r"Failed to compile. cc_cmd: ['C:\\py\\triton\\runtime\\tcc\\tcc.exe', 'C:\\Temp\\main.c']" "\n"
    assert "cc-env-var-invalid" not in stated(one)
