"""Loading kernels: files, text, and objects with `.script()` (a tvm_tirx function)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import ir


@dataclass(frozen=True)
class Kernel:
    """A parsed kernel file: `func` is the `ir.PrimFunc`; `constants` the values it was built with."""

    func: ir.PrimFunc
    path: str
    overrides: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.func.name

    @property
    def constants(self) -> dict[str, int]:
        return self.func.constant_values

    def script(self) -> str:
        return ir.print_func(self.func)


def load(path: str | Path, *, kernel_name: str | None = None, **consts) -> Kernel:
    """Parse a kernel file, overriding module constants by keyword (`load(p, T=320, H=1)`); a file with
    several kernels needs `kernel_name`."""
    return Kernel(ir.parse_file(path, kernel_name=kernel_name, **consts), str(path), dict(consts))


def parse(text: str, path: str = "<string>", **consts) -> ir.PrimFunc:
    """Parse kernel text into an `ir.PrimFunc`."""
    return ir.parse(text, path, **consts)


as_func = ir.as_func
