"""Inputs from the shell (issue 16 item 1): --inputs BUILDER.py:FUNCTION|FILE.npz, --input NAME=FILE.npy|.npz,
bf16 files, tensor maps loaded from files bound to the buffer they describe; `run` from the shell gives the
Python API's outputs."""
from __future__ import annotations

import numpy as np
import pytest

import modelcheck
from ir.errors import UsageError
from modelcheck import numsim
from modelcheck.cli import EXIT_USAGE, main
from tests.manifest import INPUT_BUILDERS, KERNELS, inputs_builder, load_manifest

TMA_STORE = str(KERNELS / "tma_store.py")
KDA = str(KERNELS / "kda_fwd.py")


def _python_outputs(path: str, builder: str) -> dict:
    kernel = modelcheck.load(path)
    entry = {"inputs_builder": builder}
    inputs = numsim.default_inputs(kernel.func, inputs_builder(entry)(dict(kernel.constants)))
    return numsim.run(kernel.func, inputs).outputs


def _save_all(tmp_path, inputs: dict) -> list[str]:
    args = []
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return args


def _shell_outputs(capsys, path: str, args: list[str], tmp_path) -> dict:
    out = tmp_path / "out.npz"
    assert main(["run", path, *args, "--out", str(out)]) == 0, capsys.readouterr().err
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("path,builder", [(TMA_STORE, "tma:tma_store"), (KDA, "kda:kda_fwd")])
def test_run_from_saved_files_matches_the_python_api(tmp_path, capsys, path, builder):
    """Every input saved with np.save (KDA: bf16 `o` and four tensor maps, one of them over `o`)."""
    kernel = modelcheck.load(path)
    inputs = inputs_builder({"inputs_builder": builder})(dict(kernel.constants))
    want = _python_outputs(path, builder)
    got = _shell_outputs(capsys, path, _save_all(tmp_path, inputs), tmp_path)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name].dtype.itemsize == want[name].dtype.itemsize
        assert got[name].tobytes() == want[name].tobytes(), name
    store = "tmap" if path == TMA_STORE else "tmap_o"
    # the store really reached the buffer (the private-copy bug left it at its initial value)
    target = "out" if path == TMA_STORE else "o"
    assert got[target].tobytes() != np.asarray(inputs[target]).tobytes(), (store, target)


def test_run_with_a_builder_matches_the_python_api(tmp_path, capsys):
    want = _python_outputs(TMA_STORE, "tma:tma_store")
    got = _shell_outputs(capsys, TMA_STORE, ["--inputs", f"{INPUT_BUILDERS / 'tma.py'}:tma_store"], tmp_path)
    assert all(got[k].tobytes() == want[k].tobytes() for k in want)


def test_explicit_binding_and_an_ambiguous_map(tmp_path, capsys):
    kernel = modelcheck.load(TMA_STORE)
    inputs = inputs_builder({"inputs_builder": "tma:tma_store"})(dict(kernel.constants))
    np.save(tmp_path / "tmap.npy", inputs["tmap"])
    want = _python_outputs(TMA_STORE, "tma:tma_store")
    # no `out` given: the default zero buffer does not hold the map's data (-1s); bind it by name
    args = ["--input", f"tmap={tmp_path / 'tmap.npy'}@out", "--input", "out=ones"]
    got = _shell_outputs(capsys, TMA_STORE, args, tmp_path)
    stored = want["out"] != -1
    assert np.array_equal(got["out"][stored], want["out"][stored]) and np.all(got["out"][~stored] == 1)
    assert main(["run", TMA_STORE, "--input", f"tmap={tmp_path / 'tmap.npy'}@nope"]) == EXIT_USAGE
    assert "'nope' is not a buffer parameter" in capsys.readouterr().err


def test_npz_archives_by_name_and_by_key(tmp_path, capsys):
    kernel = modelcheck.load(TMA_STORE)
    inputs = inputs_builder({"inputs_builder": "tma:tma_store"})(dict(kernel.constants))
    np.savez(tmp_path / "all.npz", **inputs)
    want = _python_outputs(TMA_STORE, "tma:tma_store")
    got = _shell_outputs(capsys, TMA_STORE, ["--inputs", str(tmp_path / "all.npz")], tmp_path)
    assert got["out"].tobytes() == want["out"].tobytes()
    args = ["--input", f"out={tmp_path / 'all.npz'}", "--input", f"tmap={tmp_path / 'all.npz'}:tmap"]
    got = _shell_outputs(capsys, TMA_STORE, args, tmp_path)
    assert got["out"].tobytes() == want["out"].tobytes()
    assert main(["run", TMA_STORE, "--input", f"out={tmp_path / 'all.npz'}:nothing"]) == EXIT_USAGE
    assert "has no array 'nothing'" in capsys.readouterr().err


@pytest.mark.parametrize("make,message", [
    (lambda d: np.save(d / "x.npy", np.zeros((8, 8), np.float64)), "the array is float64, parameter out is float32"),
    (lambda d: (d / "x.npy").write_text("not numpy"), "is not a readable .npy file"),
    (lambda d: None, "no such file"),
])
def test_bad_input_files_are_usage_errors_naming_the_option(tmp_path, capsys, make, message):
    make(tmp_path)
    assert main(["run", TMA_STORE, "--input", f"out={tmp_path / 'x.npy'}"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "--input out=" in err and "Traceback" not in err


@pytest.mark.parametrize("body,message", [
    ("def f(consts):\n    return [1]\n", "must return a dict"),
    ("def f(consts):\n    raise ValueError('no data')\n", "b.py:2: ValueError: no data"),
    ("def g(consts):\n    return {}\n", "defines no function 'f' (its functions: g)"),
    ("def f(consts):\n    return {'nope': 1}\n", "nope is not a parameter"),
    ("def f(consts)\n", "importing"),
])
def test_bad_builders_are_usage_errors(tmp_path, capsys, body, message):
    (tmp_path / "b.py").write_text(body)
    assert main(["check", TMA_STORE, "--inputs", f"{tmp_path / 'b.py'}:f"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_builder_that_is_not_a_python_file_is_a_usage_error(tmp_path):
    # the command line asks for BUILDER.py:FUNCTION before this; load_builder itself also says so
    from modelcheck.cli.inputs import load_builder
    (tmp_path / "b.txt").write_text("def f(consts):\n    return {}\n")     # no loader for .txt
    with pytest.raises(UsageError, match="is not a Python file"):
        load_builder(str(tmp_path / "b.txt"), "f")


def test_bf16_files_are_viewed_as_the_parameter_type(tmp_path, capsys):
    import ml_dtypes
    kernel = modelcheck.load(KDA)
    o = np.full((kernel.constants["H"] * kernel.constants["SEQ_LEN"], 64), 1.5, dtype=ml_dtypes.bfloat16)
    np.save(tmp_path / "o.npy", o)
    assert np.load(tmp_path / "o.npy").dtype.kind == "V"        # what np.save makes of bf16
    from modelcheck.cli.inputs import InputPlan

    class Args:
        inputs, input = [], [f"o={tmp_path / 'o.npy'}"]
    plan = InputPlan.from_args(Args())
    built = plan.build(kernel.func)
    assert built["o"].dtype == ml_dtypes.bfloat16 and float(built["o"][0, 0]) == 1.5
    assert "bfloat16[128, 64]" in plan.describe()["o"]


@pytest.mark.parametrize("command", ["check", "sync", "race", "run", "states", "graph", "replay", "prove"])
def test_every_kernel_command_takes_the_input_options(tmp_path, capsys, command):
    builder = f"{INPUT_BUILDERS / 'tma.py'}:tma_store"
    extra = {"graph": ["--out", str(tmp_path / "hb.dot")], "replay": ["--finding", "1"],
             "prove": ["--symbolic", "GX"], "states": ["--configs", "a"]}.get(command, [])
    rc = main([command, TMA_STORE, "--inputs", builder, *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if command == "replay":       # a clean kernel: nothing to replay, said so
        assert rc == EXIT_USAGE and "has no findings" in err
    elif command == "prove":     # no mbarrier family in this kernel
        assert rc in (0, 2) and "tma_store" in out
    else:
        assert rc == 0, err
    if command in ("check", "sync", "race", "run", "states"):
        assert f"tmap, out <- {builder}(constants)" in out or f"out, tmap <- {builder}(constants)" in out


def test_the_report_names_sizes_the_manifest_knows_fail(capsys):
    """kda_fwd_dvec_early races only at two chunks; at its default size the report says so."""
    entry = load_manifest()["kernels"]["kda_fwd_dvec_early"]
    assert entry["constants"] == {"SEQ_LEN": 256}
    rc = main(["race", str(KERNELS / "kda_fwd_dvec_early.py"), "--inputs", f"{INPUT_BUILDERS / 'kda.py'}:kda_fwd"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "expects racecheck error (data_race) at SEQ_LEN=256; this run checked SEQ_LEN=128" in out
    assert "--const SEQ_LEN=256" in out
