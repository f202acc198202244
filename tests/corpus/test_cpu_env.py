"""The capture's CPU environment (benchmarks/corpus/cpu_env.py): storages stay findable through any live view."""
from __future__ import annotations

import gc

import pytest

from benchmarks.corpus.cpu_env import LiveViews

torch = pytest.importorskip("torch")


def test_a_storage_stays_findable_while_a_later_view_lives():
    data = torch.zeros(4, 8, dtype=torch.uint8)
    refs = LiveViews(data)
    view = data.reshape(2, 16)
    refs.add(view)
    del data   # `data = data.reshape(...)`: the tensor registered first is gone
    gc.collect()
    assert refs() is view
    del view
    gc.collect()
    assert refs() is None


def test_only_the_newest_views_are_kept():
    base = torch.zeros(16)
    refs = LiveViews(base)
    views = [base[i:] for i in range(20)]
    for v in views:
        refs.add(v)
    assert len(refs.refs) == LiveViews.KEEP and refs() is views[-1]
