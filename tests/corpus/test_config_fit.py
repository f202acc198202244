"""Which listed configuration a corpus module is built at (benchmarks/corpus/config_fit.py): CONFIGS[0] unless its
inputs are known not to fit a check, then the first listed configuration whose inputs are known to fit."""
from __future__ import annotations

import json

from benchmarks.corpus import build, check, config_fit
from benchmarks.corpus.config_fit import FIT_BYTES, choose, input_bytes
from benchmarks.corpus.recipe_data import kda_schedule

# the fused KDA backward's recipe (benchmarks/corpus/recipes_more.py) sizes these parameters; the records as
# benchmarks/corpus/build.py writes them (a subset of the printed function's buffers)
KDA = "kda_backward_packed"
FUSED = {"function": "kda_bwd_fused",
         "params": [{"name": n, "kind": "buffer", "dtype": d, "shape": [f"{n}_dim0"]}
                    for n, d in (("q", "bfloat16"), ("g", "float32"), ("hsnap", "bfloat16"), ("sched", "int32"))]}
BIG = {"label": "big", "num_qk_heads": 96, "num_v_heads": 96, "seq_lens": (1024,) * 16}
GVA = {"label": "gva", "num_qk_heads": 2, "num_v_heads": 8, "seq_lens": (1000,)}      # the recipe's fused path only
SMALL = {"label": "small", "num_qk_heads": 8, "num_v_heads": 8, "seq_lens": (128, 128)}


def test_inputs_are_sized_as_the_check_binds_them():
    size, what = input_bytes(KDA, [FUSED], SMALL)
    # T = 256 tokens, 8 heads of 128: q bf16 + g fp32, hsnap (T / 64 + N) * 8 heads of 128 x 128 bf16, and the
    # schedule table of 16 chains on 16 CTAs (int32)
    sched = len(kda_schedule(16, 16)["table"])
    assert size == 256 * 8 * 128 * (2 + 4) + 6 * 8 * 128 * 128 * 2 + sched * 4
    assert what.startswith("kda_bwd_fused: hsnap 1.5 MB")


def test_a_configuration_the_recipe_cannot_size_is_not_taken():
    size, why = input_bytes(KDA, [FUSED], GVA)
    assert size is None and "launch recipe value" in why


def test_the_first_listed_configuration_that_fits_is_taken_and_the_reason_recorded():
    index, why = choose(KDA, [BIG, GVA, SMALL, SMALL], [FUSED])
    assert index == 2
    assert why.startswith("CONFIGS[0] (big) needs ") and "over 1.00 GB" in why
    assert "CONFIGS[2] (small) is the first listed configuration whose inputs fit" in why
    assert "after 1 that do not or cannot be sized" in why


def test_configs_0_stays_when_it_fits_or_cannot_be_sized():
    assert choose(KDA, [SMALL, BIG], [FUSED]) == (0, None)
    assert choose(KDA, [GVA, SMALL], [FUSED]) == (0, None)
    index, why = choose(KDA, [BIG, GVA], [FUSED])      # none fits: CONFIGS[0] stays, and the row says so
    assert index == 0 and why.endswith("no listed configuration's inputs fit")
    assert input_bytes(KDA, [FUSED], BIG)[0] > FIT_BYTES


def test_the_build_sizes_with_the_last_builds_parameters(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"modules": [{"module": KDA, "functions": [FUSED]}]}))
    assert build._previous_functions(str(tmp_path), KDA) == [FUSED]
    assert build._previous_functions(str(tmp_path), "other") == []
    assert build._previous_functions(str(tmp_path / "none"), KDA) == []
    rec: dict = {}
    assert build._fitting_config(KDA, [BIG, SMALL], [FUSED], rec)[0] == 1 and rec == {}


def test_rows_and_the_table_name_the_configuration():
    mod = {"module": KDA, "config": {"label": "small"}, "config_index": 2, "config_why": "CONFIGS[0] ... fit"}
    assert check.config_of(mod) == {"index": 2, "label": "small", "why": "CONFIGS[0] ... fit"}
    assert check.config_of({"module": "m", "config": {"label": "a"}}) == {"index": 0, "label": "a"}
    row = {"module": KDA, "function": "f", "generation": "pre", "parsed": True, "config": check.config_of(mod),
           "inputs_from": "the library's launch code (read): x", "synccheck_zeros": {"verdict": "clean"},
           "racecheck_zeros": {"verdict": "clean"}}
    assert "| read @ CONFIGS[2] small |" in check.markdown_table({"rows": [row]})


def test_configs_are_sized_as_the_index_records_them():
    assert config_fit.as_recorded(SMALL)["seq_lens"] == "(128, 128)"


class _Registry:
    """A stand-in for tirx_kernels.registry: one module whose CONFIGS are BIG then SMALL."""

    class _Record:
        runtime_cuda_archs = ("sm_100a",)
        module_name = "tirx_kernels.kda.kda_backward_packed"
        category = "kda"

    class _Module:
        CONFIGS = [BIG, GVA, SMALL]

    def kernel_index(self):
        return {KDA: self._Record()}

    def load_kernel(self, name, strict=True):
        return self._Module()


def _fake_build(monkeypatch, tmp_path, fails: set):
    """build.build over the stand-in registry; `_build_at` records the configuration it builds (failing `fails`)."""
    import sys
    import types
    pkg = types.ModuleType("tirx_kernels")
    pkg.registry = _Registry()       # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tirx_kernels", pkg)
    built: list[int] = []

    def build_at(name, module, configs, chosen, why, cache, arch, rec, t0):
        built.append(chosen)
        rec.update(config_index=chosen, **({"config_why": why} if why else {}))
        if chosen in fails:
            rec.update(status="build_error", error="TypeError: no such kernel")
        else:
            rec.update(status="built", functions=[FUSED])
        return rec
    monkeypatch.setattr(build, "_build_at", build_at)
    (tmp_path / "index.json").write_text(json.dumps({"modules": [{"module": KDA, "functions": [FUSED]}]}))
    return built


def test_the_build_takes_the_fitting_configuration_once(monkeypatch, tmp_path):
    built = _fake_build(monkeypatch, tmp_path, fails=set())
    rec = build.build(KDA, str(tmp_path))
    assert built == [2] and rec["config_index"] == 2 and "CONFIGS[2] (small)" in rec["config_why"]


def test_a_fitting_configuration_that_does_not_build_falls_back_to_configs_0(monkeypatch, tmp_path):
    built = _fake_build(monkeypatch, tmp_path, fails={2})
    rec = build.build(KDA, str(tmp_path))
    assert built == [2, 0] and rec["status"] == "built" and rec["config_index"] == 0
    assert "did not build" in rec["config_fit_error"] and "error" not in rec
    assert rec["config_why"].endswith("but CONFIGS[2] did not build, so CONFIGS[0]")
