# SPDX-License-Identifier: MIT
# The package under test is build/python (PYTHONPATH, set by ctest); the CLI
# it is compared with is LOGRX_EXE.
import os
import pathlib

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def corpus() -> pathlib.Path:
    return SOURCE / "corpus"


@pytest.fixture
def data() -> pathlib.Path:
    return SOURCE / "tests" / "data"


@pytest.fixture
def logrx_exe() -> str:
    exe = os.environ.get("LOGRX_EXE")
    if not exe:
        pytest.fail("LOGRX_EXE is not set (run through ctest)")
    return exe
