"""Parser unit tests: every construct of the three TIRx text forms, with the exact IR it builds.

Most tests put a snippet into one kernel template (`stmts`/`expr` below) and compare
the statements after the template's prelude with hand-built IR nodes (spans never take
part in equality).  Typed literals and implicit casts are the ones TVM inserts (they
were checked against apache-tvm-tirx 0.1.0a4's printer: see the `printed as` notes).
"""
from __future__ import annotations

import textwrap

import pytest

import ir
from ir import (Address, Assert, BinOp, Break, Buffer, Cast, Const, ConstRef, Continue, DeclBuffer, Evaluate, For,
                If, Launch, Let, Load, OpCall, Param, ParseError, Select, Store, StrConst, ThreadIndex, UnaryOp,
                Unsupported, Var, While, classify)

TEMPLATE = '''\
from tvm_tirx.script import tirx as T

N = 8
M = N * 2


@T.function
def k(a: T.Tensor((N,), T.int32), n: T.int32, n64: T.int64, u: T.uint32, f: T.float32, tmap: T.Ptr(T.void)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 2) as bx:
            with T.launch_thread("threadIdx.x", 128) as tx:
                bar = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint64, scope="shared")])
                sbuf = T.alloc_tensor(ty_args=[T.Tensor((4, 32), T.float32, scope="shared")])
                r32 = T.local_scalar(T.uint32)
                i8 = T.local_scalar(T.int8)
                h = T.local_scalar(T.float16)
                regs = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint32, scope="local")])
                pass  # <snippet>
'''
SNIPPET_LINE = TEMPLATE.splitlines().index("                pass  # <snippet>") + 1
INDENT = 16

TX = ThreadIndex("threadIdx.x")
BX = ThreadIndex("blockIdx.x")
n, n64, u, f = Var("n", "int32"), Var("n64", "int64"), Var("u", "uint32"), Var("f", "float32")


def c(value, dtype="int32") -> Const:
    return Const(value, dtype)


def u32(value) -> Const:
    return Const(value, "uint32")


ZERO = (c(0),)


def scalar(name: str, dtype: str) -> Load:
    """A bare name of a one-element local register reads element 0."""
    return Load(name, ZERO, dtype)


def addr(buf: str, *idx) -> Address:
    return Address(buf, tuple(c(i) if isinstance(i, int) else i for i in idx))


def kernel(snippet: str) -> str:
    body = textwrap.indent(textwrap.dedent(snippet).strip("\n"), " " * INDENT)
    return TEMPLATE.replace("                pass  # <snippet>", body)


PRELUDE = len(ir.parse(kernel("pass")).body)


def stmts(snippet: str, **consts) -> tuple:
    """The statements `snippet` builds (after the template's declarations)."""
    return ir.parse(kernel(snippet), "k.py", **consts).body[PRELUDE:]


def stmt(snippet: str):
    out = stmts(snippet)
    assert len(out) == 1, out
    return out[0]


def expr(text: str):
    """The IR of one expression (bound with `x: T.let = ...`)."""
    s = stmt(f"x: T.let = {text}")
    assert isinstance(s, Let)
    return s.value


def op(text: str) -> OpCall:
    s = stmt(text)
    assert isinstance(s, Evaluate), s
    return s.value


def parse_error(snippet: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        ir.parse(kernel(snippet), "k.py")
    return info.value


def whole(body: str, header: str = "@T.function", params: str = "out: T.Tensor((4,), T.int32)") -> ir.PrimFunc:
    text = f"from tvm_tirx.script import tirx as T\n\nN = 4\n\n\n{header}\ndef w({params}):\n" + \
        textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return ir.parse(text, "w.py")


# =========================================================================== module, signature, launch

def test_template_prelude_declares_the_buffers():
    func = ir.parse(kernel("pass"))
    assert func.body == (
        DeclBuffer(Buffer("bar", (c(4),), "uint64", "shared")),
        DeclBuffer(Buffer("sbuf", (c(4), c(32)), "float32", "shared")),
        DeclBuffer(Buffer("r32", (c(1),), "uint32", "local")),
        DeclBuffer(Buffer("i8", (c(1),), "int8", "local")),
        DeclBuffer(Buffer("h", (c(1),), "float16", "local")),
        DeclBuffer(Buffer("regs", (c(4),), "uint32", "local")),
    )
    assert func.launch == Launch((c(2), c(1), c(1)), (c(128), c(1), c(1)), (c(1), c(1), c(1)))


def test_params_tensor_scalar_handle():
    func = ir.parse(kernel("pass"))
    assert func.params == (
        Param("a", "buffer", "int32", Buffer("a", (ConstRef("N", "int32"),), "int32", "global")),
        Param("n", "scalar", "int32"), Param("n64", "scalar", "int64"), Param("u", "scalar", "uint32"),
        Param("f", "scalar", "float32"), Param("tmap", "handle", "handle"),
    )
    assert whole('T.device_entry()\ntx = T.launch_thread("threadIdx.x", 32)', params="h: T.handle").params == \
        (Param("h", "handle", "handle"),)


def test_gen1_buffer_param_equals_gen3_tensor_param():
    body = 'with T.device_entry():\n    with T.launch_thread("threadIdx.x", 32) as tx:\n        out[0] = 1'
    gen3 = whole(body, params="out: T.Tensor((N,), T.int32)")
    gen1 = whole(body, params='out: T.Buffer((N,), "int32")')
    assert gen1 == gen3
    assert gen1.params[0].buffer == Buffer("out", (ConstRef("N", "int32"),), "int32", "global")


def test_prim_func_decorator_equals_function_decorator():
    body = 'with T.device_entry():\n    with T.launch_thread("threadIdx.x", 32) as tx:\n        out[0] = 1'
    assert whole(body, header="@T.prim_func") == whole(body, header="@T.function")
    with pytest.raises(ParseError) as info:
        whole(body, header="@T.jit_kernel")
    assert info.value.what == "unknown decorator" and "@T.function" in info.value.expected


def test_device_entry_statement_equals_with_block():
    stmt_form = whole('T.device_entry()\ntx = T.launch_thread("threadIdx.x", 32)\nout[tx % 4] = tx')
    with_form = whole('with T.device_entry():\n    with T.launch_thread("threadIdx.x", 32) as tx:\n'
                      '        out[tx % 4] = tx')
    assert stmt_form == with_form
    assert with_form.body == (Store("out", (BinOp("%", TX, c(4), "int32"),), TX),)


def test_launch_thread_with_form_and_assignment_form():
    assign = whole('T.device_entry()\nbx = T.launch_thread("blockIdx.x", N)\n'
                   'cx = T.launch_thread("clusterCtaIdx.x", 2)\n'
                   'tx = T.launch_thread("threadIdx.x", 64)\nty = T.launch_thread("threadIdx.y", 2)\n'
                   'out[bx] = tx + ty + cx')
    with_ = whole('with T.device_entry():\n'
                  '    with T.launch_thread("blockIdx.x", N) as bx:\n'
                  '        with T.launch_thread("clusterCtaIdx.x", 2) as cx:\n'
                  '            with T.launch_thread("threadIdx.x", 64) as tx:\n'
                  '                with T.launch_thread("threadIdx.y", 2) as ty:\n'
                  '                    out[bx] = tx + ty + cx')
    assert assign == with_
    assert with_.launch == Launch((ConstRef("N", "int32"), c(1), c(1)), (c(64), c(2), c(1)), (c(2), c(1), c(1)))
    sum_ = BinOp("+", BinOp("+", TX, ThreadIndex("threadIdx.y"), "int32"), ThreadIndex("clusterCtaIdx.x"), "int32")
    assert with_.body == (Store("out", (BX,), sum_),)


def test_launch_errors():
    e = parse_error('q = T.launch_thread("warpIdx.x", 4)')
    assert e.what == "unknown thread tag" and '"threadIdx.x"' in e.expected
    e = parse_error('q = T.launch_thread("threadIdx.x", 64)')
    assert e.what == "'threadIdx.x' is launched twice"
    e = parse_error('T.launch_thread("threadIdx.y", 4)')
    assert e.what == "T.launch_thread must be bound to a name"
    with pytest.raises(ParseError) as info:
        whole("T.device_entry()\nout[0] = 1")
    assert info.value.what == "the kernel launches no threads" and "launch_thread" in info.value.hint


def test_module_constants_stay_constrefs_and_overrides_update_dependents():
    func = ir.parse(kernel("x: T.let = n * M"))
    assert func.body[PRELUDE] == Let(Var("x", "int32"), BinOp("*", n, ConstRef("M", "int32"), "int32"))
    assert [(k.name, k.value) for k in func.constants] == [("N", 8), ("M", 16)]
    assert func.constants[1].expr == BinOp("*", ConstRef("N", "int32"), c(2), "int32")
    over = ir.parse(kernel("x: T.let = n * M"), N=3)
    assert over.constant_values == {"N": 3, "M": 6}
    assert over.body[PRELUDE] == func.body[PRELUDE]       # the IR still names M, only the binding changed
    assert over.params[0].buffer.shape == (ConstRef("N", "int32"),)
    assert not ir.same_ir(over, func)                     # ... which the canonical form substitutes
    with pytest.raises(ValueError, match="unknown constant"):
        ir.parse(kernel("pass"), K=1)


def test_printed_header_without_import_is_accepted():
    text = kernel("pass").replace("from tvm_tirx.script import tirx as T",
                                  "from __future__ import annotations\n\n# from tvm_tirx.script import tirx as T")
    assert ir.parse(text) == ir.parse(kernel("pass"))


# =========================================================================== scope ids (gen 1)

WARP = BinOp("//", TX, c(32), "int32")


@pytest.mark.parametrize("call,value,block,grid,cluster", [
    ("T.thread_id([128])", TX, 128, 1, 1),
    ("T.warp_id([4])", WARP, 128, 1, 1),
    ("T.lane_id([32])", BinOp("%", TX, c(32), "int32"), 32, 1, 1),
    ("T.warpgroup_id([2])", BinOp("//", TX, c(128), "int32"), 256, 1, 1),
    ("T.warp_id_in_wg([4])", BinOp("%", WARP, c(4), "int32"), 32, 1, 1),
    ("T.thread_id_in_wg([128])", BinOp("%", TX, c(128), "int32"), 32, 1, 1),
    ("T.cta_id([3])", BX, 32, 3, 1),
    ("T.cluster_id([1])", BX, 32, 1, 1),
    ("T.cta_id_in_cluster([2])", ThreadIndex("clusterCtaIdx.x"), 32, 1, 2),
])
def test_scope_id_is_a_let_and_sets_the_launch(call, value, block, grid, cluster):
    # lane_id, cta_id and friends imply no block size, so those kernels also name 32 threads with thread_id
    sizes_block = call.startswith(("T.thread_id(", "T.warp_id(", "T.warpgroup_id("))
    extra = "" if sizes_block else "t = T.thread_id([32])\n"
    func = whole(f"T.device_entry()\n{extra}s = {call}\nout[0] = s")
    let = next(x for x in func.body if isinstance(x, Let) and x.var.name == "s")
    assert let == Let(Var("s", "int32"), value)
    assert func.body[-1] == Store("out", ZERO, Var("s", "int32"))
    assert func.launch == Launch((c(grid), c(1), c(1)), (c(block), c(1), c(1)), (c(cluster), c(1), c(1)))


def test_scope_id_equals_authoring_let():
    legacy = whole("T.device_entry()\nwarp = T.warp_id([2])\nlane = T.lane_id([32])\nout[warp] = lane")
    authoring = whole('with T.device_entry():\n    with T.launch_thread("threadIdx.x", 64) as tx:\n'
                      '        warp: T.let[T.int32] = tx // 32\n        lane: T.let[T.int32] = tx % 32\n'
                      '        out[warp] = lane')
    assert legacy == authoring


def test_scope_ids_with_constant_expression_extents():
    func = whole("T.device_entry()\nw = T.warp_id([N * 2])\nout[0] = w")
    assert func.launch.block[0] == c(256)


def test_scope_ids_must_agree():
    with pytest.raises(ParseError) as info:
        whole("T.device_entry()\nw = T.warp_id([2])\nt = T.thread_id([128])\nout[0] = w + t")
    assert info.value.what == "scope ids imply different thread counts: 64, 128"
    with pytest.raises(ParseError) as info:
        whole('T.device_entry()\ntx = T.launch_thread("threadIdx.x", 96)\nw = T.warp_id([2])\nout[0] = w')
    assert info.value.what == "scope ids imply 64 threads but threadIdx.x is launched with 96"


# =========================================================================== buffers, locals, lets

def test_alloc_tensor_alloc_buffer_alloc_shared_are_one_declaration():
    want = DeclBuffer(Buffer("s", (c(2), c(8)), "float32", "shared"))
    assert stmt('s = T.alloc_tensor(ty_args=[T.Tensor((2, 8), T.float32, scope="shared")])') == want
    assert stmt('s = T.alloc_buffer((2, 8), "float32", scope="shared")') == want
    assert stmt("s = T.alloc_shared((2, 8), T.float32)") == want
    assert stmt("s = T.alloc_local((2, 8), T.float32)") == DeclBuffer(Buffer("s", (c(2), c(8)), "float32", "local"))


def test_local_scalar_forms_are_one_element_local_buffers():
    decl = DeclBuffer(Buffer("x", (c(1),), "int32", "local"))
    assert stmts("x = T.local_scalar(T.int32)") == (decl,)
    assert stmts('x = T.local_scalar("int32")') == (decl,)
    assert stmts('x = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="local")])') == (decl,)
    init = (decl, Store("x", ZERO, c(5)))
    assert stmts("x: T.int32 = 5") == init
    assert stmts("x = T.local_scalar(T.int32, 5)") == init
    assert stmts('x = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="local")])\nx[0] = 5') == init


def test_bare_local_name_reads_and_writes_element_zero():
    assert stmts("r32 = u\nx: T.let = r32 + i8") == (
        Store("r32", ZERO, u),
        Let(Var("x", "uint32"), BinOp("+", scalar("r32", "uint32"), Cast("uint32", scalar("i8", "int8")), "uint32")),
    )
    # storing converts to the register's dtype, as TVM's T.Cast
    assert stmt("i8 = n") == Store("i8", ZERO, Cast("int8", n))
    assert stmt("regs[2] = 7") == Store("regs", (c(2),), u32(7))


def test_element_store_and_load():
    assert stmt("sbuf[1, tx] = n") == Store("sbuf", (c(1), TX), Cast("float32", n))
    assert stmt("a[tx % N] = a[0] + 1") == Store("a", (BinOp("%", TX, ConstRef("N", "int32"), "int32"),),
                                                  BinOp("+", Load("a", ZERO, "int32"), c(1), "int32"))
    e = parse_error("sbuf[1] = 0.0")
    assert e.what == "buffer 'sbuf' has 2 dimension(s), indexed with 1"


def test_augmented_assignment():
    # printed as r32[0] = r32[0] + T.uint32(1) / i8[0] = T.Cast("int8", T.Cast("int32", i8[0]) + 1)
    assert stmt("r32 += 1") == Store("r32", ZERO, BinOp("+", scalar("r32", "uint32"), u32(1), "uint32"))
    assert stmt("i8 += 1") == Store("i8", ZERO, Cast("int8", BinOp("+", Cast("int32", scalar("i8", "int8")), c(1),
                                                                      "int32")))
    assert stmt("regs[1] ^= u") == Store("regs", (c(1),), BinOp("^", Load("regs", (c(1),), "uint32"), u, "uint32"))


def test_decl_buffer_alias_records_root_and_byte_offset():
    out = stmts('''
        pool = T.alloc_buffer((64,), "uint8", scope="shared")
        bars = T.decl_buffer((2,), "uint64", data=pool.data, elem_offset=2)
        inner = T.decl_buffer((1,), "uint64", data=bars.data, elem_offset=1)
        raw = T.decl_buffer((4,), "int32", data=pool.data, byte_offset=32, scope="shared")
    ''')
    assert out[1] == DeclBuffer(Buffer("bars", (c(2),), "uint64", "shared", "pool", Const(16, "int64")))
    # an alias of an alias points at the root allocation; `bars.data` is bars' data pointer, the pool's (TVM
    # keeps elem_offset in the buffer, not in its data): 1 * 8 bytes from the pool, as the lowered form folds it
    assert out[2] == DeclBuffer(Buffer("inner", (c(1),), "uint64", "shared", "pool", Const(8, "int64")))
    assert out[3] == DeclBuffer(Buffer("raw", (c(4),), "int32", "shared", "pool", Const(32, "int64")))
    e = parse_error('b = T.decl_buffer((2,), "uint64", elem_offset=2, scope="shared")')
    assert e.what == "an offset needs data= (the buffer it aliases)"


def test_gen2_decl_buffer_with_dynamic_scope_and_align():
    out = stmts('pool_buf = T.alloc_buffer((1024,), "uint8", scope="shared.dyn", align=1024)\n'
                'mb = T.decl_buffer((1,), "uint64", data=pool_buf.data, elem_offset=27, scope="shared.dyn", align=8)')
    assert out == (DeclBuffer(Buffer("pool_buf", (c(1024),), "uint8", "shared.dyn", align=1024)),
                   DeclBuffer(Buffer("mb", (c(1),), "uint64", "shared.dyn", "pool_buf", Const(216, "int64"), 8)))
    e = parse_error('t = T.decl_buffer((128, 512), "float32", scope="tmem", allocated_addr=0)')
    assert e.what == "unknown storage scope 'tmem' for 't'" and "tcgen05.alloc" in e.hint


def test_decl_tensor_alias_equals_decl_buffer_alias():
    gen3 = stmts('''
        pool = T.alloc_tensor(ty_args=[T.Tensor((4,), T.uint64, scope="shared")])
        lo = T.decl_tensor(pool.data, ty_args=[T.Tensor((2,), T.uint64, scope="shared")])
        hi = T.decl_tensor(T.ptr_byte_offset(pool.data, 16, ty=T.Ptr(T.uint64, "shared")),
                           ty_args=[T.Tensor((2,), T.uint64, scope="shared")])
    ''')
    gen1 = stmts('''
        pool = T.alloc_buffer((4,), "uint64", scope="shared")
        lo = T.decl_buffer((2,), "uint64", data=pool.data, elem_offset=0)
        hi = T.decl_buffer((2,), "uint64", data=pool.data, elem_offset=2)
    ''')
    assert gen3 == gen1
    assert gen3[2] == DeclBuffer(Buffer("hi", (c(2),), "uint64", "shared", "pool", Const(16, "int64")))
    e = parse_error('x = T.decl_tensor(n, ty_args=[T.Tensor((2,), T.uint64, scope="shared")])')
    assert e.what == "T.decl_tensor takes another buffer's .data as its pointer"


def test_let_forms():
    assert stmt("x: T.let[T.int32] = tx // 32") == Let(Var("x", "int32"), WARP)
    assert stmt("x: T.let = u + 1") == Let(Var("x", "uint32"), BinOp("+", u, u32(1), "uint32"))
    assert stmt("x = n * 2") == Let(Var("x", "int32"), BinOp("*", n, c(2), "int32"))  # implicit let
    assert stmt("x: T.let[T.uint32] = T.uint32(tx)") == Let(Var("x", "uint32"), Cast("uint32", TX))
    # a rebound name is renamed like the TVM printer does (x, x_1); (a plain `x = i` would only alias i)
    assert stmts("for i in range(2):\n    x: T.let = i\nfor i in range(2):\n    x: T.let = i") == (
        For(Var("i", "int32"), c(0), c(2), c(1), "serial", (Let(Var("x", "int32"), Var("i", "int32")),)),
        For(Var("i_1", "int32"), c(0), c(2), c(1), "serial", (Let(Var("x_1", "int32"), Var("i_1", "int32")),)),
    )
    e = parse_error("x: T.let = 1\nx = 2")
    assert e.what == "assignment to T.let 'x'" and "local_scalar" in e.hint


# =========================================================================== statements

def test_if_elif_else_nests_as_if_in_else():
    s = stmt('''
        if tx == 0:
            r32 = 1
        elif tx == 1:
            r32 = 2
        else:
            r32 = 3
    ''')
    assert s == If(BinOp("==", TX, c(0), "bool"), (Store("r32", ZERO, u32(1)),),
                   (If(BinOp("==", TX, c(1), "bool"), (Store("r32", ZERO, u32(2)),),
                       (Store("r32", ZERO, u32(3)),)),))
    printed = stmt('''
        if tx == 0:
            r32 = 1
        else:
            if tx == 1:
                r32 = 2
            else:
                r32 = 3
    ''')
    assert printed == s


def test_for_loops():
    i = Var("i", "int32")
    body = (Store("regs", (i,), u32(0)),)
    assert stmt("for i in range(4):\n    regs[i] = 0") == For(i, c(0), c(4), c(1), "serial", body)
    assert stmt("for i in T.serial(4):\n    regs[i] = 0") == For(i, c(0), c(4), c(1), "serial", body)
    assert stmt("for i in range(1, 4, 2):\n    regs[i] = 0") == For(i, c(1), c(4), c(2), "serial", body)
    # T.unroll(4) starts at 0, exactly as the printer's T.unroll(0, 4)
    assert stmt("for i in T.unroll(4):\n    regs[i] = 0") == For(i, c(0), c(4), c(1), "unroll", body)
    assert stmt("for i in T.unroll(0, 4):\n    regs[i] = 0") == For(i, c(0), c(4), c(1), "unroll", body)
    assert stmt("for i in T.unroll(1, M):\n    regs[0] = 0") == \
        For(i, c(1), ConstRef("M", "int32"), c(1), "unroll", (Store("regs", ZERO, u32(0)),))
    j = Var("j", "int32")
    assert stmt("for i, j in T.grid(2, 3):\n    regs[i] = T.uint32(j)") == \
        For(i, c(0), c(2), c(1), "serial", (For(j, c(0), c(3), c(1), "serial",
                                                (Store("regs", (i,), Cast("uint32", j)),)),))
    e = parse_error("for i in range(1, 4, 0):\n    pass")
    assert e.what == "loop step must not be zero"


def test_while_break_continue():
    s = stmt('''
        while r32 == 0:
            if n > 0:
                break
            else:
                continue
    ''')
    assert s == While(BinOp("==", scalar("r32", "uint32"), u32(0), "bool"),
                      (If(BinOp(">", n, c(0), "bool"), (Break(),), (Continue(),)),))
    assert parse_error("break").what == "'break' outside a loop"
    assert parse_error("continue").what == "'continue' outside a loop"


def test_gen1_phase_loop():
    # the [HAR] synccheck tests' shape: an annotated local phase, `while True` + break, phase ^= 1
    out = stmts('''
        phase: T.int32 = 0
        while True:
            T.cuda.mbarrier_wait(T.address_of(bar[0]), phase)
            phase = phase ^ 1
            if phase == 0:
                break
    ''')
    ph = scalar("phase", "int32")
    assert out == (
        DeclBuffer(Buffer("phase", (c(1),), "int32", "local")),
        Store("phase", ZERO, c(0)),
        While(Const(True, "bool"), (
            Evaluate(OpCall("cuda.mbarrier_wait", (addr("bar", 0), ph), None, "void")),
            Store("phase", ZERO, BinOp("^", ph, c(1), "int32")),
            If(BinOp("==", ph, c(0), "bool"), (Break(),), ()),
        )),
    )


def test_assert_evaluate_pass_and_attrs():
    assert stmt('assert n > 0, "n must be positive"') == Assert(BinOp(">", n, c(0), "bool"), "n must be positive")
    assert stmt('assert n > 0, ("RuntimeError", ["n must be positive"])') == \
        Assert(BinOp(">", n, c(0), "bool"), "n must be positive")
    assert stmt("T.evaluate(T.cuda.clock64())") == Evaluate(OpCall("cuda.clock64", (), None, "uint64"))
    assert stmts("T.evaluate(0)\npass") == ()
    func = ir.parse(kernel('T.func_attr({"tirx.noalias": True})\nwith T.attr({"tirx.dyn_smem_bytes": 1024}):\n'
                           '    r32 = 1'))
    assert func.body[PRELUDE:] == (Store("r32", ZERO, u32(1)),)
    assert dict(func.attrs) == {"tirx.noalias": True, "tirx.dyn_smem_bytes": 1024}


# =========================================================================== expressions and typing

EXPRESSIONS = [
    # printed as T.Cast("uint32", tx) + T.uint32(1)
    ("tx + T.uint32(1)", BinOp("+", Cast("uint32", TX), u32(1), "uint32")),
    # a literal next to a uint32 register becomes uint32
    ("r32 + 1", BinOp("+", scalar("r32", "uint32"), u32(1), "uint32")),
    ("u - 1", BinOp("-", u, u32(1), "uint32")),
    ("n64 + 1", BinOp("+", n64, Const(1, "int64"), "int64")),
    # narrow integers promote to int32 against a literal (TVM's BinaryOpMatchTypes) ...
    ("i8 + 1", BinOp("+", Cast("int32", scalar("i8", "int8")), c(1), "int32")),
    ("i8 == 1", BinOp("==", Cast("int32", scalar("i8", "int8")), c(1), "bool")),
    ("T.truncmod(i8, 3)", BinOp("tmod", Cast("int32", scalar("i8", "int8")), c(3), "int32")),
    # ... but bitwise operators give the literal the other side's type
    ("i8 & 1", BinOp("&", scalar("i8", "int8"), Const(1, "int8"), "int8")),
    ("i8 << 1", BinOp("<<", scalar("i8", "int8"), Const(1, "int8"), "int8")),
    ("u >> 2", BinOp(">>", u, u32(2), "uint32")),
    # a literal too wide for int32 is int64 and promotes
    ("u + 3000000000", BinOp("+", Cast("int64", u), Const(3000000000, "int64"), "int64")),
    ("T.int64(3000000000)", Const(3000000000, "int64")),
    # mixed non-literal types meet through explicit casts
    ("n64 + n", BinOp("+", n64, Cast("int64", n), "int64")),
    ("u + n", BinOp("+", u, Cast("uint32", n), "uint32")),
    ("f + n", BinOp("+", f, Cast("float32", n), "float32")),
    ("f * 2", BinOp("*", f, Const(2.0, "float32"), "float32")),
    ("h * 2", BinOp("*", scalar("h", "float16"), Const(2.0, "float16"), "float16")),
    ("h * 1.5", BinOp("*", Cast("float32", scalar("h", "float16")), Const(1.5, "float32"), "float32")),
    ("1.5", Const(1.5, "float32")),
    # negation is x * -1 in the operand's type; a negative literal is a constant
    ("-n", BinOp("*", n, c(-1), "int32")),
    ("-f", BinOp("*", f, Const(-1.0, "float32"), "float32")),
    ("-i8", BinOp("*", scalar("i8", "int8"), Const(-1, "int8"), "int8")),
    ("-5", c(-5)),
    ("n - -1", BinOp("-", n, c(-1), "int32")),
    # selects
    ("n if n > 0 else 5", Select(BinOp(">", n, c(0), "bool"), n, c(5), "int32", lazy=True)),
    ("T.if_then_else(n > 0, n, 5)", Select(BinOp(">", n, c(0), "bool"), n, c(5), "int32", lazy=True)),
    ("T.Select(n > 0, n, 5)", Select(BinOp(">", n, c(0), "bool"), n, c(5), "int32", lazy=False)),
    ("T.if_then_else(n > 0, i8, 1)", Select(BinOp(">", n, c(0), "bool"), scalar("i8", "int8"), Const(1, "int8"),
                                           "int8", lazy=True)),
    ("i8 if n > 0 else 300", Select(BinOp(">", n, c(0), "bool"), Cast("int32", scalar("i8", "int8")), c(300),
                                    "int32", lazy=True)),
    # casts and typed constants
    ("T.uint32(5)", u32(5)),
    ("T.uint32(n)", Cast("uint32", n)),
    ("T.Cast(\"int64\", n)", Cast("int64", n)),
    ("T.Cast(\"int32\", n)", n),
    # gen-1 T.cast(value, dtype)
    ("T.cast(16, \"uint32\")", u32(16)),
    ("T.cast(n, T.int64)", Cast("int64", n)),
    ("T.float32(\"inf\")", Const(float("inf"), "float32")),
    ("T.bool(True)", Const(True, "bool")),
    # Python precedence: k // 4 & 1 ^ 1 == ((k // 4) & 1) ^ 1
    ("n // 4 & 1 ^ 1", BinOp("^", BinOp("&", BinOp("//", n, c(4), "int32"), c(1), "int32"), c(1), "int32")),
    ("n + 2 * 3 << 1", BinOp("<<", BinOp("+", n, c(6), "int32"), c(1), "int32")),
    ("3 * 4 - 1", c(11)),
    ("(n + 1) * 2", BinOp("*", BinOp("+", n, c(1), "int32"), c(2), "int32")),
    # T.* operator calls
    ("T.bitwise_xor(n, 1)", BinOp("^", n, c(1), "int32")),
    ("T.bitwise_and(i8, 1)", BinOp("&", scalar("i8", "int8"), Const(1, "int8"), "int8")),
    ("T.bitwise_or(u, 1)", BinOp("|", u, u32(1), "uint32")),
    ("T.bitwise_not(n)", UnaryOp("~", n, "int32")),
    ("T.shift_left(n, 2)", BinOp("<<", n, c(2), "int32")),
    ("T.shift_right(u, 2)", BinOp(">>", u, u32(2), "uint32")),
    ("T.truncdiv(n, 3)", BinOp("tdiv", n, c(3), "int32")),
    ("T.Div(n, 3)", BinOp("tdiv", n, c(3), "int32")),
    ("T.floordiv(n, 3)", BinOp("//", n, c(3), "int32")),
    ("T.floormod(n, 3)", BinOp("%", n, c(3), "int32")),
    ("T.min(n, 4)", BinOp("min", n, c(4), "int32")),
    ("T.max(u, 1)", BinOp("max", u, u32(1), "uint32")),
    # comparisons and logic are bool
    ("0 < n < 4", BinOp("and", BinOp("<", c(0), n, "bool"), BinOp("<", n, c(4), "bool"), "bool")),
    ("n > 0 or u < 3", BinOp("or", BinOp(">", n, c(0), "bool"), BinOp("<", u, u32(3), "bool"), "bool")),
    ("not (n > 0)", UnaryOp("not", BinOp(">", n, c(0), "bool"), "bool")),
    ("~n", UnaryOp("~", n, "int32")),
    # names: module constants stay ConstRef, thread indices are ThreadIndex, loads are typed
    ("n * M", BinOp("*", n, ConstRef("M", "int32"), "int32")),
    ("tx // 32", WARP),
    ("sbuf[1, tx]", Load("sbuf", (c(1), TX), "float32")),
]


@pytest.mark.parametrize("text,want", EXPRESSIONS)
def test_expression(text, want):
    assert expr(text) == want


@pytest.mark.conformance
def test_expression_typing_matches_the_real_printer(tmp_path):
    """Every EXPRESSIONS entry, through apache-tvm-tirx: the printed text parses to the same IR as the source."""
    pytest.importorskip("tvm_tirx")
    import importlib.util
    source = kernel("\n".join(f"x{i}: T.let = {text}" for i, (text, _) in enumerate(EXPRESSIONS)))
    (tmp_path / "exprs.py").write_text(source)
    spec = importlib.util.spec_from_file_location("constructs_exprs", tmp_path / "exprs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    printed = ir.parse(module.k.script(), "printed.py")
    ours = ir.parse(source, "exprs.py")
    mine = ir.canonical(ours).body[PRELUDE:]
    theirs = ir.canonical(printed).body[PRELUDE:]
    assert len(mine) == len(theirs) == len(EXPRESSIONS)
    mismatches = [(text, a, b) for (text, _), a, b in zip(EXPRESSIONS, mine, theirs) if a != b]
    assert not mismatches, "\n".join(f"{t}:\n  ours    {a}\n  printed {b}" for t, a, b in mismatches)


def test_expression_errors():
    assert parse_error("x: T.let = n / 2").what == "'/' on integers is ambiguous"
    e = parse_error("x: T.let = nn + 1")
    assert e.what == "undefined name 'nn'" and e.hint == "did you mean 'n'?"
    assert parse_error("x: T.let = sbuf").what == "buffer 'sbuf' used as a value"
    assert parse_error("x: T.let = n ** 2").what == "operator '**' is not supported in TIRx"
    e = parse_error("x: T.let = T.cast(n)")
    assert e.what == "T.cast takes (value, dtype)" and "(dtype, value)" in e.hint


# =========================================================================== PTX calls: three spellings

MMA = "T.ptx.tcgen05.mma.cta_group__1.kind__f16(r32, T.uint64(n64), T.uint64(n64), r32, 0, 0, 0, 0, True)"
PRED_ARRIVE = "T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]), 1, pred=tx == 0)"
TRY_WAIT = "T.ptx.mbarrier.try_wait.parity.shared__cta.b64(r32, bar.ptr_to([1]), T.uint32(n))"
EXPECT_TX = OpCall("mbarrier.arrive.expect_tx.shared::cta.b64", (addr("bar", 0), u32(128)), None, "void")


@pytest.mark.parametrize("text", [
    "T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), 128)",
    'T.ptx["mbarrier.arrive.expect_tx.shared::cta.b64"](T.address_of(bar[0]), T.uint32(128))',
    'T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(128), '
    '"arrive", "expect_tx", "", "", "shared::cta", "b64", "")',
    'T.ptx.mbarrier(T.address_of(bar[0]), T.uint32(128), "arrive", "expect_tx", "shared::cta", "b64", "")',
])
def test_ptx_spellings_are_one_opcall(text):
    assert op(text) == EXPECT_TX


PTX_FORMS = [
    # gen-2 and gen-3 slot layouts differ; only the joined mnemonic counts
    (['T.ptx.mbarrier.init.shared.b64(bar.ptr_to([1]), 1)',
      'T.ptx.mbarrier(T.address_of(bar[1]), T.uint32(1), "init", "shared", "b64", "")',
      'T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[1])), T.uint32(1), "init", "", "shared", '
      '"b64", "")'],
     OpCall("mbarrier.init.shared.b64", (addr("bar", 1), u32(1)), None, "void")),
    # keyword segments: `__` is `::`, a trailing `_` is dropped
    (["T.ptx.fence.proxy.async_.shared__cta()", 'T.ptx.fence("proxy", "async", "shared::cta", "")',
      'T.ptx["fence.proxy.async.shared::cta"]()'],
     OpCall("fence.proxy.async.shared::cta", (), None, "void")),
    (["T.ptx.fence.mbarrier_init.release.cluster()", 'T.ptx.fence("mbarrier_init", "release", "cluster", "")'],
     OpCall("fence.mbarrier_init.release.cluster", (), None, "void")),
    (["T.ptx.cp.async_.bulk.commit_group()", 'T.ptx.cp("async", "bulk", "commit_group", "")'],
     OpCall("cp.async.bulk.commit_group", (), None, "void")),
    (["T.ptx.cp.async_.bulk.wait_group.read(0)", 'T.ptx.cp(T.int32(0), "async", "bulk", "wait_group", "read", "")'],
     OpCall("cp.async.bulk.wait_group.read", (c(0),), None, "void")),
    # literal operands take the instruction's operand dtype (u32 here)
    (["T.ptx.bar.sync(1, 64)", 'T.ptx.bar(T.uint32(1), T.uint32(64), "", "sync", "")',
      'T.ptx["bar.sync"](T.uint32(1), T.uint32(64))'],
     OpCall("bar.sync", (u32(1), u32(64)), None, "void")),
    (["T.ptx.bar.arrive(2, 256)", 'T.ptx.bar(T.uint32(2), T.uint32(256), "", "arrive", "")'],
     OpCall("bar.arrive", (u32(2), u32(256)), None, "void")),
    (["T.ptx.barrier.sync(3, 128)", 'T.ptx.barrier(T.uint32(3), T.uint32(128), "", "sync", "", "")'],
     OpCall("barrier.sync", (u32(3), u32(128)), None, "void")),
    (["T.ptx.tcgen05.fence__after_thread_sync()", 'T.ptx.tcgen05("fence::after_thread_sync", "")'],
     OpCall("tcgen05.fence::after_thread_sync", (), None, "void")),
    (["T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32(bar.ptr_to([0]), 512)",
      'T.ptx.tcgen05(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(512), "alloc", "cta_group::1", '
      '"sync", "aligned", "shared::cta", "b32", "")'],
     OpCall("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", (addr("bar", 0), u32(512)), None, "void")),
    (['T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"](regs[0], r32)',
      'T.ptx.tcgen05(regs[0], r32[0], "ld", "sync", "aligned", "32x32b", "x1", "", "b32", "")'],
     OpCall("tcgen05.ld.sync.aligned.32x32b.x1.b32", (Load("regs", ZERO, "uint32"), scalar("r32", "uint32")), None,
            "void")),
    # shfl.sync / elect.sync are named shfl_sync / elect_sync by the TIRx table
    (["T.ptx.shfl_sync.bfly.b32(regs[0], regs[1], T.uint32(1), T.uint32(31), T.uint32(0xFFFFFFFF))",
      'T.ptx["shfl.sync.bfly.b32"](regs[0], regs[1], T.uint32(1), T.uint32(31), T.uint32(4294967295))',
      'T.ptx.shfl_sync(regs[0], regs[1], T.uint32(1), T.uint32(31), T.uint32(4294967295), "bfly", "b32", "")'],
     OpCall("shfl_sync.bfly.b32", (Load("regs", ZERO, "uint32"), Load("regs", (c(1),), "uint32"), u32(1), u32(31),
                                   u32(0xFFFFFFFF)), None, "void")),
    (["T.ptx.mbarrier.arrive.expect_tx.release.cta.shared__cta.b64(bar.ptr_to([0]), T.uint32(128))",
      'T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(128), "arrive", "expect_tx", '
      '"release", "cta", "shared::cta", "b64", "")'],
     OpCall("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64", (addr("bar", 0), u32(128)), None, "void")),
    (["T.ptx.mbarrier.inval.shared__cta.b64(bar.ptr_to([0]))",
      'T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), "inval", "shared::cta", "b64", "")'],
     OpCall("mbarrier.inval.shared::cta.b64", (addr("bar", 0),), None, "void")),
    # bulk copies: G2S with the gen-1 T.cast operand, S2G, and 2d tensor (TMA) copies in the string form
    (['T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"](sbuf.ptr_to([0, 0]), a.ptr_to([0]), '
      'T.cast(16, "uint32"), bar.ptr_to([0]))',
      'T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(sbuf[0, 0])), T.address_of(a[0]), T.uint32(16), '
      'T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), "async", "bulk", "", "", "shared::cta", "global", '
      '"mbarrier::complete_tx::bytes", "", "", "", "")'],
     OpCall("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes",
            (addr("sbuf", 0, 0), addr("a", 0), u32(16), addr("bar", 0)), None, "void")),
    (['T.ptx["cp.async.bulk.global.shared::cta.bulk_group"](a.ptr_to([0]), sbuf.ptr_to([0, 0]), 128)',
      'T.ptx.cp(T.address_of(a[0]), T.cuda.cvta_generic_to_shared(T.address_of(sbuf[0, 0])), T.uint32(128), '
      '"async", "bulk", "", "", "global", "shared::cta", "bulk_group", "", "", "", "")'],
     OpCall("cp.async.bulk.global.shared::cta.bulk_group", (addr("a", 0), addr("sbuf", 0, 0), u32(128)), None,
            "void")),
    (['T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"](sbuf.ptr_to([0, 0]), '
      'tmap, 0, n, bar.ptr_to([0]))',
      'T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(sbuf[0, 0])), tmap, T.int32(0), n, '
      'T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), "async", "bulk", "tensor", "2d", "shared::cta", '
      '"global", "tile", "mbarrier::complete_tx::bytes", "", "", "")'],
     OpCall("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes",
            (addr("sbuf", 0, 0), Var("tmap", "handle"), c(0), n, addr("bar", 0)), None, "void")),
    (['T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](tmap, 0, n, sbuf.ptr_to([0, 0]))',
      'T.ptx.cp(tmap, T.int32(0), n, T.cuda.cvta_generic_to_shared(T.address_of(sbuf[0, 0])), "async", "bulk", '
      '"tensor", "2d", "global", "shared::cta", "tile", "bulk_group", "", "")'],
     OpCall("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
            (Var("tmap", "handle"), c(0), n, addr("sbuf", 0, 0)), None, "void")),
    # classic cp.async
    (["T.ptx.cp.async_.ca.shared.global_(sbuf.ptr_to([0, 1]), a.ptr_to([2]), 4, 4)",
      'T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(sbuf[0, 1])), T.address_of(a[2]), T.int32(4), '
      'T.uint32(4), "async", "ca", "shared", "global", "", "", "")'],
     OpCall("cp.async.ca.shared.global", (addr("sbuf", 0, 1), addr("a", 2), c(4), u32(4)), None, "void")),
    (["T.ptx.cp.async_.commit_group()", 'T.ptx.cp("async", "commit_group", "")'],
     OpCall("cp.async.commit_group", (), None, "void")),
    (["T.ptx.cp.async_.wait_group(0)", 'T.ptx.cp(T.int32(0), "async", "wait_group", "")'],
     OpCall("cp.async.wait_group", (c(0),), None, "void")),
    (["T.ptx.cp.async_.mbarrier.arrive.noinc.shared__cta.b64(bar.ptr_to([0]))",
      'T.ptx.cp(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), "async", "mbarrier", "arrive", "noinc", '
      '"shared::cta", "b64", "")'],
     OpCall("cp.async.mbarrier.arrive.noinc.shared::cta.b64", (addr("bar", 0),), None, "void")),
    # fences, warp barrier, setmaxnreg, TMEM dealloc / waits
    (["T.ptx.fence.proxy.async_()", 'T.ptx.fence("proxy", "async", "", "")'],
     OpCall("fence.proxy.async", (), None, "void")),
    (["T.ptx.fence.acq_rel.gpu()", 'T.ptx.fence("acq_rel", "gpu", "")'],
     OpCall("fence.acq_rel.gpu", (), None, "void")),
    (["T.ptx.bar.warp.sync(T.uint32(0xFFFFFFFF))", 'T.ptx.bar(T.uint32(4294967295), "warp", "sync", "")'],
     OpCall("bar.warp.sync", (u32(0xFFFFFFFF),), None, "void")),
    (["T.ptx.setmaxnreg.dec.sync.aligned.u32(40)",
      'T.ptx.setmaxnreg(T.int32(40), "dec", "sync", "aligned", "u32", "")',
      'T.ptx.setmaxnreg(40, "dec", "sync", "aligned", "u32", "")'],
     OpCall("setmaxnreg.dec.sync.aligned.u32", (c(40),), None, "void")),
    (["T.ptx.tcgen05.dealloc.cta_group__1.sync.aligned.b32(r32, 512)",
      'T.ptx.tcgen05(r32[0], T.uint32(512), "dealloc", "cta_group::1", "sync", "aligned", "b32", "")'],
     OpCall("tcgen05.dealloc.cta_group::1.sync.aligned.b32", (scalar("r32", "uint32"), u32(512)), None, "void")),
    (["T.ptx.tcgen05.wait__st.sync.aligned()", 'T.ptx.tcgen05("wait::st", "sync", "aligned", "")'],
     OpCall("tcgen05.wait::st.sync.aligned", (), None, "void")),
    (["T.ptx.elect_sync(regs[0], regs[1], T.uint32(0xFFFFFFFF))",
      'T.ptx.elect_sync(regs[0], regs[1], T.uint32(4294967295), "")'],
     OpCall("elect_sync", (Load("regs", ZERO, "uint32"), Load("regs", (c(1),), "uint32"), u32(0xFFFFFFFF)), None,
            "void")),
]


@pytest.mark.parametrize("texts,want", PTX_FORMS)
def test_ptx_forms(texts, want):
    for text in texts:
        assert op(text) == want, text


def test_ptx_module_constant_operands_are_literals_too():
    # `M * 4` is a Python int to TVM (printed T.uint32(64)); the IR keeps the constant, cast to u32
    assert op("T.ptx.bar.sync(1, M * 4)") == \
        OpCall("bar.sync", (u32(1), Cast("uint32", BinOp("*", ConstRef("M", "int32"), c(4), "int32"))), None, "void")
    assert op("T.ptx.bar.arrive(1, N)") == OpCall("bar.arrive", (u32(1), Cast("uint32", ConstRef("N", "int32"))),
                                                  None, "void")


def test_ptx_pred_keyword_and_pred_marker():
    want = OpCall("mbarrier.arrive.shared.b64", (addr("bar", 0), u32(1)), BinOp("==", TX, c(0), "bool"), "void")
    assert op(PRED_ARRIVE) == want
    assert op('T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(bar[0])), T.uint32(1), tx == 0, '
              '"arrive", "", "", "shared", "b64", "pred")') == want
    assert op('T.ptx["mbarrier.arrive.shared.b64"](bar.ptr_to([0]), 1, pred=tx == 0)') == want
    # without a predicate the same op has pred None
    assert op("T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([0]), 1)").pred is None


def test_ptx_pnn_marker_keeps_the_operand_positional():
    chain = op(MMA)
    # the real printer's text; enable_input_d (operand 8) is the "p8" predicate operand
    printed = op('T.ptx.tcgen05(r32[0], T.Cast("uint64", n64), T.Cast("uint64", n64), r32[0], T.uint32(0), '
                 'T.uint32(0), T.uint32(0), T.uint32(0), T.uint32(1), "mma", "cta_group::1", "kind::f16", "", "p8")')
    gen2 = op('T.ptx.tcgen05(r32[0], T.uint64(n64), T.uint64(n64), r32[0], T.uint32(0), T.uint32(0), T.uint32(0), '
              'T.uint32(0), T.bool(True), "mma", "cta_group::1", "kind::f16", "", "p8")')
    desc = Cast("uint64", n64)
    assert chain == printed == gen2 == OpCall("tcgen05.mma.cta_group::1.kind::f16",
                                              (scalar("r32", "uint32"), desc, desc, scalar("r32", "uint32"),
                                               u32(0), u32(0), u32(0), u32(0), u32(1)), None, "void")
    assert classify(chain.op, tuple(o.dtype for o in chain.operands)).quals["form"] == "ss"


def test_ptx_dps_destination():
    want = OpCall("mbarrier.try_wait.parity.shared::cta.b64",
                  (scalar("r32", "uint32"), addr("bar", 1), Cast("uint32", n)), None, "void")
    assert op(TRY_WAIT) == want
    assert op('T.ptx.mbarrier(r32[0], T.cuda.cvta_generic_to_shared(T.address_of(bar[1])), T.Cast("uint32", n), '
              '"try_wait", "parity", "", "", "", "shared::cta", "b64", "")') == want
    e = parse_error("T.ptx.mbarrier.try_wait.parity.shared__cta.b64(0, bar.ptr_to([1]), T.uint32(0))")
    assert e.what == "operand 'wait_complete' of mbarrier.try_wait.parity is a destination and must be writable"


def test_ptx_errors():
    e = parse_error("T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]))")
    assert e.what == "wrong operand count for mbarrier.init: expected 2, got 1" and e.expected == "addr, count"
    e = parse_error('T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), "one")')
    assert e.what == "string operand in a PTX call"
    e = parse_error("T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), 1, when=n)")
    assert e.what == "unexpected keyword argument 'when' in a PTX call" and e.expected == "pred="
    e = parse_error('T.ptx.fence("proxy", "async", "pred")')
    assert e.what == "marker 'pred' but no predicate operand"


AUTHORING_CALLS = [texts[0] for texts, _ in PTX_FORMS] + [
    "T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64(bar.ptr_to([0]), 128)", MMA, PRED_ARRIVE, TRY_WAIT,
    "T.ptx.bar.sync(1, M * 4)", "T.ptx.barrier.cluster.arrive.aligned()",
    "T.ptx.tcgen05.alloc.cta_group__2.sync.aligned.shared__cta.b32(bar.ptr_to([0]), 512)",
    "T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)", "T.cuda.atomic_add(T.address_of(a[0]), 1)", "T.cuda.cluster_sync()",
    "x: T.let = T.cuda.warp_sum(n)", "y: T.let = T.cuda.__shfl_sync(T.uint32(4294967295), f, 0, 32)",
]


@pytest.mark.conformance
def test_ptx_authoring_spellings_match_the_real_printer(tmp_path):
    """The chain / string-key spellings above, through apache-tvm-tirx: the printed text is the same IR."""
    pytest.importorskip("tvm_tirx")
    import importlib.util
    source = kernel("\n".join(AUTHORING_CALLS))
    (tmp_path / "calls.py").write_text(source)
    spec = importlib.util.spec_from_file_location("constructs_calls", tmp_path / "calls.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mine = ir.canonical(ir.parse(source, "calls.py")).body[PRELUDE:]
    theirs = ir.canonical(ir.parse(module.k.script(), "printed.py")).body[PRELUDE:]
    assert len(mine) == len(theirs) == len(AUTHORING_CALLS)
    mismatches = [(t, a, b) for t, a, b in zip(AUTHORING_CALLS, mine, theirs) if a != b]
    assert not mismatches, "\n".join(f"{t}:\n  ours    {a}\n  printed {b}" for t, a, b in mismatches)


# =========================================================================== addresses

@pytest.mark.parametrize("spelling", ["bar.ptr_to([s])", "T.address_of(bar[s])",
                                      "T.cuda.cvta_generic_to_shared(T.address_of(bar[s]))"])
def test_address_spellings(spelling):
    loop = stmt(f"for s in range(4):\n    T.cuda.mbarrier_wait({spelling}, s % 2)")
    s = Var("s", "int32")
    assert loop.body == (Evaluate(OpCall("cuda.mbarrier_wait", (Address("bar", (s,)), BinOp("%", s, c(2), "int32")),
                                         None, "void")),)


def test_address_of_multi_dim_and_errors():
    assert expr("T.address_of(sbuf[1, tx])") == Address("sbuf", (c(1), TX))
    assert parse_error("x: T.let = bar.ptr_to([0, 1])").what == "buffer 'bar' has 1 dimension(s), indexed with 2"
    assert parse_error("x: T.let = T.address_of(n)").what == "T.address_of takes a buffer element such as buf[i]"


# =========================================================================== T.cuda.* and T.* intrinsics

@pytest.mark.parametrize("text,want", [
    ("T.cuda.cta_sync()", OpCall("cuda.cta_sync", (), None, "void")),
    ("T.cuda.warpgroup_sync(6)", OpCall("cuda.warpgroup_sync", (c(6),), None, "void")),
    ("T.cuda.warp_sync()", OpCall("cuda.warp_sync", (), None, "void")),
    ("T.cuda.thread_fence()", OpCall("cuda.thread_fence", (), None, "void")),
    ("T.cuda.nano_sleep(100)", OpCall("cuda.nano_sleep", (c(100),), None, "void")),
    ("T.cuda.mbarrier_wait(bar.ptr_to([0]), 1)", OpCall("cuda.mbarrier_wait", (addr("bar", 0), c(1)), None, "void")),
    ("T.cuda.atomic_add(T.address_of(a[0]), 1)", OpCall("cuda.atomic_add", (addr("a", 0), c(1)), None, "int32")),
    ('T.tvm_storage_sync("shared")', OpCall("tir.tvm_storage_sync", (StrConst("shared"),), None, "void")),
])
def test_intrinsic_statements(text, want):
    assert op(text) == want


@pytest.mark.parametrize("text,want", [
    ("T.cuda.elect_sync()", OpCall("cuda.elect_sync", (), None, "uint32")),
    ("T.cuda.clock64()", OpCall("cuda.clock64", (), None, "uint64")),   # TVM types it uint64
    ("T.gpu_warp_shuffle(T.uint32(4294967295), tx // 32, 0, 32, 32)",
     OpCall("tir.gpu_warp_shuffle", (u32(4294967295), WARP, c(0), c(32), c(32)), None, "int32")),
    ("T.cuda.__shfl_sync(T.uint32(4294967295), f, 0, 32)",
     OpCall("cuda.__shfl_sync", (u32(4294967295), f, c(0), c(32)), None, "float32")),
    # T.cuda.warp_sum(x) prints as T.cuda.warp_reduce(x, "sum", 32)
    ("T.cuda.warp_sum(n)", OpCall("cuda.warp_reduce", (n, StrConst("sum"), c(32)), None, "int32")),
    ("T.exp(f)", OpCall("tir.exp", (f,), None, "float32")),
    ("T.reinterpret(T.float32, u)", OpCall("tir.reinterpret", (StrConst("float32"), u), None, "float32")),
    ("T.abs(n)", Select(BinOp(">=", n, c(0), "bool"), n, BinOp("-", c(0), n, "int32"), "int32", lazy=False)),
])
def test_intrinsic_values(text, want):
    assert expr(text) == want


def test_elect_sync_guard_and_warp_shuffle_let():
    s = stmts('''
        warp: T.let[T.int32] = T.gpu_warp_shuffle(T.uint32(4294967295), tx // 32, 0, 32, 32)
        if T.cuda.elect_sync():
            T.ptx.mbarrier.arrive.shared.b64(bar.ptr_to([warp]))
    ''')
    w = Var("warp", "int32")
    assert s == (
        Let(w, OpCall("tir.gpu_warp_shuffle", (u32(4294967295), WARP, c(0), c(32), c(32)), None, "int32")),
        If(OpCall("cuda.elect_sync", (), None, "uint32"),
           (Evaluate(OpCall("mbarrier.arrive.shared.b64", (Address("bar", (w,)),), None, "void")),), ()),
    )


def test_intrinsic_operand_count_errors():
    e = parse_error("T.cuda.mbarrier_wait(bar.ptr_to([0]))")
    assert e.what == "wrong operand count for cuda.mbarrier_wait: expected 2, got 1" and e.expected == "addr, parity"


# =========================================================================== unsupported and v2 ops

@pytest.mark.parametrize("text,name,args", [
    ("T.ptx.frob.rn.f32.f16(f, h)", "frob.rn.f32.f16", (f, scalar("h", "float16"))),
    ("T.cuda.foo()", "cuda.foo", ()),
    ("T.cuda.foo(n, 1)", "cuda.foo", (n, c(1))),
    ("T.frobnicate(n)", "tir.frobnicate", (n,)),
    ('T.ptx["mbarrier.frobnicate.b64"](bar.ptr_to([0]))', "mbarrier.frobnicate.b64", (addr("bar", 0),)),
    ('T.ptx.frob(f, h, "rn", "f32", "f16", "")', "frob.rn.f32.f16", (f, scalar("h", "float16"))),
])
def test_unknown_calls_become_unsupported_with_name_and_span(text, name, args):
    s = stmt(text)
    assert s == Evaluate(Unsupported(name, args))
    span = s.value.span
    assert (span.file, span.line, span.col) == ("k.py", SNIPPET_LINE, INDENT + 1)
    assert span.end_line == SNIPPET_LINE and span.end_col == INDENT + 1 + len(text)


def test_unsupported_inside_an_expression_keeps_its_place():
    # the value of an unknown call is unknown (void); the store still converts it to the register's dtype
    assert stmt("r32 = T.cuda.foo(u)") == Store("r32", ZERO, Cast("uint32", Unsupported("cuda.foo", (u,))))
    assert stmt("if T.cuda.foo():\n    r32 = 1") == If(Unsupported("cuda.foo", ()), (Store("r32", ZERO, u32(1)),), ())


@pytest.mark.parametrize("text,mnemonic,family", [
    ("T.ptx.barrier.cluster.arrive.aligned()", "barrier.cluster.arrive.aligned", "cluster_barrier"),
    ('T.ptx.barrier("cluster", "wait", "", "aligned", "")', "barrier.cluster.wait.aligned", "cluster_barrier"),
    ("T.ptx.mapa.shared__cluster.u32(regs[0], bar.ptr_to([0]), T.uint32(0))", "mapa.shared::cluster.u32", "misc"),
    ("T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.multicast__cluster.b64("
     "bar.ptr_to([0]), T.uint16(3))",
     "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64", "tcgen05"),
    ("T.cuda.cluster_sync()", "cuda.cluster_sync", "cluster_barrier"),
    ("T.cuda.mbarrier_wait_acquire_cluster(bar.ptr_to([0]), 0)", "cuda.mbarrier_wait_acquire_cluster", "mbarrier"),
])
def test_cluster_ops_parse_and_classify_modeled(text, mnemonic, family):
    """Clusters are modeled since issue 17 item 1 (docs/semantics.md#clusters)."""
    call = op(text)
    assert isinstance(call, OpCall) and call.op == mnemonic
    info = classify(call.op, tuple(o.dtype for o in call.operands))
    assert info is not None and info.supported and info.family == family


@pytest.mark.parametrize("text,mnemonic,reason", [
    ("T.ptx.tcgen05.shift.cta_group__2.down(T.uint32(0))", "tcgen05.shift.cta_group::2.down", "cta_group::2"),
])
def test_v2_ops_parse_and_classify_unsupported(text, mnemonic, reason):
    # (the cvt of the previous test is a known op since issue 17: tests/ir/test_ops_tvm027.py)
    call = op(text)
    assert isinstance(call, OpCall) and call.op == mnemonic
    info = classify(call.op, tuple(o.dtype for o in call.operands))
    assert info is not None and info.supported is False
    assert reason in info.why_unsupported


@pytest.mark.parametrize("mnemonic,dtypes,family", [
    ("mbarrier.init.shared.b64", ("handle", "uint32"), "mbarrier"),
    ("bar.sync", ("uint32", "uint32"), "named_barrier"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", ("handle", "uint32"), "tcgen05"),
    ("fence.proxy.async.shared::cta", (), "fence"),
    ("cuda.mbarrier_wait", ("handle", "int32"), "mbarrier"),
])
def test_v1_ops_classify_supported(mnemonic, dtypes, family):
    info = classify(mnemonic, dtypes)
    assert info is not None and info.supported is True and info.family == family


def test_unknown_op_classifies_as_none():
    assert classify("frob.rn.f32.f16", ("float32", "float16")) is None
    assert classify("cvt.rn.f32.f16", ("float32", "float16")).supported is False   # known, not simulated
    assert classify("cuda.foo", ()) is None
