"""Lines fitted to the width: words kept whole, commands still paste, colour takes no room."""

from __future__ import annotations

import shlex

from torchsmith.textwidth import fit, visible_length


def test_a_short_line_is_left_alone() -> None:
    assert fit("  System   linux-x86_64", 80) == "  System   linux-x86_64"


def test_prose_continues_under_its_text() -> None:
    line = "  - " + " ".join(["word"] * 30)
    lines = fit(line, 40).split("\n")
    assert all(len(item) <= 40 for item in lines)
    assert all(item.startswith("    word") for item in lines[1:])
    assert " ".join(item.strip(" -") for item in lines).split() == ["word"] * 30


def test_an_aligned_column_stays_aligned() -> None:
    lines = fit("  System   linux-x86_64 · Debian GNU/Linux 12 (bookworm) · glibc 2.36 · in docker", 60)
    assert lines == ("  System   linux-x86_64 · Debian GNU/Linux 12 (bookworm) ·\n"
                     "           glibc 2.36 · in docker")


def test_a_command_is_continued_so_it_still_pastes() -> None:
    command = ('python -m pip install --index-url https://download.pytorch.org/whl/cu130 '
               '"torch==2.11.0+cu130" torchvision==0.26.0+cu130 torchaudio==2.11.0+cu130')
    lines = fit(f"  $ {command}", 60).split("\n")
    assert len(lines) > 1 and all(item.endswith(" \\") for item in lines[:-1])
    joined = " ".join(item.strip().rstrip("\\").strip() for item in lines)[2:]
    assert shlex.split(joined) == shlex.split(command)


def test_a_quoted_argument_is_never_split() -> None:
    line = ('  $ python -c '
            '"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"')
    lines = fit(line, 50).split("\n")
    assert any('"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"'
               in item for item in lines)


def test_colour_takes_no_width() -> None:
    red = "\x1b[31mno \x1b[0m"
    line = f"  2.15.0  cu132     {red} runs"
    assert visible_length(line) == len("  2.15.0  cu132     no  runs")
    assert fit(line, 30) == line


def test_a_url_longer_than_the_line_stays_whole() -> None:
    url = "https://example.org/" + "x" * 100
    assert url in fit(f"  see {url} for more", 40).split("\n")[1]


def test_a_comment_never_follows_a_continuation() -> None:
    """`` \\`` then ``# remark`` would make the shell run the remark's words: a comment that
    does not fit goes on lines of its own, each a comment."""
    import subprocess

    from torchsmith.cli.layout import wrap_command

    command = ("torchsmith install --python /work/envs/a-rather-long-name/bin/python"
               "  # writes the guard, then keeps it on")
    for lines in (fit(f"      $ {command}", 60).split("\n"), wrap_command(command, 60, "      ")):
        assert all(len(line) <= 60 for line in lines)
        assert not any("#" in line and line.endswith("\\") for line in lines), lines
        assert [line.strip() for line in lines if line.strip().startswith("#")] == \
            ["# writes the guard, then keeps it on"]
        script = "\n".join(line.strip().lstrip("$ ") for line in lines)
        shown = subprocess.run(["bash", "-c", script.replace("torchsmith", "echo", 1)],
                               capture_output=True, text=True, check=True).stdout
        assert shown.split() == ["install", "--python", "/work/envs/a-rather-long-name/bin/python"]


def test_a_comment_continues_as_a_comment() -> None:
    """A script's comment, wrapped, is still a comment (its words are never run)."""
    line = "  # Environment for building PyTorch from source (CUDA), written by torchsmith build-env."
    lines = fit(line, 40).split("\n")
    assert len(lines) > 1 and all(item.lstrip().startswith("#") for item in lines)
    assert " ".join(item.strip().lstrip("#") for item in lines).split() == line.strip().lstrip("#").split()


def test_a_quoted_argument_on_a_continuation_line_is_never_split() -> None:
    """The lines after `` \\`` are still the command (NVIDIA's Jetson wheel as ``'torch @ URL'``)."""
    text = ("  $ python3 -m pip install \\\n"
            "      'torch @ https://pypi.jetson-ai-lab.io/jp6/cu126/+f/02f/de421eabbf626/"
            "torch-2.9.1-cp310-cp310-linux_aarch64.whl'")
    requirement = text.split("\n")[1].strip()
    assert requirement in fit(text, 80).split("\n")[1]
