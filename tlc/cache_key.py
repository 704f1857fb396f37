"""Keys of the kernel cache: what a compilation depends on, hashed.

Two keys exist. `ir_key` hashes what the compiler compiled: the tile IR the
frontend built, the target and the compiler's identity. It is always right,
but needs the frontend to run.

`factory_key` is the fast path: it hashes every value a @tlc.jit factory can
read without running it, or gives up (returns None) when it meets a value it
cannot fingerprint by content. It covers the code of the factory and of every
function it reaches (bytecode, and the source file text the frontend parses),
its closure cells, defaults, the globals the code loads, the attributes it
loads from modules (recursively), its arguments and the target. A value is
hashed by content only when its content is all that can matter: plain
constants, containers of them, functions (by the same rules), modules (through
the attributes the code names), tlc's own values, and builtins known not to
read hidden state. Anything else (an instance, a class, `getattr`, `open`,
`globals`, a module reached inside a container...) makes the factory unkeyable
and the caller falls back to `ir_key`.
"""

from __future__ import annotations

import builtins
import dis
import enum
import functools
import hashlib
import linecache
import marshal
import os
import sys
import types

from .version import __version__

# Builtins whose result depends only on their arguments (or, like print, whose
# effect cannot change the program built).
PURE_BUILTINS = frozenset("""
    abs all any ascii bin bool bytes callable chr complex dict divmod enumerate filter
    float format frozenset hex int isinstance issubclass iter len list map max min next
    oct ord pow print range repr reversed round set slice sorted str sum tuple zip
    ArithmeticError AssertionError AttributeError Exception IndexError KeyError
    NotImplementedError OverflowError RuntimeError TypeError ValueError ZeroDivisionError
    True False None NotImplemented Ellipsis
""".split())

# Modules whose builtin functions are pure.
PURE_MODULES = frozenset({"math", "operator", "_operator"})

MAX_ITEMS = 100_000  # a bigger closure is not worth fingerprinting


class Unkeyable(Exception):
    """A value the fast key cannot fingerprint by content."""


def _identity_parts() -> list[str]:
    """tlc's version, the Python running it, tlc's Python sources by content and
    its native libraries by size and time."""
    import tlc

    h = hashlib.sha256()
    # tlc/ and, imported from a checkout, the built package it takes its
    # native modules from (tlc/source_tree.py).
    for root in [os.path.dirname(os.path.abspath(__file__))] + list(tlc.__path__)[1:]:
        _hash_tree(h, root)
    # The Python version too: the frontend reads Python's AST and bytecode.
    return [__version__, sys.version, h.hexdigest()]


def _hash_tree(h, root: str) -> None:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            try:
                if name.endswith(".py"):
                    with open(path, "rb") as f:
                        h.update(rel.encode() + b"\0" + f.read() + b"\0")
                elif ".so" in name:
                    st = os.stat(path)
                    h.update(f"{rel}:{st.st_size}:{st.st_mtime_ns}\0".encode())
            except OSError:
                h.update(f"{rel}:unreadable\0".encode())


@functools.lru_cache(maxsize=1)
def compiler_identity() -> str:
    """Changes whenever tlc's sources or native libraries change, so that a
    cache filled by another build of the compiler is not used."""
    return ";".join(_identity_parts())


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def ir_key(tile_ir: str, name: str, target: str) -> str:
    """The key of a compilation, from what the frontend built."""
    return _digest("ir", tile_ir, name, target, compiler_identity())


def factory_key(factory, args: tuple, kwargs: dict, target: str) -> str | None:
    """The key of `factory(*args, **kwargs)` for `target` without running it,
    or None when something it can read cannot be fingerprinted."""
    fp = _Fingerprint()
    try:
        fp.value(factory)
        fp.add("args")
        fp.value(tuple(args))
        fp.value(dict(sorted(kwargs.items())))
        fp.module_attributes()
    except (Unkeyable, RecursionError):
        return None
    return "f" + _digest("factory", fp.hash.hexdigest(), target, compiler_identity())


@functools.lru_cache(maxsize=512)
def _code_digest(code: types.CodeType) -> str:
    """The hash of a code object's bytecode, constants, names and positions."""
    return hashlib.sha256(marshal.dumps(code)).hexdigest()


_TEXTS: dict[str, tuple[list, str]] = {}  # filename -> (linecache's lines, their hash)


def _text_digest(filename: str, lines: list) -> str:
    """The hash of a source file's text as linecache holds it (hashed again
    only when linecache holds another list, i.e. the file was read again)."""
    cached = _TEXTS.get(filename)
    if cached is None or cached[0] is not lines:
        if len(_TEXTS) >= 256:
            _TEXTS.clear()
        cached = _TEXTS[filename] = (lines, hashlib.sha256("".join(lines).encode(
            "utf-8", "surrogatepass")).hexdigest())
    return cached[1]


@functools.lru_cache(maxsize=512)
def _code_reads(code: types.CodeType) -> tuple[frozenset, frozenset, frozenset]:
    """(global names loaded, attribute names loaded, modules imported) by `code`
    and the code nested in it."""
    globals_, attrs, imports = set(), set(), set()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                globals_.add(ins.argval)
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"):
                attrs.add(ins.argval)
            elif ins.opname == "IMPORT_NAME":
                imports.add(ins.argval)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(globals_), frozenset(attrs), frozenset(imports)


def _is_tlc(module_name) -> bool:
    return isinstance(module_name, str) and (module_name == "tlc" or
                                             module_name.startswith("tlc."))


class _Fingerprint:
    """Feeds values into one hash, by content; raises Unkeyable.

    A module is hashed through the attributes that any code reached loads (by
    name: a module got from a call or a container is read the same way), so
    modules are finished last, by `module_attributes`, until no new attribute
    name appears."""

    def __init__(self):
        self.hash = hashlib.sha256()
        self.items = 0
        self.seen: dict[int, int] = {}  # id of a function or module -> its number
        self.keep: list = []  # keeps the ids in `seen` alive
        self.files: set[str] = set()
        self.attrs: set[str] = set()  # attribute names loaded by any code reached
        self.modules: list[tuple[types.ModuleType, set]] = []  # and the names hashed

    def module_attributes(self) -> None:
        """Hashes the attributes of the modules met that the code can load."""
        changed = True
        while changed:
            changed = False
            for module, done in list(self.modules):
                namespace = vars(module)
                for name in sorted(self.attrs - done):
                    done.add(name)
                    if name in namespace:
                        changed = True
                        self.add("attr", module.__name__, name)
                        self.value(namespace[name])

    def add(self, *parts) -> None:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise Unkeyable("too many values")
        for part in parts:
            data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
            self.hash.update(len(data).to_bytes(8, "little") + data)

    def _once(self, obj) -> bool:
        """True the first time `obj` is met; later, a back-reference is hashed."""
        if id(obj) in self.seen:
            self.add("ref", self.seen[id(obj)])
            return False
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        return True

    def value(self, v) -> None:
        t = type(v)
        if v is None or t in (bool, int, float, complex, str, bytes):
            self.add(t.__name__, repr(v))
        elif t in (tuple, list):
            self.add(t.__name__, len(v))
            for x in v:
                self.value(x)
        elif t is dict:
            self.add("dict", len(v))
            for k, x in list(v.items()):
                self.value(k)
                self.value(x)
        elif t in (set, frozenset):
            self.add(t.__name__, len(v))
            for r in sorted(_sub_digest(x) for x in v):
                self.add(r)
        elif t is types.FunctionType:
            self._function(v)
        elif t is types.ModuleType:
            self._module(v)
        elif t is types.BuiltinFunctionType:
            self._builtin(v)
        elif t is type and v.__module__ == "builtins" and v.__name__ in PURE_BUILTINS:
            self.add("builtin", v.__name__)
        elif t is type and _is_tlc(v.__module__):
            self.add("tlc-class", v.__module__, v.__qualname__)
        elif _is_tlc(getattr(t, "__module__", None)):
            self._tlc_value(v)
        elif isinstance(v, enum.Enum) and type(v.value) in (int, str):
            self.add("enum", t.__module__, t.__qualname__, v.name, repr(v.value))
        else:
            raise Unkeyable(f"a {t.__name__}")

    def _builtin(self, v) -> None:
        module = getattr(v, "__module__", None)
        if module == "builtins" and v.__name__ in PURE_BUILTINS:
            self.add("builtin", v.__name__)
        elif module in PURE_MODULES:
            self.add("builtin", module, v.__name__)
        else:
            raise Unkeyable(f"builtin {v.__name__}")

    def _tlc_value(self, v) -> None:
        """tlc's own values: their class is part of the compiler's identity."""
        from .language.types import SymbolicDim

        from .frontend.prim_func import Macro

        t = type(v)
        if isinstance(v, Macro):  # its function, by the same rules as any other
            self.add("tlc", t.__qualname__)
            self._function(v.fn)
        elif isinstance(v, str) or isinstance(v, enum.Enum):
            self.add("tlc", t.__qualname__, str(v))
        elif isinstance(v, SymbolicDim):
            self.add("tlc", t.__qualname__, v.name, v.dtype)
        else:
            raise Unkeyable(f"a tlc {t.__name__}")

    def _module(self, module: types.ModuleType) -> None:
        if not self._once(module):
            return
        self.add("module", module.__name__)
        if not _is_tlc(module.__name__):  # tlc is part of the compiler's identity
            self.modules.append((module, set()))

    def _function(self, fn: types.FunctionType) -> None:
        if not self._once(fn):
            return
        if _is_tlc(fn.__module__):
            self.add("tlc-function", fn.__module__, fn.__qualname__)
            return
        code = fn.__code__
        self.add("function", _code_digest(code))
        self._source_file(code.co_filename, fn.__globals__)
        self.value(fn.__defaults__)
        self.value(fn.__kwdefaults__)
        for cell in fn.__closure__ or ():
            try:
                self.value(cell.cell_contents)
            except ValueError:
                self.add("empty cell")
        names, attrs, imports = _code_reads(code)
        self.attrs |= attrs
        env = fn.__globals__
        for name in sorted(names):
            if name in env:
                self.add("global", name)
                self.value(env[name])
            elif name in PURE_BUILTINS or not hasattr(builtins, name):
                self.add("unbound" if name not in PURE_BUILTINS else "builtin", name)
            else:
                raise Unkeyable(f"builtin {name}")
        for name in sorted(imports):
            module = sys.modules.get(name)
            if module is None:
                raise Unkeyable(f"import of {name}")
            self._module(module)

    def _source_file(self, filename: str, env: dict) -> None:
        """The file text the frontend parses (it reads the source, not the bytecode)."""
        if filename in self.files:
            return
        self.files.add(filename)
        self.add("file", _text_digest(filename, linecache.getlines(filename, env)))


def _sub_digest(v) -> str:
    """The hash of a set member (sets have no order); only plain values."""
    if type(v) not in (bool, int, float, complex, str, bytes, tuple, frozenset) and v is not None:
        raise Unkeyable(f"a set of {type(v).__name__}")
    fp = _Fingerprint()
    fp.value(v)
    if fp.modules or fp.seen:
        raise Unkeyable("a set holding functions or modules")
    return fp.hash.hexdigest()
