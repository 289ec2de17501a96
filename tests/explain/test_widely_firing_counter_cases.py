"""Counter-cases for the assertions that fire most widely: an unseen text of the same shape whose
cause is another, where the older signature stated its own. Each keeps the shape it was written
for stating its cause."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_nvcc_not_found_answering_a_lookup_by_hand_is_not_a_failed_build() -> None:
    # an issue template's environment dump: the user typed `nvcc --version`; nothing was being built
    dump = ("Environment:\n - torch 2.1.0+cu118\n$ nvcc --version\nbash: nvcc: command not found\n\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert "cuda-home-not-set" not in stated(dump)
    assert "cuda-home-not-set" not in stated("-bash: nvcc: command not found\n")
    # the same lookup beside a build that needed nvcc, and a build script's own shell: the cause
    build = ("$ nvcc --version\nbash: nvcc: command not found\n"
             "  Building wheel for flash-attn (setup.py) ... error\n")
    assert stated(build) == ["cuda-home-not-set"]
    script = "Obtained compute capability 80 from PyTorch\nsh: 1: nvcc: not found\n"
    assert stated(script) == ["cuda-home-not-set"]


def test_torchs_cl_version_warning_is_not_missing_build_tools_where_the_build_went_on() -> None:
    # cpp_extension warns and goes on; setuptools finds MSVC itself (vswhere) and runs cl.exe
    warning = ("C:\\venv\\lib\\site-packages\\torch\\utils\\cpp_extension.py:383: UserWarning: "
               "Error checking compiler version for cl: [WinError 2] The system cannot find the file "
               "specified\n")
    ran = (warning + "C:\\Program Files\\Microsoft Visual Studio\\2022\\BuildTools\\VC\\Tools\\MSVC"
           "\\14.38.33130\\bin\\HostX86\\x64\\cl.exe /c /nologo /O2 csrc/ext.cpp\n"
           "csrc/ext.cpp(12): fatal error C1083: Cannot open include file: 'sparsehash/dense_hash_map': "
           "No such file or directory\n")
    assert "msvc-build-tools-missing" not in stated(ran)
    nvcc = warning + "nvcc fatal   : Unsupported gpu architecture 'compute_89'\n"
    assert stated(nvcc) == ["nvcc-unsupported-arch"]
    # the warning alone, or beside setuptools' own refusal: the build tools are missing
    assert stated(warning) == ["msvc-build-tools-missing"]
    refused = warning + "error: Microsoft Visual C++ 14.0 or greater is required.\n"
    assert stated(refused) == ["msvc-build-tools-missing"]


def test_an_extensions_own_function_taking_torch_types_is_not_torchs_symbol() -> None:
    # the module lacks its own function (a CUDA source not compiled in): at::Tensor is only a parameter
    own = ("ImportError: /home/u/DCNv2/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
           "_Z19dcn_v2_cuda_forwardRKN2at6TensorES2_S2_S2_S2_iiiiiiiii\n")
    nested = "ImportError: /x/site-packages/mylib/_C.so: undefined symbol: _ZN5mylib7forwardERKN2at6TensorE\n"
    # a name that merely contains '2at' (a 12-character attention_op)
    inside = "ImportError: /x/fused/_C.so: undefined symbol: _ZN12attention_op7forwardEPKfPfiii\n"
    for text in (own, nested, inside):
        assert "extension-abi-mismatch" not in stated(text), text
    # torch's own functions: c10::cuda::SetDevice, c10::Error's constructor taking a __cxx11 string
    for symbol in ("_ZN3c104cuda9SetDeviceEi",
                   "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"):
        text = f"ImportError: /x/site-packages/flash_attn_2_cuda.so: undefined symbol: {symbol}\n"
        assert stated(text) == ["extension-abi-mismatch"], symbol
