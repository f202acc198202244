"""The input digest a report carries: taken when first read, the same value as hashing at the end of the check."""
import numpy as np

from modelcheck.common.results import InputDigest, digest_inputs


def test_digest_is_taken_when_read_and_kept():
    inputs = {"a": np.arange(8, dtype=np.int32), "n": 3}
    d = InputDigest(inputs)
    want = digest_inputs(inputs)
    assert str(d) == want and len(want) == 64
    inputs["a"][0] = 99                  # read once: later changes to the caller's arrays do not move it
    assert str(d) == want


def test_digest_names_dtype_shape_and_bytes():
    base = digest_inputs({"a": np.zeros(4, np.int32)})
    assert digest_inputs({"a": np.zeros(4, np.uint32)}) != base
    assert digest_inputs({"a": np.zeros((2, 2), np.int32)}) != base
    assert digest_inputs({"a": np.ones(4, np.int32)}) != base
    assert digest_inputs({"b": np.zeros(4, np.int32)}) != base
