"""The three TIRx text forms of one kernel parse to the same IR (docs/architecture.md#pipeline).

Fixtures live in tests/fixtures/forms/, three files per kernel:

  <name>_authoring.py  the apache-tvm-tirx 0.1.0a4 parser form (the form of kernels/);
  <name>_printed.py    exactly what the real parser's `func.script()` prints for it
                       (regenerate with `python tests/ir/test_forms.py --regenerate`);
  <name>_legacy.py     the older forms (@T.prim_func, T.Buffer, T.device_entry() as a
                       statement, scope ids, T.alloc_buffer / T.decl_buffer aliases,
                       `tx = T.launch_thread(...)`, gen-2 positional-modifier PTX calls).

For each kernel: all three pairs are `same_ir`; the legacy form keeps its own
structure (aliases, scope-id lets, launch from scope ids); and one-operand
mutations of each form break `same_ir` (negative controls, so the equality tests
can fail).
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import pytest

import ir
from ir import (Address, BinOp, Cast, Const, ConstRef, DeclBuffer, Let, Load, OpCall, Store, ThreadIndex, Var)

FORMS_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "forms"
KERNELS = ("mbar_pc", "tma_ring", "bar_reduce", "tcgen05_skel")
FORMS = ("authoring", "printed", "legacy")
TX = ThreadIndex("threadIdx.x")


def path(kernel: str, form: str) -> Path:
    return FORMS_DIR / f"{kernel}_{form}.py"


def parse(kernel: str, form: str) -> ir.PrimFunc:
    return ir.parse_file(path(kernel, form))


def ops(func: ir.PrimFunc) -> list[OpCall]:
    return [n for n in ir.walk(func.body) if isinstance(n, OpCall)]


def op_names(func: ir.PrimFunc) -> list[str]:
    return [n.op for n in ops(func)]


def lets(func: ir.PrimFunc) -> dict[str, Let]:
    return {n.var.name: n for n in ir.walk(func.body) if isinstance(n, Let)}


# --------------------------------------------------------------------------- fixture sanity

def test_every_kernel_has_three_forms():
    on_disk = sorted(p.name for p in FORMS_DIR.glob("*.py"))
    assert on_disk == sorted(f"{k}_{f}.py" for k in KERNELS for f in FORMS)


@pytest.mark.parametrize("kernel", KERNELS)
def test_fixtures_are_20_to_60_lines(kernel):
    for form in ("authoring", "legacy"):
        n = len(path(kernel, form).read_text().splitlines())
        assert 20 <= n <= 60, (kernel, form, n)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("form", FORMS)
def test_each_form_parses_and_names_the_kernel(kernel, form):
    func = parse(kernel, form)
    assert func.name == kernel
    assert ops(func), "every fixture exercises PTX/CUDA ops"


def _real_script(kernel: str) -> str:
    pytest.importorskip("tvm_tirx")
    spec = importlib.util.spec_from_file_location(f"forms_fixture_{kernel}", path(kernel, "authoring"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, kernel).script()


@pytest.mark.conformance
@pytest.mark.parametrize("kernel", KERNELS)
def test_printed_fixture_is_the_real_printer_output(kernel):
    """The authoring file is accepted by the real parser, and the printed file is byte-for-byte its output."""
    assert _real_script(kernel) == path(kernel, "printed").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- same IR, all pairs

@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("a,b", list(itertools.combinations(FORMS, 2)))
def test_forms_are_same_ir(kernel, a, b):
    fa, fb = parse(kernel, a), parse(kernel, b)
    assert ir.same_ir(fa, fb), f"{kernel}: {a} and {b} differ\n--- {a}\n{fa.script()}\n--- {b}\n{fb.script()}"
    # and the op streams agree name for name (a cheap, readable witness)
    assert op_names(fa) == op_names(fb)


# --------------------------------------------------------------------------- negative controls

# (kernel, form, old text, new text): one operand changed in one form.
MUTATIONS = [
    ("mbar_pc", "authoring", "pred=lane == 0", "pred=lane == 1"),                        # guard predicate
    ("mbar_pc", "printed", 'T.uint32(1), lane == 0, "arrive"', 'T.uint32(2), lane == 0, "arrive"'),  # count
    ("mbar_pc", "legacy", "T.address_of(empty[0]), (r + 1) % 2", "T.address_of(empty[0]), r % 2"),    # parity
    ("tma_ring", "authoring", "k // STAGES % 2 ^ 1", "k // STAGES % 2 ^ 0"),                  # producer parity
    ("tma_ring", "printed", 'T.uint32(128), "arrive", "expect_tx"', 'T.uint32(64), "arrive", "expect_tx"'),
    ("tma_ring", "legacy", "elem_offset=STAGES)", "elem_offset=STAGES + 1)"),                 # alias offset
    ("bar_reduce", "authoring", "T.ptx.shfl_sync.bfly.b32", "T.ptx.shfl_sync.down.b32"),    # shuffle mode
    ("bar_reduce", "printed", "T.ptx.barrier(T.uint32(2)", "T.ptx.barrier(T.uint32(3)"),    # barrier id
    ("bar_reduce", "legacy", 'T.uint32(NWARPS * 32), "", "arrive", ""', 'T.uint32(NWARPS * 32), "", "sync", ""'),
    ("tcgen05_skel", "authoring", "quad: T.let[T.int32] = tx // 32 % 4", "quad: T.let[T.int32] = tx // 32 % 2"),
    ("tcgen05_skel", "printed", "T.cuda.mbarrier_wait(T.address_of(mma_done[0]), 0)",
     "T.cuda.mbarrier_wait(T.address_of(mma_done[0]), 1)"),
    ("tcgen05_skel", "legacy", 'T.uint32(NCOLS), "dealloc"', 'T.uint32(64), "dealloc"'),  # dealloc columns
]


@pytest.mark.parametrize("kernel,form,old,new", MUTATIONS, ids=[f"{m[0]}-{m[1]}" for m in MUTATIONS])
def test_mutated_form_is_not_same_ir(kernel, form, old, new):
    text = path(kernel, form).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the mutation site {old!r} must occur exactly once in {kernel}_{form}.py"
    mutated = ir.parse(text.replace(old, new), f"{kernel}_{form}_mutated.py")  # still valid text
    for other in FORMS:
        assert not ir.same_ir(mutated, parse(kernel, other)), f"mutating {form} went unnoticed against {other}"
    assert ir.same_ir(parse(kernel, form), parse(kernel, [f for f in FORMS if f != form][0]))


def test_every_kernel_and_form_has_a_negative_control():
    assert {(k, f) for k, f, _, _ in MUTATIONS} == {(k, f) for k in KERNELS for f in FORMS}


# --------------------------------------------------------------------------- legacy forms keep their structure

def test_mbar_pc_legacy_structure():
    func = parse("mbar_pc", "legacy")
    # scope ids are lets over thread indices, in program order, and they set the launch
    assert [s for s in func.body[:3]] == [
        Let(Var("cta", "int32"), ThreadIndex("blockIdx.x")),
        Let(Var("warp", "int32"), BinOp("//", TX, Const(32, "int32"), "int32")),
        Let(Var("lane", "int32"), BinOp("%", TX, Const(32, "int32"), "int32")),
    ]
    assert func.launch.grid == (ConstRef("CTAS", "int32"), Const(1, "int32"), Const(1, "int32"))
    assert func.launch.block == (Const(64, "int32"), Const(1, "int32"), Const(1, "int32"))
    bufs = func.buffers()
    assert bufs["out"].scope == "global" and bufs["out"].dtype == "int32"
    assert bufs["out"].shape == (BinOp("*", ConstRef("CTAS", "int32"), ConstRef("ROUNDS", "int32"), "int32"),)
    for name in ("full", "empty"):
        assert (bufs[name].scope, bufs[name].dtype, bufs[name].data) == ("shared", "uint64", None)
    # gen-2 positional modifiers give the same mnemonics; the "pred" marker moves the last operand to pred
    assert op_names(func)[:3] == ["mbarrier.init.shared.b64", "mbarrier.init.shared.b64",
                                  "fence.mbarrier_init.release.cluster"]
    guarded = [o for o in ops(func) if o.pred is not None]
    assert guarded == [OpCall("mbarrier.arrive.shared.b64", (Address("empty", (Const(0, "int32"),)),
                                                             Const(1, "uint32")),
                              BinOp("==", Var("lane", "int32"), Const(0, "int32"), "bool"), "void")]


def test_tma_ring_legacy_structure():
    func = parse("tma_ring", "legacy")
    bufs = func.buffers()
    # decl_buffer(data=bars.data, elem_offset=k) is an alias of `bars` at k * 8 bytes
    assert bufs["bars"].data is None
    assert (bufs["full"].data, bufs["full"].scope, bufs["full"].dtype) == ("bars", "shared", "uint64")
    assert (bufs["empty"].data, bufs["empty"].scope) == ("bars", "shared")
    assert bufs["full"].byte_offset == Const(0, "int64")
    assert bufs["empty"].byte_offset == BinOp("*", Cast("int64", ConstRef("STAGES", "int32")), Const(8, "int64"),
                                              "int64")
    # the authoring form's decl_tensor(T.ptr_byte_offset(...)) is the same alias, spelled in bytes
    auth = parse("tma_ring", "authoring").buffers()
    assert (auth["empty"].data, auth["full"].data) == ("bars", "bars")
    assert auth["empty"].byte_offset == Cast("int64", BinOp("*", ConstRef("STAGES", "int32"), Const(8, "int32"),
                                                            "int32"))
    # `ok: T.uint32 = 0` is a one-element local register with an initial store
    decl = next(i for i, s in enumerate(func.body) if isinstance(s, DeclBuffer) and s.buffer.name == "ok")
    assert func.body[decl].buffer.shape == (Const(1, "int32"),) and func.body[decl].buffer.scope == "local"
    assert func.body[decl + 1] == Store("ok", (Const(0, "int32"),), Const(0, "uint32"))
    # `tx = T.launch_thread(...)` binds no statement; its uses are thread indices
    assert func.launch.block[0] == Const(64, "int32") and func.launch.grid[0] == Const(1, "int32")
    assert not any(isinstance(n, Var) and n.name == "tx" for n in ir.walk(func.body))
    # the DPS try_wait destination is the register, read as element 0
    wait = next(o for o in ops(func) if o.op.startswith("mbarrier.try_wait"))
    assert wait.op == "mbarrier.try_wait.parity.shared::cta.b64"
    assert wait.operands[0] == Load("ok", (Const(0, "int32"),), "uint32")
    copy = next(o for o in ops(func) if o.op.startswith("cp."))
    assert copy.op == "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"
    assert [type(x) for x in copy.operands] == [Address, Address, Cast, Address]


def test_bar_reduce_legacy_structure():
    func = parse("bar_reduce", "legacy")
    got = lets(func)
    assert got["tid"].value == TX
    assert got["warp"].value == BinOp("//", TX, Const(32, "int32"), "int32")
    assert got["lane"].value == BinOp("%", TX, Const(32, "int32"), "int32")
    # no launch_thread at all: the block size comes from T.thread_id([NWARPS * 32]) / T.warp_id([NWARPS])
    assert func.launch.block[0] == Const(128, "int32")
    # T.local_scalar("uint32") registers read as element 0 when named bare
    assert {b.name for b in func.buffers().values() if b.scope == "local"} == {"v", "t"}
    shfl = next(o for o in ops(func) if o.op.startswith("shfl"))
    assert shfl.op == "shfl_sync.bfly.b32"
    assert shfl.operands[:2] == (Load("t", (Const(0, "int32"),), "uint32"), Load("v", (Const(0, "int32"),), "uint32"))
    bars = [o for o in ops(func) if o.op.split(".")[0] in ("bar", "barrier")]
    assert [o.op for o in bars] == ["bar.arrive", "bar.sync", "barrier.sync"]
    count = Cast("uint32", BinOp("*", ConstRef("NWARPS", "int32"), Const(32, "int32"), "int32"))
    assert bars[0].operands == (Const(1, "uint32"), count)
    assert bars[2].operands == (Const(2, "uint32"), Const(64, "uint32"))


def test_tcgen05_skel_legacy_structure():
    func = parse("tcgen05_skel", "legacy")
    assert lets(func)["quad"].value == BinOp("%", BinOp("//", TX, Const(32, "int32"), "int32"),
                                             Const(4, "int32"), "int32")
    assert func.launch.block[0] == Const(128, "int32")   # from T.warp_id([4])
    tc = [o.op for o in ops(func) if o.op.startswith("tcgen05")]
    assert tc == [
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
        "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
        "tcgen05.fence::after_thread_sync",
        "tcgen05.ld.sync.aligned.32x32b.x1.b32", "tcgen05.wait::ld.sync.aligned",
        "tcgen05.st.sync.aligned.32x32b.x1.b32", "tcgen05.wait::st.sync.aligned",
        "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
    ]
    mma = next(o for o in ops(func) if ".mma." in o.op)
    # "p8" marker: operand 8 stays positional (it is enable_input_d), T.bool(False) takes the operand's dtype
    assert len(mma.operands) == 9 and mma.pred is None
    assert mma.operands[0] == Var("taddr", "uint32") and mma.operands[8] == Const(0, "uint32")
    alloc = ops(func)[0]
    assert alloc.operands == (Address("tmem_addr", (Const(0, "int32"),)), Cast("uint32", ConstRef("NCOLS", "int32")))


# --------------------------------------------------------------------------- regeneration

def regenerate() -> None:
    """Rewrite every <name>_printed.py from the real parser's output for <name>_authoring.py."""
    for kernel in KERNELS:
        spec = importlib.util.spec_from_file_location(f"forms_fixture_{kernel}", path(kernel, "authoring"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        path(kernel, "printed").write_text(getattr(module, kernel).script(), encoding="utf-8")
        print("wrote", path(kernel, "printed"))


if __name__ == "__main__" and "--regenerate" in sys.argv:
    regenerate()
