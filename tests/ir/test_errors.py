"""Every way kernel text can be wrong ends in one `ir.ParseError` that says where, what, and how to fix it.

Each case breaks the producer-overtaking kernel in one way and checks: the exception
is `ir.ParseError` (never a lark exception, an AssertionError, a KeyError ...); the
exact file, line and column of `err.span`; what `err.what` says; that `str(err)`
shows the source line with its number and a caret under the column; and that the
hint (and the expected text where there is one) says something useful.
"""
from __future__ import annotations

import re

import pytest

import ir

PATH = "kernels/broken.py"

# producer_overtaking.py without its comments: body statements go on line 15, indented by 16
PRELUDE = '''from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def producer_overtaking(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
'''
BODY_LINE = 15
INDENT = " " * 16

REST = '''                if tx == 0:
                    T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), 1)
                    T.ptx.fence.mbarrier_init.release.cluster()
                T.cuda.cta_sync()
                if warp == 0:
                    for r in range(ROUNDS):
                        if lane == 0:
                            slot[0] = r * 10 + 7
                            T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))
                else:
                    for r in range(ROUNDS):
                        T.cuda.mbarrier_wait(full.ptr_to([0]), r % 2)
                        if lane == 0:
                            out[r] = slot[0]
'''
KERNEL = PRELUDE + REST


def body(*lines: str) -> str:
    """The prelude plus `lines` as kernel statements (each indented by 16 columns more)."""
    return PRELUDE + "".join(INDENT + line + "\n" for line in lines)


def col_of(text: str, line: int, needle: str, nth: int = 0) -> int:
    """1-based column of the `nth` occurrence of `needle` on `line` of `text`."""
    src = text.split("\n")[line - 1]
    at = -1
    for _ in range(nth + 1):
        at = src.index(needle, at + 1)
    return at + 1


def parse_error(text: str, path: str = PATH, **consts) -> ir.ParseError:
    try:
        ir.parse(text, path, **consts)
    except ir.ParseError as err:
        return err
    except Exception as err:  # noqa: BLE001 - any other exception type is the bug under test
        pytest.fail(f"{type(err).__name__} instead of ir.ParseError: {err}")
    pytest.fail("the text parsed without an error")


def check(err: ir.ParseError, text: str, *, line: int, col: int, what: str, hint: str,
          expected: str | None = None, path: str = PATH) -> None:
    """Assert position, message, rendered excerpt with caret, hint and expected text of `err`."""
    assert type(err) is ir.ParseError
    span = err.span
    assert (span.file, span.line, span.col) == (path, line, col), str(err)
    assert (span.end_line, span.end_col) >= (span.line, span.col), "the span ends before it starts"
    assert what in err.what, str(err)
    assert hint in err.hint, str(err)
    if expected is not None:
        assert expected in err.expected, str(err)
    rendered = str(err)
    lines = rendered.split("\n")
    assert lines[0] == f"{path}:{line}:{col}: error: {err.what}"
    src = text.split("\n")[line - 1].rstrip("\r")
    if len(src) > ir.errors.MAX_EXCERPT_COLS:
        # a long line is shown as a window of at most MAX_EXCERPT_COLS columns of it, marked with "..."
        rows = [k for k, row in enumerate(lines) if row.lstrip().startswith(f"{line} | ")
                and row.split(" | ", 1)[1].strip(".") in src and row.endswith("...")
                and len(row.split(" | ", 1)[1]) <= ir.errors.MAX_EXCERPT_COLS + 6]
    else:
        rows = [k for k, row in enumerate(lines) if re.fullmatch(rf" *{line} \| {re.escape(src)}", row)]
    assert rows, f"no excerpt line '{line} | {src[:200]}' in:\n{rendered}"
    gutter, marks = lines[rows[0] + 1].split(" | ", 1)
    assert gutter.strip() == "" and marks.startswith(" " * (col - 1) + "^"), f"caret not at column {col}:\n{rendered}"
    assert f"hint: {err.hint}" in lines
    if err.expected:
        assert f"expected: {err.expected}" in lines


def test_the_unbroken_kernels_parse():
    """The cases below break these texts; unbroken they must parse, or the errors would mean nothing."""
    assert ir.parse(KERNEL, PATH).name == "producer_overtaking"
    assert ir.parse(body("pass"), PATH).name == "producer_overtaking"


# --------------------------------------------------------------------------- indentation

def test_dedent_to_an_unknown_level():
    text = body("x = 1") + " " * 14 + "y = 2\n"
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=1, what="bad indentation", expected="an indentation of 12 columns",
          hint="indent every statement of a block by the same amount")


def test_unexpected_indentation():
    text = body("x = 1", "    y = 2")
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=1, what="unexpected indentation",
          hint="indent only the body of a statement that ends with ':'")


def test_missing_indented_block():
    text = body("if tx == 0:", "x = 1")
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=17, what="expected an indented block", expected="an indented block",
          hint="indent the body of the statement that ends with ':'")


def test_missing_indented_block_at_end_of_file_points_after_the_colon():
    text = body("if tx == 0:")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, ":") + 1, what="expected an indented block",
          expected="an indented block", hint="indent the body")


# --------------------------------------------------------------------------- decorators

@pytest.mark.parametrize("decorator", ["T.kernel", "foo", "T.prim_func.x"])
def test_unknown_decorator(decorator):
    text = KERNEL.replace("@T.function", "@" + decorator)
    err = parse_error(text)
    check(err, text, line=6, col=2, what="unknown decorator", expected="@T.function or @T.prim_func",
          hint="@T.function def name(...):")
    assert err.span.end_col == 2 + len(decorator)


def test_missing_decorator():
    text = KERNEL.replace("@T.function\n", "")
    err = parse_error(text)
    check(err, text, line=6, col=5, what="function 'producer_overtaking' has no @T.function decorator",
          hint="decorate the kernel with @T.function")


# --------------------------------------------------------------------------- brackets

def test_unclosed_paren_at_end_of_file():
    text = body("T.cuda.cta_sync(")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "("), what="'(' is never closed",
          expected="a matching ')'", hint="balance the brackets")


def test_unclosed_paren_followed_by_more_lines_points_at_the_opener():
    text = body("x = T.min(tx, 1", "y = 2", "z = 3") + REST
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "("), what="'(' is never closed",
          expected="a matching ')'", hint="balance the brackets")


def test_stray_closing_paren():
    text = body("T.cuda.cta_sync())")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, ")", nth=1), what="unmatched ')'",
          hint="remove it, or add the opening bracket it closes")


def test_mismatched_brackets():
    text = body("x = slot[0)")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, ")"),
          what=f"closing ')' does not match '[' opened at line {BODY_LINE}", expected="']'",
          hint="balance the brackets")


# --------------------------------------------------------------------------- module level

OUTSIDE_HINT = "move this statement into the kernel body"


@pytest.mark.parametrize("stmt", ["for i in range(3):\n    pass", "x = foo()", "T.cuda.cta_sync()",
                                  'bar = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])',
                                  "while True:\n    pass"])
def test_statement_outside_the_function(stmt):
    text = KERNEL.replace("ROUNDS = 4\n", "ROUNDS = 4\n" + stmt + "\n")
    err = parse_error(text)
    check(err, text, line=4, col=1, what="statement outside the function", hint=OUTSIDE_HINT)


def test_a_second_kernel_function_needs_a_choice():
    text = KERNEL + "\n\n@T.function\ndef other(a: T.int32):\n    pass\n"
    line = text.split("\n").index("def other(a: T.int32):") + 1
    err = parse_error(text)
    check(err, text, line=line, col=5, what="several kernels in this file (producer_overtaking, other): choose one",
          hint="pass --kernel NAME (load(path, kernel_name=...)); 'producer_overtaking' is defined at line 7")
    assert ir.parse(text, PATH, kernel_name="producer_overtaking").name == "producer_overtaking"
    with pytest.raises(ValueError, match=r"no kernel named 'nope' .*its kernels: producer_overtaking, other"):
        ir.parse(text, PATH, kernel_name="nope")


def test_plain_functions_beside_the_kernel_are_host_code():
    text = KERNEL + "\n\ndef launch(n):\n    return n * 2\n"
    assert ir.parse(text, PATH).name == "producer_overtaking"


def test_unknown_constant_override_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown constant\(s\) NOPE .*module constants: ROUNDS"):
        ir.parse(KERNEL, PATH, NOPE=3)
    assert ir.parse(KERNEL, PATH, ROUNDS=3).constants[0].value == 3  # a known one is fine


# --------------------------------------------------------------------------- names and types

def test_undefined_name_suggests_a_close_one():
    text = body("x = fulll[0]")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "fulll"), what="undefined name 'fulll'",
          hint="did you mean 'full'?")
    assert err.span.end_col - err.span.col == len("fulll")


def test_undefined_name_without_a_close_one():
    text = body("x = zzqqv + 1")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "zzqqv"), what="undefined name 'zzqqv'",
          hint="define it before use")
    assert "did you mean" not in err.hint


def test_unknown_dtype_in_a_let():
    text = body("x: T.let[T.int33] = 1")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "T.int33"), what="unknown dtype 'int33'",
          hint="did you mean 'int32'?")


def test_unknown_dtype_string_in_a_tensor():
    text = body('s = T.alloc_tensor(ty_args=[T.Tensor((1,), "float33", scope="shared")])')
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, '"float33"'), what="unknown dtype 'float33'",
          hint="did you mean 'float32'?")


def test_duplicate_parameter():
    text = KERNEL.replace("(out: T.Tensor((ROUNDS,), T.int32))", "(out: T.Tensor((ROUNDS,), T.int32), out: T.int32)")
    err = parse_error(text)
    check(err, text, line=7, col=col_of(text, 7, "out", nth=1), what="duplicate parameter 'out'",
          hint="rename one of them; the first is at line 7")


@pytest.mark.parametrize("lines, offset, what, hint", [
    (["x: T.let[T.int32] = tx * 2", "x = 3"], 1, "assignment to T.let 'x'",
     f"'x' is immutable (bound at line {BODY_LINE})"),
    (["x = tx * 2", "x = x + 1"], 1, "assignment to T.let 'x'", f"'x' is immutable (bound at line {BODY_LINE})"),
    (["warp = 1"], 0, "assignment to T.let 'warp'", "'warp' is immutable (bound at line 13)"),
    (["for i in range(3):", "    i = 2"], 1, "assignment to loop variable 'i'",
     f"'i' is immutable (bound at line {BODY_LINE})"),
    (["x = tx * 2", "x += 1"], 1, "assignment to T.let 'x'", "only mutable locals (T.local_scalar)"),
    (["for i in range(3):", "    i += 1"], 1, "assignment to loop variable 'i'", "only mutable locals"),
])
def test_assignment_to_an_immutable_binding(lines, offset, what, hint):
    text = body(*lines)
    line = BODY_LINE + offset
    err = parse_error(text)
    check(err, text, line=line, col=col_of(text, line, what.split("'")[1]), what=what, hint=hint)


def test_annotated_rebinding_of_a_let():
    text = body("x: T.let[T.int32] = tx * 2", "x: T.let[T.int32] = 3")
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=17, what="assignment to T.let 'x'",
          hint=f"'x' is immutable (bound at line {BODY_LINE})")


def test_alloc_tensor_without_shape():
    text = body('s = T.alloc_tensor(ty_args=[T.Tensor(dtype=T.int32, scope="shared")])')
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "T.Tensor"), what="buffer 's' has no shape",
          hint="give the shape as the first argument")


def test_alloc_buffer_without_shape():
    text = body('s = T.alloc_buffer(dtype="int32", scope="shared")')
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "T.alloc_buffer"), what="buffer 's' has no shape",
          hint="give the shape as the first argument")


def test_two_dimensional_buffer_indexed_with_one_index():
    text = body('s = T.alloc_tensor(ty_args=[T.Tensor((2, 3), T.int32, scope="shared")])', "x = s[1]")
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=col_of(text, BODY_LINE + 1, "s[1]"),
          what="buffer 's' has 2 dimension(s), indexed with 1", hint="index it as s[i0, i1]")


# --------------------------------------------------------------------------- PTX operand counts

def test_mbarrier_init_with_one_operand():
    text = body("T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]))")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=17, what="wrong operand count for mbarrier.init: expected 2, got 1",
          expected="addr, count", hint="operand list")


def test_tcgen05_mma_with_seven_operands():
    text = body("T.ptx.tcgen05.mma.cta_group__1.kind__f16(1, 2, 3, 4, 5, 6, 7)")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=17, what="wrong operand count for tcgen05.mma: expected 5 or 9, got 7",
          expected="d_tmem, a, b_desc, idesc", hint="operand list")


def test_printed_positional_form_with_a_missing_operand():
    text = body('T.ptx.mbarrier(full.ptr_to([0]), "init", "", "shared", "b64", "")')
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=17, what="wrong operand count for mbarrier.init: expected 2, got 1",
          expected="addr, count", hint="operand list")


@pytest.mark.parametrize("operand", ['T.float32("inf")', "1.5"])
def test_float_constant_for_an_integer_ptx_operand(operand):
    # int(inf) crashed with an OverflowError; 1.5 was silently truncated to an arrival count of 1
    text = body(f"T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), {operand})")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, operand),
          what="operand 'count' of mbarrier.init takes a uint32, got a float constant", hint="write an integer")


@pytest.mark.parametrize("call", ["T.abs()", "T.abs(tx, 1)", "T.bitwise_not()", "T.cuda.warp_sum()"])
def test_one_operand_helpers_with_another_count(call):
    # these unpacked their operands and crashed with a ValueError
    text = body(f"x = {call}")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=21, what="wrong operand count", expected="one value", hint="(x)")


# --------------------------------------------------------------------------- syntax

def test_unterminated_string():
    text = body('x = "abc')
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, '"'), what="unterminated string",
          hint="close the string with a matching quote")


def test_missing_colon_after_a_for_header():
    text = body("for i in range(3)", "    pass")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=len(INDENT + "for i in range(3)") + 1, what="unexpected end of line",
          expected="':'", hint="end the statement header with ':'")


@pytest.mark.parametrize("stmt, word", [("class A:\n    pass", "class"), ("f = lambda x: x", "lambda"),
                                        ("try:\n    pass\nexcept:\n    pass", "try"),
                                        ("raise ValueError()", "raise")])
def test_python_statements_outside_tirx(stmt, word):
    text = body(*stmt.split("\n"))
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, word), what=f"'{word}' is not part of TIRx",
          hint="kernels use def/if/for/while/with")


def test_deeply_nested_expression_is_reported_at_its_statement():
    # used to escape as a RecursionError from the builder
    text = body("x = tx" + " + 1" * 3000)
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=17, what="expression nested too deeply", hint="T.let")


def test_deeply_nested_module_constant():
    text = KERNEL.replace("ROUNDS = 4\n", "ROUNDS = 4\nDEEP = 1" + " + 1" * 3000 + "\n")
    err = parse_error(text)
    check(err, text, line=4, col=1, what="expression nested too deeply", hint="T.let")


# --------------------------------------------------------------------------- semantics

def test_integer_division():
    text = body("x = tx / 2")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=21, what="'/' on integers is ambiguous", hint="use '//'")


def test_power_operator():
    text = body("x = tx ** 2")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=21, what="operator '**' is not supported", hint="write the product out")


def test_slice():
    text = body("x = slot[0:2]")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=21, what="slices are not supported", hint="index one element")


@pytest.mark.parametrize("word", ["break", "continue"])
def test_loop_control_outside_a_loop(word):
    text = body(word)
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=17, what=f"'{word}' outside a loop", hint="inside a for or while loop")


def test_return_with_a_value():
    text = body("return tx")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=24, what="a kernel returns no value", hint="return 0")


def test_return_is_a_statement():
    func = ir.parse(body("if tx == 0:", "    return", "return 0"), PATH)
    returns = [n for n in ir.walk(func.body) if isinstance(n, ir.Return)]
    assert len(returns) == 2
    assert ir.parse(ir.print_func(func), PATH) == func


def test_nested_def():
    text = body("def helper():", "    pass")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "helper"), what="nested functions are not supported",
          hint="inline the helper")


def test_unknown_thread_tag():
    text = body('with T.launch_thread("threadIdx.w", 2) as tw:', "    pass")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, '"threadIdx.w"'), what="unknown thread tag",
          expected='"threadIdx.x"', hint='T.launch_thread("threadIdx.x", n)')


def test_no_thread_launch():
    text = ("from tvm_tirx.script import tirx as T\n\n\n@T.function\ndef k(a: T.Tensor((4,), T.int32)):\n"
            "    with T.device_entry():\n        a[0] = 1\n")
    err = parse_error(text)
    check(err, text, line=5, col=5, what="the kernel launches no threads", hint='T.launch_thread("threadIdx.x", n)')


def test_launch_extent_computed_in_the_kernel():
    text = body('with T.launch_thread("threadIdx.y", lane) as ty:', "    pass")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "lane"),
          what="a launch extent must not depend on values computed in the kernel", hint="module constants")


@pytest.mark.parametrize("expr, operand, what", [
    ('"s" + 1', '"s"', "'+' on a string"),
    ('(-3 if True else "s")', "(", "a conditional expression on a string"),
    ('T.min("s", 1)', '"s"', "T.min on a string"),
    ('T.reinterpret(T.int32, "s")', '"s"', "T.reinterpret on a string"),
    ("T.address_of(slot[0]) * 2", "T.address_of", "'*' on an address"),
    ("-T.address_of(slot[0])", "T.address_of", "'-' on an address"),
    ("T.abs(T.address_of(slot[0]))", "T.address_of", "T.abs on an address"),
    ("-T.ptx.foo()", "T.ptx.foo", "'-' on a call that returns no value"),
])
def test_operands_that_are_not_numbers(expr, operand, what):
    # strings used to crash the type promotion with a KeyError; negated void calls and address arithmetic
    # printed constants (T.void(-1), T.handle(0)) that the parser cannot read back
    text = body(f"x = {expr}")
    err = parse_error(text)
    col = col_of(text, BODY_LINE, operand) if operand != "(" else col_of(text, BODY_LINE, '"s"')
    check(err, text, line=BODY_LINE, col=col, what=what, hint="")
    assert err.hint


@pytest.mark.parametrize("stmt", ['slot[0] = "s"', 'slot[0] += "s"'])
def test_storing_a_string(stmt):
    text = body(stmt)
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, '"s"'), what="on a string",
          hint="strings only name dtypes")


# --------------------------------------------------------------------------- positions and encodings

def test_crlf_line_endings_keep_lines_and_columns():
    text = body("x = fulll[0]").replace("\n", "\r\n")
    err = parse_error(text)
    check(err, text, line=BODY_LINE, col=21, what="undefined name 'fulll'", hint="did you mean 'full'?")
    assert "\r" not in str(err)


def test_form_feed_does_not_shift_the_excerpt():
    # str.splitlines() breaks at \f and \u2028; the lexer counts '\n' only, and the excerpt must agree
    text = body("# page\f break \u2028 here", "x = fulll[0]")
    err = parse_error(text)
    check(err, text, line=BODY_LINE + 1, col=21, what="undefined name 'fulll'", hint="did you mean 'full'?")


def test_file_name_is_the_given_path():
    err = parse_error(body("x = fulll[0]"), path="some/dir/k.py")
    assert err.span.file == "some/dir/k.py" and str(err).startswith(f"some/dir/k.py:{BODY_LINE}:21: error:")


def test_empty_text():
    err = parse_error("")
    check(err, "", line=1, col=1, what="no kernel function in this file", hint="@T.function")


def test_invalid_utf8_file(tmp_path):
    path = tmp_path / "latin1.py"
    path.write_bytes(body("# caf\xe9 = 1").encode("latin-1"))
    with pytest.raises(ir.ParseError) as info:
        ir.parse_file(path)
    err = info.value
    text = path.read_bytes().decode("utf-8", "replace")
    check(err, text, line=BODY_LINE, col=col_of(text, BODY_LINE, "\ufffd"), what="is not UTF-8 text",
          expected="UTF-8", hint="save the kernel as UTF-8", path=str(path))
    assert "0xe9" in err.what


def test_valid_utf8_file_parses(tmp_path):
    path = tmp_path / "utf8.py"
    path.write_text(body("# café = 1"), encoding="utf-8")
    assert ir.parse_file(path).name == "producer_overtaking"
