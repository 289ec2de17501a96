"""The fatbin reader against cuobjdump, on libraries the real nvcc builds; bad files fail in one line."""

from __future__ import annotations

import glob
import io
import json
import os
import random
import struct
import zipfile
from pathlib import Path
from typing import Dict, List, Set

import pytest
from tests.support.gpubin import LIBRARIES, cuobjdump_listing

from torchsmith.cli import main
from torchsmith.host.live import LiveHost
from torchsmith.kb.fatbin import BinaryError, GpuCode, read_gpu_code, read_path, read_wheel


def _read(path: Path) -> GpuCode:
    with open(path, "rb") as handle:
        return read_gpu_code(handle, os.path.getsize(path), str(path))


def _as_cuobjdump_names(sass: List[str]) -> Set[str]:
    """cuobjdump names a family cubin (sm_120f) by its base arch; the fatbin flag tells them apart."""
    return {name[:-1] if name.endswith("f") else name for name in sass}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_reader_equals_cuobjdump_on_nvcc_libraries(name: str, nvcc_libs: Dict[str, Path],
                                                    cuobjdump: str) -> None:
    code = _read(nvcc_libs[name])
    sass, ptx = code.targets()
    listed_sass, listed_ptx = cuobjdump_listing(cuobjdump, str(nvcc_libs[name]))
    assert listed_sass  # cuobjdump did read it
    assert (_as_cuobjdump_names(sass), set(ptx)) == (listed_sass, listed_ptx)
    _, want_sass, want_ptx = LIBRARIES[name]
    assert (set(sass), set(ptx)) == (want_sass, want_ptx)  # the a/f suffixes nvcc was asked for


@pytest.mark.slow
def test_cuda_toolkit_libraries_agree_with_cuobjdump(cuobjdump: str) -> None:
    libraries = sorted(glob.glob("/usr/local/cuda/targets/*/lib/lib*.so"))
    if not libraries:
        pytest.skip("no CUDA toolkit libraries under /usr/local/cuda")
    for path in libraries:
        listed_sass, listed_ptx = cuobjdump_listing(cuobjdump, path)
        try:
            sass, ptx = _read(Path(path)).targets()
        except BinaryError as exc:
            assert exc.code == "binary-no-gpu-code", f"{path}: {exc}"
            sass, ptx = [], []
        assert (_as_cuobjdump_names(sass), set(ptx)) == (listed_sass, listed_ptx), path


@pytest.mark.slow
def test_wheel_member_is_read_as_a_stream(nvcc_libs: Dict[str, Path], tmp_path: Path) -> None:
    wheel = tmp_path / "torch-9.9.9-cp312-cp312-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/version.py", "cuda = '13.0'\n")
        archive.write(nvcc_libs["libplain.so"], "torch/lib/libtorch_cuda.so")
        archive.write(nvcc_libs["libcompressed.so"], "torch/lib/libc10_cuda.so")  # not a kernel library
    codes = read_path(LiveHost(), str(wheel))
    assert [c.file.rsplit(":", 1)[1] for c in codes] == ["torch/lib/libtorch_cuda.so"]
    assert codes[0].targets() == _read(nvcc_libs["libplain.so"]).targets()


def _pe_with_section(name: bytes, payload: bytes) -> bytes:
    """A minimal PE32+ image: DOS stub, PE header, an empty optional header, one section."""
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 64)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 0, 0x2022)
    data_offset = 64 + len(coff) + 40
    section = struct.pack("<8sIIIIIIHHI", name, len(payload), 0x1000, len(payload), data_offset, 0, 0, 0, 0,
                          0x40000040)
    return dos + coff + section + payload


@pytest.mark.slow
def test_windows_dll_fatbin_in_nv_fatb(nvcc_libs: Dict[str, Path], tmp_path: Path, cuobjdump: str) -> None:
    fatbin = nvcc_libs["kernel.fatbin"].read_bytes()
    dll = tmp_path / "torch_cuda.dll"
    dll.write_bytes(_pe_with_section(b".nv_fatb", fatbin))
    code = _read(dll)
    assert code.fmt == "pe"
    assert code.targets() == (["sm_89"], ["compute_89"])
    assert (set(code.targets()[0]), set(code.targets()[1])) == cuobjdump_listing(
        cuobjdump, str(nvcc_libs["kernel.fatbin"]))


@pytest.mark.slow
def test_corrupt_and_truncated_libraries_fail_in_one_line(nvcc_libs: Dict[str, Path], tmp_path: Path) -> None:
    data = nvcc_libs["libplain.so"].read_bytes()
    start = data.index(struct.pack("<I", 0xBA55ED50))
    bad_magic = tmp_path / "bad-magic.so"
    bad_magic.write_bytes(data[:start] + b"\x01\x02\x03\x04" + data[start + 4:])
    with pytest.raises(BinaryError) as caught:
        _read(bad_magic)
    assert caught.value.code in ("binary-no-gpu-code", "binary-unreadable")
    bad_size = tmp_path / "bad-size.so"  # a container claiming more bytes than its section has
    bad_size.write_bytes(data[:start + 8] + struct.pack("<Q", 1 << 40) + data[start + 16:])
    with pytest.raises(BinaryError, match="corrupt or truncated fatbin"):
        _read(bad_size)
    for cut in (100, len(data) // 2, len(data) - 10):
        truncated = tmp_path / f"cut-{cut}.so"
        truncated.write_bytes(data[:cut])
        with pytest.raises(BinaryError) as caught:
            _read(truncated)
        assert caught.value.code == "binary-unreadable" and "\n" not in str(caught.value)


# Fixed bytes: random ones would differ between xdist workers, which then collect different tests.
_NOISE = bytes(random.Random(4096).getrandbits(8) for _ in range(4096))


@pytest.mark.parametrize("content", [b"", b"hello", b"\x7fELF" + b"\0" * 100, _NOISE, b"MZ" + b"\0" * 200],
                         ids=["empty", "text", "elf-header-only", "noise", "pe-header-only"])
def test_garbage_is_a_one_line_error(content: bytes) -> None:
    with pytest.raises(BinaryError) as caught:
        read_gpu_code(io.BytesIO(content), len(content), "garbage.so")
    assert caught.value.code.startswith("binary-") and "\n" not in str(caught.value)


def test_non_cuda_elf_has_no_gpu_code() -> None:
    with pytest.raises(BinaryError) as caught:
        _read(Path(os.path.realpath("/bin/ls" if os.path.exists("/bin/ls") else "/usr/bin/env")))
    assert caught.value.code == "binary-no-gpu-code"


def test_wheel_without_cuda_library(tmp_path: Path) -> None:
    wheel = tmp_path / "torch-2.5.0-cp312-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("torch/lib/libtorch_cpu.so", b"\x7fELF")
    with open(wheel, "rb") as handle, pytest.raises(BinaryError) as caught:
        read_wheel(handle, str(wheel))
    assert caught.value.code == "wheel-no-cuda-lib"


def test_cli_kb_archs_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.so"
    junk.write_text("not a binary\n")
    assert main(["kb", "archs", str(junk)]) == 1
    err = capsys.readouterr().err
    assert "error[binary-unreadable]" in err and "Traceback" not in err
    assert main(["kb", "archs", str(tmp_path / "absent.so"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["errors"][0]["code"] == "binary-not-found"


@pytest.mark.slow
def test_cli_kb_archs(nvcc_libs: Dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(nvcc_libs["libplain.so"])
    assert main(["kb", "archs", path, "--json"]) == 0
    binary = json.loads(capsys.readouterr().out)["data"]["binaries"][0]
    assert (binary["sass"], binary["ptx"]) == (["sm_75", "sm_90a", "sm_120f"], ["compute_80", "compute_90a"])
    assert main(["kb", "archs", path]) == 0
    assert "SASS sm_75" in capsys.readouterr().out


def test_build_list_is_the_most_common_container_set() -> None:
    """torch 1.10.0's libtorch_cuda.so, as read: its own 481 containers and cuBLAS/MAGMA's."""
    code = GpuCode("libtorch_cuda.so", "elf", containers=1131)
    code.target_sets = {(("sm_37", "sm_50", "sm_60", "sm_70"), ()): 481,
                        (("sm_35", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75"), ()): 277,
                        (("sm_35", "sm_50", "sm_60", "sm_70", "sm_75"), ()): 203, (("sm_35",), ()): 55}
    assert code.build_targets() == (["sm_37", "sm_50", "sm_60", "sm_70"], [])
    code.target_sets[(("sm_80",), ("compute_80",))] = 481  # a tie: both sets
    assert code.build_targets() == (["sm_37", "sm_50", "sm_60", "sm_70", "sm_80"], ["compute_80"])


# --- crafted files: bounded work whatever the headers say --------------------------------------
def _container(arch: int = 89) -> bytes:
    """One fatbin container holding one SASS entry for ``sm_<arch>`` (a 48-byte header, no payload)."""
    entry = struct.pack("<HHIQ", 2, 0, 48, 0) + b"\0" * 12 + struct.pack("<I", arch) + b"\0" * 16
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entry)) + entry


def _pe_with_sections(payload: bytes, count: int) -> bytes:
    """A PE32+ image with ``count`` .nv_fatb section headers, all naming the same bytes."""
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 64)
    coff = b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, count, 0, 0, 0, 0, 0x2022)
    data_offset = 64 + len(coff) + 40 * count
    size = len(payload)
    flags = 0x40000040  # initialised data, readable
    section = struct.pack("<8sIIIIIIHHI", b".nv_fatb", size, 0x1000, size, data_offset, 0, 0, 0, 0, flags)
    return dos + coff + section * count + payload


def test_many_section_headers_naming_one_fatbin_are_read_once() -> None:
    image = _pe_with_sections(_container(), 40_000)
    code = read_gpu_code(io.BytesIO(image), len(image), "crafted.dll")
    assert code.targets() == (["sm_89"], []) and code.containers == 1


def test_a_fatbin_padded_with_a_gigabyte_is_refused_early() -> None:
    class Zeros(io.RawIOBase):
        """A 1 GiB section of zeros after one container, without holding it in memory."""

        def __init__(self, head: bytes, size: int) -> None:
            self.head, self.size, self.at = head, size, 0

        def seekable(self) -> bool:
            return True

        def seek(self, offset: int, whence: int = 0) -> int:
            self.at = offset if whence == 0 else self.size + offset
            return self.at

        def read(self, n: int = -1) -> bytes:
            n = self.size - self.at if n < 0 else min(n, self.size - self.at)
            data = self.head[self.at:self.at + n].ljust(n, b"\0")
            self.at += n
            return data

    head = _pe_with_sections(_container(), 1)
    size = len(head) + (1 << 30)
    image = bytearray(head)
    struct.pack_into("<II", image, 64 + 24 + 8, len(_container()) + (1 << 30), 0x1000)  # virtual size
    struct.pack_into("<I", image, 64 + 24 + 16, len(_container()) + (1 << 30))  # raw size
    with pytest.raises(BinaryError, match="padding"):
        read_gpu_code(Zeros(bytes(image), size), size, "padded.dll")  # type: ignore[arg-type]


def test_an_encrypted_wheel_member_is_a_one_line_error(tmp_path: Path) -> None:
    wheel = tmp_path / "torch-9.9.9-cp312-cp312-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("torch/lib/torch_cuda.dll", _pe_with_sections(_container(), 1))
    data = bytearray(wheel.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 1  # the "encrypted" flag, as a password-protected zip sets it
    wheel.write_bytes(bytes(data))
    with pytest.raises(BinaryError, match="encrypted") as caught:
        read_path(LiveHost(), str(wheel))
    assert "\n" not in str(caught.value)
