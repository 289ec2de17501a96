"""setuptools' (and old distutils') own words when the compiler it runs does not exist: spawn.py
raises "command 'X' failed: <the OSError's text>" (FileNotFoundError: "No such file or directory";
Windows: "The system cannot find the file specified"), old distutils "unable to execute 'X': ...";
and Python's FileNotFoundError for a bare nvcc. Texts written from those format strings;
counter-cases: the compiler ran and failed (exit code), another OSError."""

from __future__ import annotations

from tests.explain.test_signatures import stated


def test_a_compiler_the_build_could_not_start_is_no_compiler() -> None:
    for said in ("error: command 'gcc' failed: No such file or directory",
                 "error: command '/usr/bin/x86_64-linux-gnu-g++' failed: No such file or directory",
                 "unable to execute 'x86_64-linux-gnu-gcc': No such file or directory",
                 "distutils.errors.DistutilsExecError: command 'clang' failed: No such file or directory"):
        assert stated(said + "\n") == ["no-cxx-compiler"], said


def test_an_nvcc_the_build_could_not_start_is_no_toolkit_there() -> None:
    for said in ("error: command '/usr/local/cuda/bin/nvcc' failed: No such file or directory",
                 "error: command 'C:\\\\CUDA\\\\v12.1\\\\bin\\\\nvcc.exe' failed: "
                 "The system cannot find the file specified",
                 "      error: [Errno 2] No such file or directory: 'nvcc'"):
        assert stated(said + "\n") == ["cuda-home-not-set"], said


def test_a_compiler_that_ran_and_failed_or_another_os_error_is_not_a_missing_one() -> None:
    for said in ("error: command 'gcc' failed with exit code 1",
                 "error: command '/usr/bin/gcc' failed with exit status 1",
                 "error: command 'gcc' failed: Permission denied"):
        assert "no-cxx-compiler" not in stated(said + "\n"), said
    ran = "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 2\n"
    assert "cuda-home-not-set" not in stated(ran)
