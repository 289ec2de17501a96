"""Which GPU code a binary carries, read from its fatbin headers: no CUDA toolkit, no import.

nvcc embeds device code in a *fatbin*: one or more containers (magic ``0xBA55ED50``) in the
ELF section ``.nv_fatbin`` (``.nv_fatb`` in a Windows DLL). Each container holds entries, each
with a header naming its kind (PTX or SASS), its target and flags, then its payload (zstd
compressed or not). Only headers are read, so the payloads are skipped, never decompressed.

The layout was learnt from public notes on the format (e.g. GrigoryEvko/nvopen-tools'
``fatbin/FORMAT_SPECIFICATION.md``) and checked against ``cuobjdump --list-elf --list-ptx`` on
libraries built by nvcc 13 (tests/kb/test_fatbin.py) and on torch 2.9.0's 1 GB libtorch_cuda.so.
The ``a``/``f`` suffix bits were found the same way: nvcc sets them for ``sm_90a``/``compute_100f``
targets and for no others.

Reads are bounded and go forward where they can: a member of a wheel (a zip, ~1 GB
``libtorch_cuda.so``) is read as a stream, in at most two passes, with nothing written to disk.
"""

from __future__ import annotations

import re
import struct
from dataclasses import field
from typing import IO, TYPE_CHECKING, Dict, Iterable, List, Optional, Set, Tuple

from torchsmith.errors import TorchsmithError
from torchsmith.records import dataclass

if TYPE_CHECKING:
    from torchsmith.host import Host

__all__ = ["FATBIN_MAGIC", "BinaryError", "GpuCode", "read_gpu_code", "read_path", "read_wheel"]

FATBIN_MAGIC = 0xBA55ED50
_KIND_PTX = 1
_KIND_SASS = 2
_FLAG_ARCH_SPECIFIC = 0x100000  # sm_90a, compute_100a
_FLAG_FAMILY = 0x200000  # sm_100f, compute_120f
_FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin", ".nv_fatb")
_MAX_TABLE = 16 << 20  # section header tables and name tables are far smaller
_MAX_ENTRY_HEADER = 4096
# A real library has one or two fatbin sections and aligns containers to a few bytes; more is a
# crafted file that would make the reader walk the same bytes, or nothing, for ever.
_MAX_FATBIN_SECTIONS = 64
_MAX_PADDING = 64 * 1024


class BinaryError(TorchsmithError):
    """A file that is not a readable ELF/PE binary, or whose fatbin is corrupt."""

    code = "binary-unreadable"


@dataclass
class GpuCode:
    """The targets a binary's fatbins carry, with how many containers carry each.

    A container is about one compiled source file. torch compiles its own kernels with one arch
    list, so the set of targets most containers share is the build's list (:meth:`build_targets`);
    other sets come from a few special kernels (``sm_90a`` FlashAttention) or from NVIDIA
    libraries linked in statically (torch 1.x: cuBLAS/MAGMA containers with sm_35, sm_61, sm_75).
    """

    file: str
    fmt: str  # elf | pe
    containers: int = 0
    sass: Dict[str, int] = field(default_factory=dict)
    ptx: Dict[str, int] = field(default_factory=dict)
    other_entries: int = 0  # entries of kinds this reader does not name (LTO IR, ...)
    # (SASS, PTX) of a container -> how many containers carry exactly that
    target_sets: Dict[Tuple[Tuple[str, ...], Tuple[str, ...]], int] = field(default_factory=dict)

    def targets(self, share: float = 0.0) -> Tuple[List[str], List[str]]:
        """(SASS, PTX) carried by at least ``share`` of the containers, in arch order."""
        floor = share * self.containers
        return (_sorted(n for n, c in self.sass.items() if c >= floor),
                _sorted(n for n, c in self.ptx.items() if c >= floor))

    def build_targets(self) -> Tuple[List[str], List[str]]:
        """(SASS, PTX) of the most common container set (their union when several tie)."""
        sets = [key for key in self.target_sets if key[0] or key[1]]
        top = max((self.target_sets[key] for key in sets), default=0)
        chosen = [key for key in sets if self.target_sets[key] == top]
        return (_sorted({n for key in chosen for n in key[0]}),
                _sorted({n for key in chosen for n in key[1]}))

    def add(self, other: GpuCode) -> None:
        self.containers += other.containers
        self.other_entries += other.other_entries
        for mine, theirs in ((self.sass, other.sass), (self.ptx, other.ptx)):
            for name, count in theirs.items():
                mine[name] = mine.get(name, 0) + count
        for key, count in other.target_sets.items():
            self.target_sets[key] = self.target_sets.get(key, 0) + count

    def to_json(self) -> Dict[str, object]:
        sass, ptx = self.targets()
        build_sass, build_ptx = self.build_targets()
        return {"file": self.file, "format": self.fmt, "containers": self.containers, "sass": sass,
                "ptx": ptx, "build_sass": build_sass, "build_ptx": build_ptx,
                "sass_containers": dict(self.sass), "ptx_containers": dict(self.ptx),
                "other_entries": self.other_entries}


def _arch_key(name: str) -> Tuple[int, str]:
    digits = "".join(ch for ch in name.split("_", 1)[-1] if ch.isdigit())
    return (int(digits or 0), name)


def _sorted(names: Iterable[str]) -> List[str]:
    return sorted(names, key=_arch_key)


class _Reader:
    """Bounded reads at offsets of a seekable binary stream of known size."""

    def __init__(self, handle: IO[bytes], size: int, name: str) -> None:
        self.handle = handle
        self.size = size
        self.name = name

    def read(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise BinaryError(f"{self.name}: truncated or corrupt ({what}: past the end of the file)")
        try:
            self.handle.seek(offset)
            data = self.handle.read(length)
        except (OSError, ValueError, EOFError) as exc:  # zlib.error is not an OSError: see callers
            raise BinaryError(f"{self.name}: cannot read {what}: {exc}") from exc
        if len(data) != length:
            raise BinaryError(f"{self.name}: truncated ({what} ends early)")
        return data


def read_gpu_code(handle: IO[bytes], size: int, name: str) -> GpuCode:
    """The GPU code in the ELF or PE binary ``handle`` (``size`` bytes; ``name`` for messages).

    Raises :class:`BinaryError` (one line) for anything else or a corrupt fatbin, and
    ``binary-no-gpu-code`` for a valid binary without a fatbin.
    """
    import zlib

    reader = _Reader(handle, size, name)
    if size < 64:
        raise BinaryError(f"{name}: not an ELF or PE binary (only {size} bytes)")
    try:
        head = reader.read(0, 64, "the file header")
        if head[:4] == b"\x7fELF":
            code = GpuCode(name, "elf")
            sections, names = _elf_sections(reader, head)
        elif head[:2] == b"MZ":
            code = GpuCode(name, "pe")
            sections, names = _pe_sections(reader, head), None
        else:
            raise BinaryError(f"{name}: not an ELF or PE binary")
        _sweep(reader, sections, names, code)
    except zlib.error as exc:
        raise BinaryError(f"{name}: the compressed archive member is corrupt: {exc}") from exc
    if not code.containers:
        raise BinaryError(f"{name}: carries no GPU code (no fatbin section)", code="binary-no-gpu-code")
    return code


def _sweep(reader: _Reader, sections: List[_Section], names: Optional[_Section], code: GpuCode) -> None:
    """Walk the fatbin sections in one forward pass, reading the ELF name table on the way.

    Names may lie after the code they name, so a section is walked when it starts with the
    fatbin magic and kept when its name turns out to be a fatbin section's.
    """
    table = b""
    walked: List[Tuple[_Section, GpuCode]] = []
    ranges: Set[Tuple[int, int]] = set()
    for section in sorted(sections + ([names] if names else []), key=lambda s: s.offset):
        if section is names:
            table = reader.read(section.offset, section.size, "the section names") if section.size else b""
        elif section.size >= 16 and section.name in (None, *_FATBIN_SECTIONS):
            if (section.offset, section.size) in ranges:
                continue  # headers naming the same bytes twice: one fatbin, read once
            ranges.add((section.offset, section.size))
            magic, = struct.unpack("<I", reader.read(section.offset, 4, "a section"))
            if magic == FATBIN_MAGIC:
                if len(walked) >= _MAX_FATBIN_SECTIONS:
                    raise BinaryError(f"{reader.name}: more than {_MAX_FATBIN_SECTIONS} fatbin sections: "
                                      "not a library as nvcc and the linker write it")
                found = GpuCode(code.file, code.fmt)
                _walk_section(reader, section.offset, section.size, found)
                walked.append((section, found))
    for section, found in walked:
        name = section.name if section.name is not None else _c_string(table, section.name_offset)
        if name in _FATBIN_SECTIONS:
            code.add(found)


@dataclass(frozen=True)
class _Section:
    name: Optional[str]  # None until the ELF name table is read
    offset: int
    size: int
    name_offset: int = 0


# --- ELF -------------------------------------------------------------------------------------
def _elf_sections(reader: _Reader, head: bytes) -> Tuple[List[_Section], _Section]:
    """Each section with contents, and the section-name table."""
    wide, order = head[4], head[5]
    if wide not in (1, 2) or order != 1:
        raise BinaryError(f"{reader.name}: unsupported ELF (CUDA code is in little-endian ELF only)")
    if wide == 2:
        shoff, = struct.unpack_from("<Q", head, 0x28)
        entsize, count, names_index = struct.unpack_from("<HHH", head, 0x3A)
        layout, want = "<IIQQQQ", 64
    else:
        shoff, = struct.unpack_from("<I", head, 0x20)
        entsize, count, names_index = struct.unpack_from("<HHH", head, 0x2E)
        layout, want = "<IIIIII", 40
    if shoff == 0 or entsize < want:
        raise BinaryError(f"{reader.name}: carries no GPU code (an ELF without section headers)",
                          code="binary-no-gpu-code")
    if count == 0:  # more than 0xff00 sections: the real count is in section 0
        count = _elf_field(reader, shoff, layout, 5)
    if count * entsize > _MAX_TABLE:
        raise BinaryError(f"{reader.name}: corrupt ELF ({count} section headers)")
    table = reader.read(shoff, count * entsize, "the section headers")
    if names_index == 0xFFFF:
        names_index = _elf_field(reader, shoff, layout, 6)
    if names_index >= count:
        raise BinaryError(f"{reader.name}: corrupt ELF (section-name table {names_index} of {count})")
    sections = []
    names = None
    for index in range(count):
        # name offset, type, flags, address, file offset, size (32-bit: the same order)
        name_offset, kind, _, _, offset, size = struct.unpack_from(layout, table, index * entsize)
        if index == names_index:
            if size > _MAX_TABLE:
                raise BinaryError(f"{reader.name}: corrupt ELF (section-name table of {size} bytes)")
            names = _Section("", offset, size)
        elif kind != 8:  # SHT_NOBITS has no bytes in the file
            sections.append(_Section(None, offset, size, name_offset))
    assert names is not None
    return sections, names


def _elf_field(reader: _Reader, shoff: int, layout: str, index: int) -> int:
    """A field of section header 0, where ELF keeps counts too large for the file header."""
    first = reader.read(shoff, struct.calcsize(layout) + 8, "section header 0")
    if index == 6:  # sh_link
        return int(struct.unpack_from("<I", first, struct.calcsize(layout))[0])
    return int(struct.unpack_from(layout, first, 0)[index])


def _c_string(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("ascii", "replace")


# --- PE (Windows DLL) -------------------------------------------------------------------------
def _pe_sections(reader: _Reader, head: bytes) -> List[_Section]:
    lfanew, = struct.unpack_from("<I", head, 0x3C)
    coff = reader.read(lfanew, 24, "the PE header")
    if coff[:4] != b"PE\0\0":
        raise BinaryError(f"{reader.name}: not an ELF or PE binary (MZ without a PE header)")
    count, = struct.unpack_from("<H", coff, 6)
    optional_size, = struct.unpack_from("<H", coff, 20)
    table = reader.read(lfanew + 24 + optional_size, count * 40, "the PE section table")
    sections = []
    for index in range(count):
        raw_name, virtual_size, _, raw_size, raw_offset = struct.unpack_from("<8sIIII", table, index * 40)
        size = min(virtual_size, raw_size) if virtual_size else raw_size  # raw data is padded
        sections.append(_Section(raw_name.rstrip(b"\0").decode("ascii", "replace"), raw_offset, size))
    return sections


# --- the fatbin ---------------------------------------------------------------------------------
def _walk_section(reader: _Reader, offset: int, length: int, code: GpuCode) -> None:
    """Every container in one fatbin section, in file order (forward reads only)."""
    position, end = offset, offset + length
    padding = 0
    while position + 16 <= end:
        header = reader.read(position, 16, "a fatbin header")
        magic, _version, header_size, body = struct.unpack("<IHHQ", header)
        if magic != FATBIN_MAGIC:
            if magic == 0:  # padding between containers: alignment, a few bytes
                padding += 8
                if padding > _MAX_PADDING:
                    raise BinaryError(f"{reader.name}: corrupt fatbin (more than {_MAX_PADDING} bytes of "
                                      f"padding at offset {position})")
                position += 8
                continue
            raise BinaryError(f"{reader.name}: corrupt fatbin (bad magic {magic:#x} at offset {position})")
        stop = position + header_size + body
        if header_size < 16 or stop > end:
            raise BinaryError(f"{reader.name}: corrupt or truncated fatbin (container at offset {position} "
                              f"runs past its section)")
        _walk_container(reader, position + header_size, stop, code)
        code.containers += 1
        position, padding = stop, 0


def _walk_container(reader: _Reader, position: int, stop: int, code: GpuCode) -> None:
    seen_sass, seen_ptx = set(), set()
    while position < stop:
        head = reader.read(position, 48, "a fatbin entry header")
        kind, _, header_size, payload = struct.unpack_from("<HHIQ", head, 0)
        arch, = struct.unpack_from("<I", head, 28)
        flags, = struct.unpack_from("<Q", head, 40)
        if not 48 <= header_size <= _MAX_ENTRY_HEADER or position + header_size + payload > stop:
            raise BinaryError(f"{reader.name}: corrupt fatbin (entry at offset {position})")
        suffix = "a" if flags & _FLAG_ARCH_SPECIFIC else "f" if flags & _FLAG_FAMILY else ""
        if kind == _KIND_SASS:
            seen_sass.add(f"sm_{arch}{suffix}")
        elif kind == _KIND_PTX:
            seen_ptx.add(f"compute_{arch}{suffix}")
        else:
            code.other_entries += 1
        position += header_size + payload
    for name in seen_sass:
        code.sass[name] = code.sass.get(name, 0) + 1
    for name in seen_ptx:
        code.ptx[name] = code.ptx.get(name, 0) + 1
    key = (tuple(sorted(seen_sass)), tuple(sorted(seen_ptx)))
    code.target_sets[key] = code.target_sets.get(key, 0) + 1


# --- wheels ---------------------------------------------------------------------------------------
# The libraries of a torch wheel that hold its kernels: libtorch_cuda.so (torch_cuda.dll), split
# into torch_cuda_cu and torch_cuda_cpp in some 1.x releases, and libtorch_cuda_linalg.so.
# torch's CUDA libraries, and the compiled extensions of its companions (torchvision, torchaudio)
_WHEEL_CUDA_LIB = re.compile(r"^(?:torch/lib/(?:lib)?torch_cuda[a-z_]*\.(?:so|dll)"
                             r"|torchvision/_C(?:\.[a-z0-9_-]+)?\.(?:so|pyd)"
                             r"|torchaudio/lib/(?:lib)?torchaudio[a-z_]*\.(?:so|pyd|dll))$")


def read_wheel(handle: IO[bytes], name: str) -> List[GpuCode]:
    """The GPU code of each CUDA library inside a torch wheel, read from the zip as a stream."""
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(handle) as archive:
            members = [i for i in archive.infolist() if _WHEEL_CUDA_LIB.match(i.filename)]
            if not members:
                raise BinaryError(f"{name}: no CUDA library of torch inside (torch/lib/libtorch_cuda.so or "
                                  "torch_cuda.dll, torchvision/_C.so): a CPU or ROCm wheel, or not a "
                                  "torch wheel",
                                  code="wheel-no-cuda-lib")
            codes = []
            for info in members:
                if info.flag_bits & 0x1:  # pip cannot install it either
                    raise BinaryError(f"{name}: {info.filename} is encrypted: not a wheel pip can install")
                with archive.open(info) as member:
                    label = f"{name}:{info.filename}"
                    try:
                        codes.append(read_gpu_code(member, info.file_size, label))
                    except BinaryError as exc:
                        if exc.code != "binary-no-gpu-code":
                            raise
            return codes
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise BinaryError(f"{name}: not a readable wheel (zip): {exc}") from exc


def read_path(host: Host, path: str) -> List[GpuCode]:
    """The GPU code of a binary, or of each CUDA library of a torch wheel, at ``path``."""
    handle = host.open_binary(path)
    if handle is None:
        raise BinaryError(f"{path}: cannot be read (no such file, or no permission)", code="binary-not-found")
    with handle:
        try:
            size = handle.seek(0, 2)
            handle.seek(0)
            magic = handle.read(4)
        except OSError as exc:
            raise BinaryError(f"{path}: cannot be read: {exc}") from exc
        if magic == b"PK\x03\x04":
            return read_wheel(handle, path)
        return [read_gpu_code(handle, size, path)]
