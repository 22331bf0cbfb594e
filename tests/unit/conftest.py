"""The fast tier's fixtures: what every unit test gets."""
from __future__ import annotations

import pytest

from jvmbridge.comparison import interleaved


@pytest.fixture(autouse=True)
def no_yardsticks(monkeypatch):
    """The fast tier starts no measuring process: the host's yardsticks (C loop workers) are left out
    of the conductor's jobs, whose fake engines' workers live in the test's process."""
    monkeypatch.setattr(interleaved, "yardsticks", lambda job: [])
