"""Describe a Python environment's torch stack as JSON, WITHOUT importing torch.

Run by ``torchsmith doctor`` with the target interpreter. Standard library only, no
importlib.metadata (absent on 3.7), no f-strings: it must run on whatever Python the user has.
Prints one JSON object on the last line of stdout.
"""
import json
import os
import re
import sys

SCHEMA = 1

# Packages whose build is tied to one torch release (and often one CUDA variant).
COMPANIONS = (
    "torchvision", "torchaudio", "torchtext", "torchdata", "mmcv", "mmcv-full", "xformers",
    "flash-attn", "torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv",
    "pyg-lib", "torch-geometric", "triton", "pytorch-triton-rocm", "torchao", "deepspeed",
)
# Shared libraries a CUDA build of torch loads; copies of them elsewhere can be picked first.
CUDA_LIB = re.compile(r"^lib(cudart|cudnn[a-z_]*|nccl|cublas|cublasLt|cufft|curand|cusparse|"
                      r"cusolver|nvrtc|nvJitLink|cupti)\.so(\.\d+)*$")
# The CUDA runtime wheels a pip torch depends on (nvidia-cudnn-cu12, nvidia-nccl-cu12, ...).
NVIDIA_RUNTIME = re.compile(r"^nvidia-(cuda|cublas|cudnn|cufft|curand|cusolver|cusparse|nccl|nvjitlink|"
                            r"nvtx|cufile|nvshmem)")
GLIBCXX = re.compile(br"GLIBCXX_(\d+)\.(\d+)(?:\.(\d+))?\b")
CONDA_TORCH = ("pytorch", "pytorch-gpu", "pytorch-cpu", "pytorch-mutex", "_pytorch_select",
               "pytorch-cuda", "cpuonly", "libtorch", "torchvision", "torchaudio")
GUARD_FILE = "torchsmith-guard.txt"
GUARD_JOURNAL = "torchsmith-guard-journal"


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def metadata_fields(text):
    """Header fields of METADATA / PKG-INFO: {lower name: [values]} (the body is skipped)."""
    fields = {}
    for line in (text or "").splitlines():
        if not line.strip():
            break
        if line[:1] in " \t" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), []).append(value.strip())
    return fields


def torch_requires(requires):
    """The version specifiers a package's Requires-Dist puts on torch (``==2.5.1``, ``>=2.6,<2.7``)."""
    specs = []
    for req in requires:
        spec, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"^\s*torch\s*(?:\[[^\]]*\])?\s*\(?\s*([<>=!~][^;)]*)\)?\s*$", spec)
        if match:
            specs.append(re.sub(r"\s+", "", match.group(1)))
    return specs


def dist_from_dir(site, entry):
    """One installed distribution from its .dist-info / .egg-info directory."""
    path = os.path.join(site, entry)
    stem = entry.rsplit(".", 1)[0]
    meta = None
    if entry.endswith(".dist-info"):
        meta = read(os.path.join(path, "METADATA"), 64 * 1024)
    elif os.path.isdir(path):
        meta = read(os.path.join(path, "PKG-INFO"), 64 * 1024)
    else:
        meta = read(path, 64 * 1024)  # a single-file .egg-info
    fields = metadata_fields(meta)
    name = (fields.get("name") or [stem.split("-", 1)[0]])[0]
    version = (fields.get("version") or [stem.split("-", 1)[1] if "-" in stem else ""])[0]
    version = re.sub(r"-py\d.*$", "", version)
    return {
        "name": canonical(name),
        "version": version,
        "location": site,
        "metadata_dir": path,
        "fields": fields,
    }


def scan_distributions(paths):
    dists = []
    seen_dirs = set()
    for site in paths:
        real = os.path.realpath(site)
        if real in seen_dirs or not os.path.isdir(site):
            continue
        seen_dirs.add(real)
        for entry in listdir(site):
            if entry.endswith((".dist-info", ".egg-info")):
                dists.append(dist_from_dir(site, entry))
    return dists


def parse_version_py(text):
    """``__version__``, ``cuda``, ``hip``, ``git_version`` from torch/version.py, read as text."""
    values = {}
    for line in (text or "").splitlines():
        match = re.match(r"^(__version__|cuda|hip|git_version|debug|xpu)\s*(?::[^=]*)?=\s*(.+?)\s*$", line)
        if not match:
            continue
        raw = match.group(2)
        if raw in ("None", "False", "True"):
            values[match.group(1)] = {"None": None, "False": False, "True": True}[raw]
        else:
            quoted = re.match(r"^[rub]?(['\"])(.*)\1$", raw)
            values[match.group(1)] = quoted.group(2) if quoted else raw
    return values


def conda_records(prefix):
    """conda-meta records of the torch family: name-version-build from the file names."""
    records = []
    meta = os.path.join(prefix, "conda-meta")
    for entry in listdir(meta):
        if not entry.endswith(".json"):
            continue
        parts = entry[:-5].rsplit("-", 2)
        if len(parts) != 3 or parts[0] not in CONDA_TORCH:
            continue
        records.append({"name": parts[0], "version": parts[1], "build": parts[2],
                        "file": os.path.join(meta, entry)})
    return records


def glibcxx_versions(path, limit=64 << 20):
    """The GLIBCXX_x.y.z version tags named inside a shared library (read as bytes)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
    except (IOError, OSError):
        return []
    found = set()
    for match in GLIBCXX.finditer(data):
        found.add(tuple(int(g or 0) for g in match.groups()))
    return sorted(found)


def fmt(version_tuple):
    major, minor, patch = version_tuple
    return "%d.%d.%d" % (major, minor, patch) if patch else "%d.%d" % (major, minor)


def library_dirs_in_env(environ):
    dirs = []
    for entry in (environ.get("LD_LIBRARY_PATH") or "").split(os.pathsep):
        if entry:
            dirs.append(("LD_LIBRARY_PATH", entry))
    return dirs  # CUDA_HOME and CUDA_PATH do not steer the loader: not read


def find_libstdcxx(environ, conda_prefix):
    """The libstdc++.so.6 the dynamic loader would most likely pick for this interpreter."""
    candidates = [os.path.join(d, "libstdc++.so.6") for v, d in library_dirs_in_env(environ)
                  if v == "LD_LIBRARY_PATH"]
    if conda_prefix:
        candidates.append(os.path.join(conda_prefix, "lib", "libstdc++.so.6"))
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64",
              "/usr/lib", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"):
        candidates.append(os.path.join(d, "libstdc++.so.6"))
    for path in candidates:
        if os.path.exists(path):
            return path
    return None


def torch_facts(paths):
    """The torch `import torch` would load (the first on sys.path), read from its files."""
    torch_dir = None
    for site in paths:
        if os.path.isfile(os.path.join(site, "torch", "__init__.py")):
            torch_dir = os.path.join(site, "torch")
            break
    if not torch_dir:
        return None
    version_py = parse_version_py(read(os.path.join(torch_dir, "version.py")))
    torch = {
        "path": torch_dir,
        "version": version_py.get("__version__"),
        "cuda": version_py.get("cuda"),
        "hip": version_py.get("hip"),
        "git_version": version_py.get("git_version"),
        "version_file": os.path.join(torch_dir, "version.py"),
    }
    lib_dir = os.path.join(torch_dir, "lib")
    needed = []
    for lib in ("libc10.so", "libtorch_python.so"):
        path = os.path.join(lib_dir, lib)
        if os.path.exists(path):
            needed = glibcxx_versions(path)
            if needed:
                torch["glibcxx_file"] = path
                break
    torch["glibcxx_needed"] = fmt(needed[-1]) if needed else None
    torch["bundled_cuda_libs"] = [n for n in listdir(lib_dir) if CUDA_LIB.match(n)]
    return torch


def companion_facts(dist, fields, installer):
    direct = read(os.path.join(dist["metadata_dir"], "direct_url.json"), 64 * 1024)
    url = None
    if direct:
        try:
            url = json.loads(direct).get("url")
        except ValueError:
            url = None
    return {"name": dist["name"], "version": dist["version"],
            "location": dist["location"], "metadata": dist["metadata_dir"],
            "torch_requires": torch_requires(fields.get("requires-dist", [])),
            "url": url, "installer": installer}


def variant_facts(metadata_dir):
    """The wheel variant a variant-aware installer put here (PEP 825 draft: dist-info/variant.json,
    one label with its properties), or None."""
    text = read(os.path.join(metadata_dir, "variant.json"), 256 * 1024)
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return {"error": "unreadable variant.json"}
    variants = data.get("variants") if isinstance(data, dict) else None
    if not isinstance(variants, dict) or len(variants) != 1:
        return {"error": "variant.json names no single variant"}
    return {"file": os.path.join(metadata_dir, "variant.json"), "variants": variants}


def distribution_facts(dists):
    """(torch installs, companions, NVIDIA runtime wheels) among the installed distributions."""
    installs = []
    companions = []
    nvidia_wheels = []
    for dist in dists:
        fields = dist.pop("fields")
        installer = (read(os.path.join(dist["metadata_dir"], "INSTALLER"), 256) or "").strip() or None
        if dist["name"] == "torch":
            installs.append({"source": "conda" if installer == "conda" else (installer or "unknown"),
                             "version": dist["version"], "location": dist["location"],
                             "metadata": dist["metadata_dir"],
                             # The CUDA runtime wheels this build was released with (exact pins).
                             "nvidia_requires": [r for r in fields.get("requires-dist", [])
                                                 if r.lower().startswith("nvidia-")],
                             "variant": variant_facts(dist["metadata_dir"])})
        elif dist["name"] in COMPANIONS:
            companions.append(companion_facts(dist, fields, installer))
        elif NVIDIA_RUNTIME.match(dist["name"]):
            nvidia_wheels.append({"name": dist["name"], "version": dist["version"]})
    return installs, companions, nvidia_wheels


def cuda_libraries(torch, paths, environ):
    """(CUDA libraries this torch brings, directories of the environment that hold others)."""
    provided = set(torch["bundled_cuda_libs"]) if torch else set()
    for site in paths:  # nvidia/*/lib from the wheels
        nvidia_root = os.path.join(site, "nvidia")
        for sub in listdir(nvidia_root):
            for name in listdir(os.path.join(nvidia_root, sub, "lib")):
                if CUDA_LIB.match(name):
                    provided.add(name)
    library_dirs = []
    for var, directory in library_dirs_in_env(environ):
        libs = [n for n in listdir(directory) if CUDA_LIB.match(n)]
        if libs:
            library_dirs.append({"variable": var, "dir": directory, "libraries": libs})
    return sorted(provided), library_dirs


def python_facts(prefix, conda_prefix):
    base_prefix = getattr(sys, "base_prefix", getattr(sys, "real_prefix", prefix))
    return {
        "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "executable": sys.executable,
        "prefix": prefix,
        "base_prefix": base_prefix,
        "virtualenv": prefix if prefix != base_prefix else None,
        "conda_prefix": conda_prefix,
        "platform": sys.platform,
        "machine": os.uname()[4] if hasattr(os, "uname") else "",
        "implementation": {"cpython": "CPython", "pypy": "PyPy"}.get(
            sys.implementation.name, sys.implementation.name),
        "free_threaded": bool(getattr(sys, "_is_gil_enabled", lambda: True)() is False),
    }


def _file_url(path):
    try:
        import pathlib

        return pathlib.Path(path).as_uri()
    except ValueError:
        return path


def install_journal(prefix):
    base = prefix.rstrip(os.sep) or os.sep
    path = os.path.join(os.path.dirname(base), "." + os.path.basename(base) + ".torchsmith-install-journal")
    text = read(path, 64 * 1024)
    if text is None:
        return None
    try:
        phase = json.loads(text).get("phase")
    except (ValueError, AttributeError):
        phase = None
    return {"path": path, "phase": phase if isinstance(phase, str) else None}


def guard_facts(prefix, environ):
    guard_path = os.path.join(prefix, GUARD_FILE)
    pip_conf = os.path.join(prefix, "pip.ini" if os.name == "nt" else "pip.conf")
    guard_text = read(guard_path, 64 * 1024)
    pip_conf_text = read(pip_conf, 64 * 1024)
    return {
        "guard_file": guard_path if guard_text is not None else None,
        "guard_text": guard_text,
        "pip_conf": pip_conf if pip_conf_text is not None else None,
        # The guard is on when the environment's pip.conf makes the guard file a constraint.
        # (a path with a space is written as its file: URL: pip splits the value on whitespace)
        "pip_conf_uses_guard": bool(pip_conf_text and (guard_path in pip_conf_text
                                                       or _file_url(guard_path) in pip_conf_text)),
        # "on" or "off" while that switch runs, or after a kill stopped it part-way
        "guard_interrupted": (read(os.path.join(prefix, GUARD_JOURNAL), 64) or "").strip() or None,
        # an install's journal beside the prefix: stopped part-way (or running now)
        "install_journal": install_journal(prefix),
        # A PIP_CONFIG_FILE's [install] constraint outranks the site pip.conf.
        "env_pip_conf_text": read(environ["PIP_CONFIG_FILE"], 64 * 1024)
        if environ.get("PIP_CONFIG_FILE") and environ["PIP_CONFIG_FILE"] != os.devnull else None,
    }


def main():
    environ = os.environ
    prefix = sys.prefix
    conda_prefix = prefix if os.path.isdir(os.path.join(prefix, "conda-meta")) else None
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    torch = torch_facts(paths)
    dists = scan_distributions(paths)
    installs, companions, nvidia_wheels = distribution_facts(dists)
    provided, library_dirs = cuda_libraries(torch, paths, environ)
    libstdcxx_path = find_libstdcxx(environ, conda_prefix) if sys.platform.startswith("linux") else None
    available = glibcxx_versions(libstdcxx_path, 16 << 20) if libstdcxx_path else []
    report = {
        "schema": SCHEMA,
        "python": python_facts(prefix, conda_prefix),
        "torch": torch,
        "torch_installs": installs,
        "companions": companions,
        "nvidia_wheels": nvidia_wheels,
        "conda": conda_records(conda_prefix) if conda_prefix else [],
        "cuda_libraries_provided": provided,
        "library_dirs": library_dirs,
        "libstdcxx": {"path": libstdcxx_path,
                      "glibcxx_max": fmt(available[-1]) if available else None},
        "guard": guard_facts(prefix, environ),
        # uv makes venvs without pip: a fix must then run through uv.
        "pip": any(d["name"] == "pip" for d in dists),
        "environ": {k: environ[k] for k in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
                                                  "CUDA_VISIBLE_DEVICES", "PIP_CONFIG_FILE",
                                                  "PYTHONPATH", "PYTORCH_CUDA_ALLOC_CONF",
                                                  "PIP_CONSTRAINT", "UV_CONSTRAINT", "VIRTUAL_ENV", "LD_PRELOAD",
                                                  "CONDA_PREFIX")
                        if k in environ},
    }
    sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
