"""Read the facts an error text states before matching any signature: the exception, the
libraries and symbols the loader missed, the CUDA/HIP/NCCL errors (looked up in the vendors'
enums), compiler messages, the resolver's conflicts, failed URLs, and the machine the text names.

The vocabularies are data (``error_vocab.json``: the vendors' enums and the sonames per CUDA
release, each row with its source). Everything here is pure; :func:`extract` reads the text once
per extractor and is bounded by the same head/tail window the CLI reads.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence

from torchsmith.explain.extract import (
    build,
    channels,
    distributions,
    downloads,
    environment,
    gpu,
    gpunames,
    indexes,
    indexscope,
    installers,
    interpreters,
    isolation,
    lddebug,
    listings,
    loader,
    namedbuild,
    pages,
    pinnedbuilds,
    pinwheels,
    python,
    resolver,
    said,
    symptoms,
    uvproject,
)
from torchsmith.explain.extract.model import (
    CompilerMessage,
    Conflict,
    Environment,
    Extracted,
    Frame,
    GpuError,
    HttpFailure,
    MissingLibrary,
    NamedGpu,
    PyException,
    UndefinedSymbol,
)
from torchsmith.explain.messages import unwrap
from torchsmith.refusal import read as read_refusal

if TYPE_CHECKING:
    from torchsmith.kb import KnowledgeBase

__all__ = [
    "CompilerMessage",
    "Conflict",
    "Environment",
    "Extracted",
    "Frame",
    "GpuError",
    "HttpFailure",
    "MissingLibrary",
    "NamedGpu",
    "PyException",
    "UndefinedSymbol",
    "extract",
    "vocabulary",
]

_MAX_CHARS = 128 * 1024  # a larger log is read at its last 128 KiB, where the final error is


def vocabulary(kb: Optional[KnowledgeBase]) -> Mapping[str, Sequence[Mapping[str, Any]]]:
    """The vendors' error enums and the soname table (packaged when no knowledge base)."""
    from torchsmith.kb.documents import DATA_DIR, ENUM_TABLES, read_document

    document: Dict[str, Any] = (
        kb.document("error_vocab") if kb is not None else read_document("error_vocab", DATA_DIR, None)
    )
    tables = ("cuda", "hip", "nccl", "sonames", "conda_packages", "installer_messages", "installer_options",
              "xid", *ENUM_TABLES)
    return {name: document.get(name, []) for name in tables}


def extract(
    text: str,
    kb: Optional[KnowledgeBase] = None,
    vocab: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None,
) -> Extracted:
    """Every fact the text states, by kind (see :class:`Extracted`)."""
    if len(text) > _MAX_CHARS:
        text = text[-_MAX_CHARS:]
    words = vocab if vocab is not None else vocabulary(kb)
    joined = unwrap(text).text  # messages split over lines, joined
    found_frames = python.frames(text)
    refusal = read_refusal(text)
    missing = resolver.not_found(refusal)
    rows = words.get("conda_packages", ())
    search = channels.conda_checks(missing, channels.conda_search(text), rows)
    found_conflicts = resolver.conflicts(refusal)
    messages = build.compiler_messages(text)
    env = _environment(text, found_frames, kb)
    return Extracted(
        exceptions=python.exceptions(text, found_frames),
        warnings=python.warnings(text),
        frames=found_frames,
        libraries=loader.missing_libraries(joined, words.get("sonames", ())),
        symbols=loader.undefined_symbols(joined),
        gpu_errors=gpu.gpu_errors(text, joined, words),
        nccl=gpu.nccl_facts(text),
        dtypes=gpu.dtypes(text),
        symptoms=symptoms.symptoms(text),
        compiler=messages,
        conflicts=found_conflicts,
        offers=list(refusal.offers[:10]),
        not_found=missing,
        source_builds=resolver.source_builds(text),
        installed=distributions.installed_distributions(text),
        versions=distributions.installed_versions(text),
        http=resolver.http_failures(joined),
        environment=env,
        conda_search=search,
        conda_missing=channels.conda_missing(missing, search, rows),
        installer_errors=installers.installer_errors(joined, words.get("installer_messages", ()))
        + indexes.index_facts(joined, refusal, kb, raw=text) + indexes.build_requirement_failures(text)
        + isolation.isolated_build_without_torch(text, kb) + isolation.named_build_without_torch(text, kb)
        + installers.torch_set_aside(text) + installers.pypi_cpu_build(text, kb)
        + said.pip_replaced_torch_said(text)
        + installers.option_too_new(text, words.get("installer_options", ()))
        + installers.backend_too_new(text, kb)
        + pages.companion_page_failures(text, kb) + pages.build_page_without_wheel(text)
        + pages.installer_table_without_wheel(text)
        + resolver.shared_nvidia_wheels(found_conflicts, text)
        + pinwheels.pin_lacks_python_wheel(text, refusal, kb, env.python)
        + lddebug.wheel_library_from_system(text) + listings.listing_facts(text, refusal, kb)
        + uvproject.run_resynced_without_extra(text) + uvproject.source_marker_misses_windows(text)
        + interpreters.installed_for_another_python(text, found_frames)
        + pinnedbuilds.pinned_build_not_read(text) + namedbuild.build_for_named_interpreter(text, refusal, kb)
        + (indexscope.pytorch_index_alone(text, refusal, kb) + indexscope.uv_pytorch_index_alone(text, kb)
           if kb is not None else []),
        transfers=downloads.transfers(text),
        mentions_torch=bool(re.search(r"\btorch\b|pytorch", text, re.IGNORECASE)),
        build_shown=bool(messages) or build.build_shown(text),
    )


def _environment(text: str, found_frames: Sequence[Frame], kb: Optional[KnowledgeBase]) -> Environment:
    names = gpunames.gpu_names(kb.gpus, kb.gfx_targets) if kb is not None else None
    env = environment.environment(text, list(found_frames), names)
    env.toolchain = build.toolchain_versions(text)
    return env
