"""Counter-cases from review: unseen texts of the same shape as a confirmed or asserted cause, in
which that cause is false; each beside the case the rule was written for."""

from __future__ import annotations

from tests.explain.test_signatures import stated

_PIP_KILLED = ("Collecting torch==2.1.0\n"
               "  Downloading torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl (670.2 MB)\n"
               "Killed\n")


def test_a_kill_is_an_image_builds_only_between_the_build_start_and_its_end() -> None:
    # the case it was written for: the kill inside the build a command started
    assert stated("$ docker build -t trainer .\nStep 4/9 : RUN pip install torch==2.1.0\n"
                  + _PIP_KILLED) == ["pip-killed-oom"]
    # the build finished and a container ran the install: a container can be killed by anyone
    after = ("$ docker build -t trainer .\nSuccessfully built 3f2a1b9c0d11\n"
             "Successfully tagged trainer:latest\n$ docker run --rm trainer pip install torch==2.1.0\n"
             + _PIP_KILLED)
    assert stated(after) == ["pip-killed"]
    # the build is named only after the kill, as another attempt
    before = ("$ pip install torch==2.1.0\n" + _PIP_KILLED
              + "I then tried building the docker image instead, which worked.\n")
    assert stated(before) == ["pip-killed"]
