"""Property tests: whatever text goes in, `ir.parse` either returns a PrimFunc or raises `ir.ParseError`.

The issue's bar is "10,000 fuzz cases raise nothing but ParseError".  The cases are
split over six strategies (each test asserts that it really ran its share):

  arbitrary unicode text, text over TIRx's characters, random TIRx token
  sequences (bare and inside a kernel body), mutations of the corpus kernels
  (characters, tokens and whole lines), and random statements from a small TIRx
  grammar placed in a valid kernel.

Every `ParseError` must also be well formed (a span in the parsed file, on a line
that exists, with an excerpt showing that line and a caret under its column), and
every text that parses must round-trip: `parse(print_func(f)) == f`.  Inputs that
once broke either property are kept as fixed seeds (`FOUND`, at the end).
"""
from __future__ import annotations

import re
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis import given

import ir

ROOT = Path(__file__).resolve().parents[2]
KERNELS = sorted((ROOT / "kernels").glob("*.py"))
# tests/fixtures/hostile holds deliberately broken inputs (binary, empty, invalid): not a corpus of kernels
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*.py") if "hostile" not in p.parts)
CORPUS = [(p.name, p.read_text(encoding="utf-8")) for p in KERNELS + FIXTURES]

# Example budget per strategy (sum >= 10,000, the issue's bar); the whole file runs in ~35 s on 2 cores.
N_TEXT = 4000
N_TIRX_CHARS = 3000
N_TOKENS = 2500
N_TOKENS_IN_BODY = 2000
N_MUTATIONS = 3000
N_STATEMENTS = 1000
# the edit-loop suite runs each of the three fast strategies below on a tenth of its budget (derandomized:
# the first examples of the full run); the slow step runs the full budgets
SMOKE = 10


def budgets(n: int) -> list:
    return [pytest.param(n // SMOKE, id="smoke"), pytest.param(n, id="full", marks=pytest.mark.slow)]


def fuzz_settings(n: int):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --------------------------------------------------------------------------- the property

def parser_lines(text: str) -> list[str]:
    """The lines as the parser numbers them ('\\r\\n', '\\r' and '\\n' end a line; a final newline is added)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    return text.split("\n")[:-1] or [""]


def check_error(err: ir.ParseError, text: str, path: str) -> None:
    """A ParseError is well formed: it says where (a real line and column), what, and shows the line."""
    shown = f"input {text!r}\nerror:\n{err}"
    assert err.what, shown
    span = err.span
    assert span is not None, shown
    assert span.file == path, shown
    lines = parser_lines(text)
    assert 1 <= span.line <= len(lines), f"line {span.line} outside 1..{len(lines)}; " + shown
    line = lines[span.line - 1]
    assert 1 <= span.col <= len(line) + 1, f"column {span.col} outside the line; " + shown
    assert (span.end_line, span.end_col) >= (span.line, span.col), shown
    rendered = str(err)
    assert rendered.startswith(f"{path}:{span.line}:{span.col}: error: {err.what}"), shown
    excerpt = rendered.split("\n")
    row = next((k for k, r in enumerate(excerpt) if r.lstrip().startswith(f"{span.line} | ")), None)
    assert row is not None, "no excerpt line for the error's line; " + shown
    text, shift = ir.errors.shown_line(line, span.col)      # long lines are shown as a window around the span
    assert excerpt[row].split(" | ", 1)[1] == text, "the excerpt shows another line; " + shown
    caret = excerpt[row + 1].split(" | ", 1)[1]
    assert caret == " " * (span.col - 1 - shift) + caret.lstrip(" ") and caret.lstrip(" ").startswith("^"), shown


def check(text: str, path: str = "fuzz.py") -> ir.PrimFunc | None:
    """Parse `text`; fail with the input shown on anything but a well formed ParseError."""
    try:
        return ir.parse(text, path)
    except ir.ParseError as err:
        check_error(err, text, path)
        return None
    except ir.UsageError as err:
        # well-formed text that needs a value from the caller (a mutation dropped a compile-time parameter's
        # default): the invocation's error, naming the place and the --const to pass
        if f"{path}:" in str(err) and "has no default value: pass --const" in str(err):
            return None
        pytest.fail(f"UsageError for input:\n{text!r}\n\n{err}")
    except Exception as err:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{type(err).__name__} (not ParseError) for input:\n{text!r}\n\n"
                    f"{''.join(traceback.format_exception(err))}")


def check_round_trip(func: ir.PrimFunc, text: str) -> None:
    printed = ir.print_func(func)
    try:
        again = ir.parse(printed, "printed.py")
    except Exception as err:  # noqa: BLE001
        pytest.fail(f"printed text does not parse ({type(err).__name__}: {err})\ninput:\n{text}\nprinted:\n{printed}")
    # a NaN constant is not equal to itself, so two IRs holding one compare by their (span-free) repr
    same = again == func or ("nan" in repr(func) and repr(again) == repr(func))
    assert same, f"print/parse round trip changed the IR\ninput:\n{text}\nprinted:\n{printed}"


class Calls:
    """Counts the cases a hypothesis test ran (a short repr keeps failure reports readable)."""

    def __init__(self) -> None:
        self.n = 0

    def append(self, _) -> None:
        self.n += 1

    def __repr__(self) -> str:
        return f"<{self.n} calls>"


def run_counted(test, n: int) -> None:
    """Run a hypothesis test function and assert that it executed at least `n` cases."""
    calls = Calls()
    test(calls)
    assert calls.n >= n, f"only {calls.n} of {n} cases ran"


# --------------------------------------------------------------------------- sanity: the corpus parses

def test_corpus_is_not_empty():
    assert KERNELS, "no kernels/*.py to mutate"


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_corpus_kernel_parses_and_round_trips(path):
    text = path.read_text(encoding="utf-8")
    func = ir.parse(text, str(path))
    assert f"def {func.name}(" in text and func.body, "the kernel parsed to something else"
    check_round_trip(func, text)


# --------------------------------------------------------------------------- (a) arbitrary text

TIRX_CHARS = ("T.ptxcudalet[]{}():=,;+-*/%<>!&|^~@#'\"\\ \n\t\r\f0123456789_xyzbfrnoiedsw"
              "ABCDEFabcdef\x00\u00e9\u2028")


@pytest.mark.parametrize("n", budgets(N_TEXT))
def test_arbitrary_text(n):
    @fuzz_settings(n)
    @given(st.text())
    def run(calls, text):
        calls.append(1)
        check(text)

    run_counted(run, n)


@pytest.mark.parametrize("n", budgets(N_TIRX_CHARS))
def test_text_over_tirx_characters(n):
    @fuzz_settings(n)
    @given(st.text(alphabet=TIRX_CHARS, max_size=120))
    def run(calls, text):
        calls.append(1)
        check(text)

    run_counted(run, n)


# --------------------------------------------------------------------------- (c) token sequences

VOCAB = [
    "T.ptx.", "T.ptx", "T.cuda.", "T.", "(", ")", "[", "]", "{", "}", ":", ",", ";", ".", "=", "==", "+=", "->",
    "\n", "\n    ", "\n        ", "\n  ", "\n\t", "\r\n", " ", "  ", "\\\n", "#c\n", "@", "@T.function\n",
    "T.let[T.int32]", "T.let", "T.int32", "T.uint64", "T.int33", '"float33"', "for", "in", "range(", "range(3)",
    "if", "elif", "else", "while", "with", "as", "def", "pass", "break", "continue", "return", "assert",
    "import", "from", "lambda", "class", "try", "not", "and", "or", "is", "None", "True", "False",
    "0", "1", "32", "-1", "0x10", "0b1", "0o7", "1.5", "1e9", "1_000", "4294967296", "9" * 30,
    '"shared"', '"threadIdx.x"', '"blockIdx.x"', "'x'", '"""doc"""', '"', "'", "b'x'", 'r"\\d"',
    "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^", "~", "<", ">", "<=", "!=",
    "tx", "bx", "x", "y", "full", "slot", "out", "ROUNDS", "r", "warp", "lane",
    "T.Tensor((1,), T.int32, scope=\"shared\")", "T.alloc_tensor(", "ty_args=", "full.ptr_to([0])",
    "T.ptx.mbarrier.init.shared.b64(", "T.ptx[\"mbarrier.init.shared.b64\"]", "T.cuda.cta_sync()",
    "T.launch_thread(\"threadIdx.x\", 64)", "T.device_entry()", "T.address_of(", "T.Cast(", "T.Select(",
    "T.uint32(1)", "T.serial(", "T.unroll(", "T.local_scalar(T.int32)", "T.alloc_buffer(",
]

tokens = st.lists(st.sampled_from(VOCAB), max_size=40)


@pytest.mark.parametrize("n", budgets(N_TOKENS))
def test_token_sequences(n):
    @fuzz_settings(n)
    @given(tokens, st.sampled_from(["", " "]))
    def run(calls, toks, sep):
        calls.append(1)
        check(sep.join(toks))

    run_counted(run, n)


HEADER = '''from tvm_tirx.script import tirx as T

ROUNDS = 4


@T.function
def k(out: T.Tensor((ROUNDS,), T.int32)):
    with T.device_entry():
        with T.launch_thread("blockIdx.x", 1) as bx:
            with T.launch_thread("threadIdx.x", 64) as tx:
                full = T.alloc_tensor(ty_args=[T.Tensor((1,), T.uint64, scope="shared")])
                slot = T.alloc_tensor(ty_args=[T.Tensor((1,), T.int32, scope="shared")])
                warp: T.let[T.int32] = tx // 32
                lane: T.let[T.int32] = tx % 32
                ok = T.local_scalar(T.uint32)
'''
BODY = " " * 16


@pytest.mark.slow
def test_token_sequences_in_a_kernel_body():
    @fuzz_settings(N_TOKENS_IN_BODY)
    @given(st.lists(tokens, min_size=1, max_size=4))
    def run(calls, lines):
        calls.append(1)
        check(HEADER + "".join(BODY + " ".join(toks) + "\n" for toks in lines))

    run_counted(run, N_TOKENS_IN_BODY)


# --------------------------------------------------------------------------- (b) corpus mutations

INTERESTING_CHARS = "()[]{}:=,.;\n \t\"'#\\@+-*/<>0123456789_Tx"
TOKEN_RE = re.compile(r"[^\W\d]\w*|\d[\w.]*|\"[^\"\n]*\"|'[^'\n]*'|\S")
# every token of the corpus (names, numbers, strings such as PTX mnemonics, punctuation), for token mutations
CORPUS_TOKENS = sorted({m.group() for _, text in CORPUS for m in TOKEN_RE.finditer(text)})


@st.composite
def mutated(draw):
    _name, text = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "delete_range", "insert", "duplicate", "swap", "token",
                                     "replace", "line_delete", "line_duplicate", "line_indent", "line_swap",
                                     "corpus_token", "corpus_token", "corpus_token"]))
        n = len(text)
        if kind == "corpus_token":  # replace, delete or duplicate one whole token, or swap two
            spans = [m.span() for m in TOKEN_RE.finditer(text)]
            if not spans:
                continue
            (i, j), (k, m) = draw(st.sampled_from(spans)), draw(st.sampled_from(spans))
            how = draw(st.sampled_from(["replace", "delete", "duplicate", "swap"]))
            if how == "replace":
                text = text[:i] + draw(st.sampled_from(CORPUS_TOKENS)) + text[j:]
            elif how == "delete":
                text = text[:i] + text[j:]
            elif how == "duplicate":
                text = text[:j] + " " + text[i:j] + text[j:]
            elif (i, j) != (k, m):
                (i, j), (k, m) = sorted([(i, j), (k, m)])
                text = text[:i] + text[k:m] + text[j:k] + text[i:j] + text[m:]
            continue
        if kind.startswith("line"):
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "line_delete":
                del lines[i]
            elif kind == "line_duplicate":
                lines.insert(i, lines[i])
            elif kind == "line_swap":
                j = draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
            else:
                stripped = lines[i].lstrip(" ")
                indent = draw(st.one_of(st.integers(0, 24), st.sampled_from([0, 4, 8, 12, 16, 20, 24, 28])))
                lines[i] = draw(st.sampled_from([" ", "\t"])) * indent + stripped
            text = "\n".join(lines)
            continue
        i = draw(st.integers(0, max(n - 1, 0)))
        if kind == "delete":
            text = text[:i] + text[i + 1:]
        elif kind == "delete_range":
            text = text[:i] + text[i + draw(st.integers(1, 30)):]
        elif kind == "insert":
            ch = draw(st.one_of(st.sampled_from(INTERESTING_CHARS), st.characters()))
            text = text[:i] + ch + text[i:]
        elif kind == "duplicate":
            j = i + draw(st.integers(1, 30))
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "swap":
            j = draw(st.integers(0, max(n - 1, 0)))
            i, j = min(i, j), max(i, j)
            if i < j:
                text = text[:i] + text[j] + text[i + 1:j] + text[i] + text[j + 1:]
        elif kind == "token":
            text = text[:i] + draw(st.sampled_from(VOCAB)) + text[i:]
        else:  # replace a stretch with a token
            text = text[:i] + draw(st.sampled_from(VOCAB)) + text[i + draw(st.integers(1, 12)):]
    return text


@pytest.mark.slow
def test_corpus_mutations():
    parsed = []

    @fuzz_settings(N_MUTATIONS)
    @given(mutated())
    def run(calls, text):
        calls.append(1)
        func = check(text)
        if func is not None:
            parsed.append(1)
            check_round_trip(func, text)

    run_counted(run, N_MUTATIONS)
    # the property above is only meaningful if both outcomes occur often
    assert 0.05 * N_MUTATIONS < len(parsed) < 0.95 * N_MUTATIONS, len(parsed)


# --------------------------------------------------------------------------- (d) random TIRx statements

# mostly well-typed pieces, so that a good share of the kernels parse and reach the round trip
LEAVES = ["tx", "bx", "warp", "lane", "ROUNDS", "0", "1", "7", "-3", "2147483647", "2147483648", "4294967296",
          "1.5", "True", "False", "slot[0]", "out[0]", "out[tx]", "full[0]", "T.uint32(1)", "T.int64(3)",
          "T.float32(2)", "T.float16(1)", "T.bool(1)", "T.int8(-128)", 'T.float32("inf")', "T.cuda.elect_sync()", "ok"]
ODD_LEAVES = ['"s"', "zz", "None", "full", "T.int32", "T.ptx", "(1, 2)", "[1]", "T.address_of(slot[0])", "T.foo.bar()"]
BINARY = ["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=", "and", "or"]
ODD_BINARY = ["/", "**", "in", "is", "@"]
CALLS2 = ["T.min", "T.max", "T.truncdiv", "T.truncmod", "T.floordiv", "T.floormod", "T.bitwise_and",
          "T.shift_left", "T.shift_right", "T.pow", "T.unknown_op"]
CALLS1 = ["T.uint8", "T.int64", "T.float32", "T.bfloat16", "T.exp", "T.abs", "T.bitwise_not", "-", "~", "not ",
          "T.cuda.cvta_generic_to_shared", "T.address_of", "T.ptx.foo", "T.reinterpret(T.float32, ",
          "T.Cast(T.int8, ", 'T.Cast("float32", ', "T.evaluate"]


def _combine(children, binary):
    return st.one_of(
        st.tuples(children, st.sampled_from(binary), children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(CALLS1), children).map(
            lambda t: f"{t[0]}{t[1]})" if t[0].endswith(", ") else
            (f"{t[0]}{t[1]}" if t[0] in ("-", "~", "not ") else f"{t[0]}({t[1]})")),
        st.tuples(st.sampled_from(CALLS2), children, children).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(st.sampled_from(["T.Select", "T.if_then_else"]), children, children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]}, {t[3]})"),
        st.tuples(st.sampled_from(["slot", "out", "full"]), children).map(lambda t: f"{t[0]}[{t[1]}]"),
    )


good_exprs = st.recursive(st.sampled_from(LEAVES), lambda c: _combine(c, BINARY), max_leaves=5)
wild_exprs = st.recursive(st.sampled_from(LEAVES + ODD_LEAVES), lambda c: _combine(c, BINARY + ODD_BINARY),
                          max_leaves=6)
exprs = st.one_of(*[good_exprs] * 5, wild_exprs)

SIMPLE = [
    "x{k} = {e}", "x{k}: T.let[T.{d}] = {e}", "x{k}: T.let = {e}", "x{k}: T.{d} = {e}", "slot[0] = {e}",
    "out[{e}] = {e2}", "slot[0] += {e}", "out[0] //= {e}", "v{k} = T.local_scalar(T.{d})", "v{k} = {e}",
    "v{k} += {e}", "T.evaluate({e})", 'assert {e}, "m"', "assert {e}", "{e}",
    "T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), {e})", "T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))",
    'T.ptx["mbarrier.arrive.shared.b64"](T.address_of(full[0]), {e})', "T.cuda.mbarrier_wait(full.ptr_to([0]), {e})",
    "T.ptx.fence.proxy.async_()", "T.cuda.cta_sync()", "T.cuda.atomic_add(out.ptr_to([{e}]), {e2})",
    'T.ptx.mbarrier(T.address_of(full[0]), {e}, "init", "", "shared", "b64", "")',
    'T.ptx.mbarrier(T.address_of(full[0]), {e}, "arrive", "", "shared", "b64", "pred")',
    "T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]), pred={e})", "break", "continue", "pass",
    'b{k} = T.alloc_buffer(({e},), "{d}", scope="local")', "b{k} = T.alloc_local(({e},), T.{d})",
    'd{k} = T.decl_buffer((1,), T.{d}, data=slot.data, elem_offset={e})', "w{k} = T.warp_id([{e}])",
    "w{k} = T.lane_id([32])", "w{k} = T.warp_id([2])", "c{k} = T.cta_id([{e}])", 'T.func_attr({{"k": {e}}})',
    "ok = {e}", "ok[0] = {e}", "ok += {e}", "x{k}: T.let[T.{d}] = T.reinterpret(T.{d}, {e})", "x{k} = T.Cast(T.{d}, {e})",
    "x{k} = T.{d}({e})", 'T.ptx.mbarrier(T.address_of(full[0]), {e}, "arrive", "", "shared", "b64", "p1")',
]
PTX = ["T.ptx.mbarrier.init.shared.b64", "T.ptx.mbarrier.arrive.shared.b64", "T.ptx.mbarrier.arrive.shared__cta.b64",
       "T.ptx.mbarrier.arrive.expect_tx.shared__cta.b64", "T.ptx.mbarrier.try_wait.parity.shared__cta.b64",
       "T.ptx.fence.mbarrier_init.release.cluster", "T.ptx.fence.proxy.async_.shared__cta", "T.ptx.bar.sync",
       "T.ptx.bar.arrive", "T.ptx.barrier.sync", "T.ptx.shfl_sync.bfly.b32", "T.ptx.shfl_sync.up.b32",
       "T.ptx.atom.shared.add.u32", "T.ptx.red.global_.add.u32", "T.ptx.tcgen05.fence__after_thread_sync",
       "T.ptx.tcgen05.mma.cta_group__1.kind__f16", "T.ptx.tcgen05.alloc.cta_group__1.sync.aligned.shared__cta.b32",
       "T.ptx.tcgen05.commit.cta_group__1.mbarrier__arrive__one.shared__cluster.b64", "T.ptx.tcgen05.wait__ld.sync.aligned",
       'T.ptx["tcgen05.ld.sync.aligned.32x32b.x1.b32"]', 'T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]',
       "T.ptx.elect.sync", "T.ptx.vote.sync.ballot.b32", "T.ptx.ld.shared.b32", "T.ptx.st.global.relaxed.gpu.b32",
       "T.ptx.cp.async.bulk.commit_group", "T.ptx.cp.async.bulk.wait_group.read", "T.ptx.setmaxnreg.dec.sync.aligned.u32",
       "T.cuda.mbarrier_wait", "T.cuda.atomic_add", "T.cuda.elect_sync", "T.cuda.warp_sync", "T.cuda.cta_sync",
       "T.cuda.__shfl_up_sync", "T.cuda.thread_fence", "T.cuda.nano_sleep", "T.ptx.unknown.op", "T.tvm_storage_sync"]
PTX_ARGS = ["full.ptr_to([0])", "slot.ptr_to([0])", "out.ptr_to([0])", "T.address_of(full[0])",
            "T.cuda.cvta_generic_to_shared(T.address_of(full[0]))", "ok", "ok[0]", "T.uint32(1)", '"shared"', "pred=True"]
ptx_calls = st.tuples(st.sampled_from(PTX), st.lists(st.one_of(st.sampled_from(PTX_ARGS), exprs), max_size=6)).map(
    lambda t: f"{t[0]}({', '.join(t[1])})")
COMPOUND = ["if {e}:", "for i{k} in range({e}):", "for i{k} in T.serial({e}):",
            "for i{k} in T.unroll(0, {e}):", "for i{k}, j{k} in T.grid({e}, {e2}):", "while {e}:",
            "with T.launch_thread(\"threadIdx.y\", {e}) as ty{k}:", "with T.launch_thread(\"threadIdx.y\", {k}) as ty:",
            "with T.attr({{\"k\": {e}}}):", "if T.cuda.elect_sync():"]
DTYPES = ["int32", "uint32", "int64", "uint64", "int8", "bool", "float32", "float16", "bfloat16", "int33"]


@st.composite
def statements(draw, depth=0):
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        fields = {"k": draw(st.integers(0, 3)), "e": draw(exprs), "e2": draw(exprs), "d": draw(st.sampled_from(DTYPES))}
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            header = draw(st.sampled_from(COMPOUND)).format(**fields)
            lines.append(header)
            lines.extend("    " + line for line in draw(statements(depth + 1)))
            if header.startswith("if "):  # elif/else clauses, and now and then one misplaced
                for clause in draw(st.lists(st.sampled_from(["elif {e}:", "else:"]), max_size=2)):
                    lines.append(clause.format(**fields))
                    lines.extend("    " + line for line in draw(statements(depth + 1)))
        elif draw(st.integers(0, 5)) == 0:
            lines.append(draw(ptx_calls))
        else:
            lines.append(draw(st.sampled_from(SIMPLE)).format(**fields))
    return lines


@pytest.mark.slow
def test_random_statements_in_a_kernel():
    parsed = []

    @fuzz_settings(N_STATEMENTS)
    @given(statements())
    def run(calls, lines):
        calls.append(1)
        text = HEADER + "".join(BODY + line + "\n" for line in lines)
        func = check(text)
        if func is not None:
            parsed.append(1)
            check_round_trip(func, text)

    run_counted(run, N_STATEMENTS)
    assert len(parsed) > 0.05 * N_STATEMENTS, len(parsed)


# Statements the strategies above found bugs with (kept as fixed seeds): each must parse and round-trip,
# or raise a well formed ParseError (`rejected`).
FOUND = [
    ('T.evaluate("s")', False),                       # printed as a bare string, which reads back as a docstring
    ('T.pptx.mbarrier(T.address_of(full[0]), "arrive", "", "", "shared::cta", "b64", "")', False),
    ("T.ptx.   T.ptx.mbarrier.arrive.shared.b64(full.ptr_to([0]))", False),  # printed as the real op
    ('T.ptx["T.a::b"](1)', False),
    ('x = T.float32("inf") // 1.0', False),             # floor(inf) raised while folding
    ('x = T.float32("nan") % 1.0', False),
    ("x = T.abs(T.address_of(slot[0]))", True),       # printed T.handle(0), which does not read back
    ("x = -T.ptx.foo(1)", True),                      # printed T.void(-1)
    ('x = (-3 if True else "s")', True),              # KeyError in type promotion
    ('slot[0] += "s"', True),
    ('x = T.reinterpret(T.int32, "s")', True),
    ("x = T.cuda.warp_sum()", True),                  # ValueError unpacking the operands
    ('T.ptx.mbarrier.init.shared.b64(full.ptr_to([0]), T.float32("inf"))', True),  # OverflowError
    ('with T.launch_thread("threadIdx.y", lane) as ty:\n                    pass', True),  # hoisted: undefined
    ("x = tx" + " + 1" * 3000, True),                 # RecursionError in the builder
]


@pytest.mark.parametrize("stmt, rejected", FOUND, ids=[f"found{k}" for k in range(len(FOUND))])
def test_inputs_the_fuzzer_found(stmt, rejected):
    text = HEADER + BODY + stmt + "\n"
    func = check(text)
    assert (func is None) == rejected
    if func is not None:
        check_round_trip(func, text)


def test_total_budget_meets_the_issue_bar():
    """The per-strategy budgets above (each asserted to have run) add up to the issue's 10,000 cases."""
    total = N_TEXT + N_TIRX_CHARS + N_TOKENS + N_TOKENS_IN_BODY + N_MUTATIONS + N_STATEMENTS
    assert total >= 10_000, total
