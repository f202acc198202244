"""The production-corpus harness (issue 14): build the `tirx-kernels` library with the real
compiler, print each function before and after TVM's lowering into a cache outside the
repository, then parse and check it with modelcheck and take a census of what blocks it.

`build` runs only inside the real-compiler environment (apache-tvm 0.27, tirx-kernels),
one registry module per child process; `census` (with `census_rules`: the constructs, `census_ops`:
the ops) and `check` need no TVM.
"""
