"""The examples in the tile dialect's TableGen descriptions parse and verify.

Every fenced ```mlir block that follows an `Example:` line in an op or
attribute description of dialects/tile/*.td is run through tlc-opt:

* a block that contains `func.func` is a whole program and is fed as is;
* any other block is a fragment of a kernel body and is wrapped in

      func.func @example() {
        %tile_example_grid = arith.constant 1 : index
        tile.kernel blocks(%tile_example_bx) in (%tile_example_grid) threads = 128 {
          <block>
        }
        return
      }

  (the wrapper's names are chosen so they cannot clash with an example's
  own `%c1`, `%bx`, ...; MLIR does not allow a nested region to redefine a
  name of the region around it);
* a block that is an attribute-only one-liner (a single line that neither
  defines an SSA value with `%x =` nor names an op as `dialect.op`) is
  skipped: it is not a program. (No block is like that today; inline
  examples such as "Example: `policy = #tile.warp_policy<full_row>`" are not
  fenced blocks and are checked by test_td_inline_attribute_example instead.)

tlc-opt is $TLC_OPT, else build/bin/tlc-opt of this repository, else
`tlc-opt` on PATH; the tests are skipped only when none exists. Each test is
named by file and op/attribute ("TileOps.td::tile.copy") so a failure says
which description holds the broken example.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TD_DIR = ROOT / "dialects" / "tile"


def find_tlc_opt():
    if os.environ.get("TLC_OPT"):
        return os.environ["TLC_OPT"]
    built = ROOT / "build" / "bin" / "tlc-opt"
    if built.exists():
        return str(built)
    return shutil.which("tlc-opt")


TLC_OPT = find_tlc_opt()

# `def Name : Tile_Op<"mnemonic"`, `def Name : Tile_Attr<"Cpp", "mnemonic"`,
# `def Name : EnumAttr<Tile_Dialect, Enum, "mnemonic">`.
_DEF = re.compile(r"^def\s+(\w+)\s*:\s*(\w+)<([^>{]*)")
_EXAMPLE = re.compile(r"^\s*Example:\s*$")
_FENCE_OPEN = re.compile(r"^\s*```mlir\s*$")
_FENCE_CLOSE = re.compile(r"^\s*```\s*$")
_INLINE_EXAMPLE = re.compile(r"^\s*Example:\s*`([^`]+)`\s*$")


def _entity_name(kind, args, def_name):
    """The op or attribute a `def` describes, as written in IR."""
    strings = re.findall(r'"([^"]*)"', args)
    if kind == "Tile_Op" and strings:
        return "tile." + strings[0]
    if kind in ("Tile_Attr", "EnumAttr") and strings:
        return "#tile." + strings[-1]
    return def_name


def _walk_td(path):
    """Yields (entity, line number, kind, text) for each example of a .td file.

    kind is "block" for a fenced ```mlir block after an `Example:` line and
    "inline" for an `Example: `...`` one-liner.
    """
    entity = None
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _DEF.match(line)
        if m:
            entity = _entity_name(m.group(2), m.group(3), m.group(1))
        m = _INLINE_EXAMPLE.match(line)
        if m:
            yield entity, i + 1, "inline", m.group(1)
        if _EXAMPLE.match(line):
            # The block must be the next non-blank line.
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _FENCE_OPEN.match(lines[j]):
                body = []
                k = j + 1
                while k < len(lines) and not _FENCE_CLOSE.match(lines[k]):
                    body.append(lines[k])
                    k += 1
                assert k < len(lines), f"{path.name}:{j + 1}: unterminated ```mlir block"
                yield entity, j + 1, "block", _dedent(body)
                i = k
        i += 1


def _dedent(body):
    indent = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
    return "\n".join(l[indent:] for l in body) + "\n"


def _collect(kind):
    cases = []
    for path in sorted(TD_DIR.glob("*.td")):
        seen = {}
        for entity, lineno, k, text in _walk_td(path):
            if k != kind:
                continue
            name = f"{path.name}::{entity}"
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name += f"#{seen[name]}"
            cases.append(pytest.param(path, lineno, text, id=name))
    return cases


BLOCKS = _collect("block")
INLINE = _collect("inline")

_SSA_DEF = re.compile(r"%[\w.$-]+(:\d+)?\s*(,\s*%[\w.$-]+\s*)*=")
_OP_NAME = re.compile(r"(^|\s|\")[a-z_][\w]*\.[a-z_][\w.]*")


def is_attribute_only(block):
    """A one-line block with no SSA definition and no op: not a program."""
    lines = [l for l in block.splitlines() if l.strip()]
    if len(lines) != 1:
        return False
    return not _SSA_DEF.search(lines[0]) and not _OP_NAME.search(lines[0].split("#")[0])


def wrap(block):
    if "func.func" in block or block.lstrip().startswith("module"):
        return block
    body = "".join("    " + l + "\n" if l.strip() else "\n" for l in block.splitlines())
    return (
        "func.func @example() {\n"
        "  %tile_example_grid = arith.constant 1 : index\n"
        "  tile.kernel blocks(%tile_example_bx) in (%tile_example_grid) threads = 128 {\n"
        f"{body}"
        "  }\n"
        "  return\n"
        "}\n"
    )


def run_tlc_opt(source):
    return subprocess.run(
        [TLC_OPT, "-", "-o", os.devnull], input=source, capture_output=True, text=True
    )


needs_tlc_opt = pytest.mark.skipif(
    TLC_OPT is None,
    reason="tlc-opt not found: build tlc (build/bin/tlc-opt), set TLC_OPT or put it on PATH",
)


def test_examples_were_found():
    """Guards against the extraction silently finding nothing."""
    assert len(BLOCKS) >= 10, [p.id for p in BLOCKS]
    ids = {p.id for p in BLOCKS}
    for op in ("kernel", "alloc_shared", "alloc_fragment", "alloc_local", "copy", "fill",
               "parallel", "pipelined", "gemm", "reduce"):
        assert f"TileOps.td::tile.{op}" in ids, f"no example found for tile.{op}"


def test_wrap_and_skip_rules():
    assert is_attribute_only("#tile.swizzle<bits = 3, base = 4, shift = 3>\n")
    assert is_attribute_only("policy = #tile.warp_policy<full_row>\n")
    assert not is_attribute_only("%s = tile.alloc_shared : memref<4xf32>\n")
    assert not is_attribute_only("tile.fill %f, %z : memref<4xf32>, f32\n")
    assert not is_attribute_only("%a = x\n%b = y\n")
    whole = "func.func @f() {\n  return\n}\n"
    assert wrap(whole) == whole
    modules = 'module attributes {tile.target = #tile.target<"sm_80">} {}\n'
    assert wrap(modules) == modules
    assert "tile.kernel" in wrap("%x = arith.constant 0 : index\n")


@needs_tlc_opt
@pytest.mark.parametrize("path, lineno, block", BLOCKS)
def test_td_example(path, lineno, block):
    if is_attribute_only(block):
        pytest.skip(f"{path.name}:{lineno}: attribute-only one-liner, not a program")
    source = wrap(block)
    result = run_tlc_opt(source)
    assert result.returncode == 0, (
        f"the example at {path.relative_to(ROOT)}:{lineno} does not parse and verify.\n"
        f"--- input to tlc-opt ---\n{source}"
        f"--- tlc-opt stderr ---\n{result.stderr}"
    )


@needs_tlc_opt
@pytest.mark.parametrize("path, lineno, text", INLINE)
def test_td_inline_attribute_example(path, lineno, text):
    """`Example: `name = #tile.attr<...>`` parses as a (discardable) attribute."""
    m = re.fullmatch(r"(\w+)\s*=\s*(#tile\..*)", text.strip())
    assert m, f"{path.name}:{lineno}: inline example is not `name = #tile.<attr>`: {text}"
    source = f"func.func @example() attributes {{tile.{m.group(1)} = {m.group(2)}}} {{\n  return\n}}\n"
    result = run_tlc_opt(source)
    assert result.returncode == 0, (
        f"the inline example at {path.relative_to(ROOT)}:{lineno} does not parse.\n"
        f"--- input to tlc-opt ---\n{source}"
        f"--- tlc-opt stderr ---\n{result.stderr}"
    )
