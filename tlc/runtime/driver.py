"""ctypes bindings of libtlc_runtime.so (runtime/tlc_runtime.c).

The library is found through the TLC_RUNTIME_LIB environment variable, else
as libtlc_runtime.so beside this file (where the build puts it). It is loaded
at first use, not at import, and it loads the CUDA driver only when called:
importing tlc.runtime works on a machine without a GPU.
"""

import ctypes
import os
import struct
import threading
from pathlib import Path

from .errors import LaunchError

LIBRARY_ENV = "TLC_RUNTIME_LIB"
LIBRARY_NAME = "libtlc_runtime.so"
_ERR_LEN = 32768  # room for a JIT error log

_c_char_p, _c_int, _c_uint, _c_size_t, _c_void_p = (
    ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p)
_p_void_p = ctypes.POINTER(ctypes.c_void_p)
_p_uint64 = ctypes.POINTER(ctypes.c_uint64)

TENSOR_MAP_BYTES = 128  # a CUtensorMap
_TENSOR_MAP_ALIGN = 128  # cuda.h's CUtensorMap: 64 in CUDA 12, 128 in CUDA 13
_TensorMapBytes = ctypes.c_ubyte * TENSOR_MAP_BYTES

# Argument types of each entry point, less the trailing (char *err, size_t len).
_SIGNATURES = {
    "tlc_rt_init": [],
    "tlc_rt_ensure_context": [_c_int],
    "tlc_rt_current_context": [_p_void_p],
    "tlc_rt_pointer_device": [_c_void_p, ctypes.POINTER(_c_int)],
    "tlc_rt_device_capability": [ctypes.POINTER(_c_int), ctypes.POINTER(_c_int)],
    "tlc_rt_device_sm_count": [ctypes.POINTER(_c_int)],
    "tlc_rt_load_module": [_c_char_p, _c_char_p, _p_void_p],
    "tlc_rt_get_function": [_c_void_p, _c_char_p, _p_void_p],
    "tlc_rt_set_dynamic_smem": [_c_void_p, _c_int, _c_char_p],
    "tlc_rt_launch": [_c_void_p] + [_c_uint] * 7 + [_c_void_p, _p_void_p, _c_char_p],
    "tlc_rt_launch_on": [_c_int, _c_void_p, _c_char_p, _c_void_p, _c_char_p, _c_uint, _c_uint,
                         _c_char_p],
    "tlc_rt_encode_tensor_map": [_c_void_p, _c_int, _c_uint, ctypes.c_uint64, _p_uint64,
                                 _p_uint64, ctypes.POINTER(ctypes.c_uint32), _c_int, _c_char_p,
                                 _c_char_p],
    "tlc_rt_synchronize": [],
}

# Entry points bound at first use: a library built before them still
# launches everything that does not need them.
_LATER_SIGNATURES = {
    "tlc_rt_mem_alloc": [_c_size_t, _p_void_p],
    "tlc_rt_mem_free": [_c_void_p],
    "tlc_rt_memset_d8_async": [_c_void_p, ctypes.c_ubyte, _c_size_t, _c_void_p],
    "tlc_rt_set_cooperative": [_c_void_p],
}


_DIMS = struct.Struct("<7I")
# tlc_rt_launch_packed's plan buffer: fn, device, dims, n_slots, n_maps, then
# the kernel's name at offset 56 (runtime/tlc_runtime.h).
_PLAN = struct.Struct("<Qq28sII4x")


def launch_dims(grid, block, smem: int) -> bytes:
    """The `dims` argument of Runtime.launch_on."""
    return _DIMS.pack(*grid, *block, smem)


def launch_plan(device: int, fn: int, dims: bytes, n_slots: int, n_maps: int,
                kernel: bytes) -> bytes:
    """The `plan` argument of Runtime.launcher()'s function: what launch_on
    takes besides the stream and the slots."""
    return _PLAN.pack(fn, device, dims, n_slots, n_maps) + kernel + b"\0"


_tls = threading.local()


def _error_buffer():
    # One per thread, reused: a launch makes several calls and allocating
    # 32 KiB for each showed in the launch overhead.
    buf = getattr(_tls, "err", None)
    if buf is None:
        buf = _tls.err = ctypes.create_string_buffer(_ERR_LEN)
    return buf


def library_path() -> Path:
    if os.environ.get(LIBRARY_ENV):
        return Path(os.environ[LIBRARY_ENV])
    beside = Path(__file__).with_name(LIBRARY_NAME)
    if not beside.exists():  # tlc imported from a checkout (tlc/source_tree.py)
        import tlc

        for folder in tlc.__path__[1:]:
            if Path(folder, "runtime", LIBRARY_NAME).exists():
                return Path(folder, "runtime", LIBRARY_NAME)
    return beside


class Runtime:
    """One loaded libtlc_runtime.so; each method raises LaunchError on failure."""

    def __init__(self, path: Path):
        self.path = path
        self._lib = ctypes.CDLL(str(path))
        self._sm_counts: dict = {}  # device (or context) -> its multiprocessor count
        self._launcher = None  # launcher(), made on first use
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(self._lib, name)
            fn.argtypes = argtypes + [_c_char_p, _c_size_t]
            fn.restype = _c_int

    def _call(self, name: str, *args) -> None:
        err = _error_buffer()
        if getattr(self._lib, name)(*args, err, _ERR_LEN) != 0:
            raise LaunchError(err.value.decode("utf-8", "replace") or f"{name} failed")

    def _call_later(self, name: str, *args) -> None:
        """_call of an entry point of _LATER_SIGNATURES, bound on first use."""
        fn = getattr(self._lib, name, None)
        if fn is None:
            raise LaunchError(f"tlc runtime: the runtime library {self.path} has no {name}; "
                              "it is older than this tlc: rebuild it")
        if fn.argtypes is None:
            fn.argtypes = _LATER_SIGNATURES[name] + [_c_char_p, _c_size_t]
            fn.restype = _c_int
        self._call(name, *args)

    def mem_alloc(self, nbytes: int) -> int:
        """`nbytes` of device memory in the current context (cuMemAlloc)."""
        ptr = _c_void_p()
        self._call_later("tlc_rt_mem_alloc", nbytes, ctypes.byref(ptr))
        return ptr.value or 0

    def mem_free(self, ptr: int) -> None:
        """Frees memory mem_alloc returned (cuMemFree)."""
        self._call_later("tlc_rt_mem_free", ptr)

    def memset_d8_async(self, ptr: int, value: int, nbytes: int, stream: int) -> None:
        """Sets `nbytes` bytes from `ptr` to `value`, in order on `stream` (a
        CUstream handle, 0 the legacy default stream; cuMemsetD8Async)."""
        self._call_later("tlc_rt_memset_d8_async", ptr, value, nbytes, stream or None)

    def init(self) -> None:
        self._call("tlc_rt_init")

    def ensure_context(self, device: int) -> None:
        self._call("tlc_rt_ensure_context", device)

    def current_context(self) -> int:
        ctx = _c_void_p()
        self._call("tlc_rt_current_context", ctypes.byref(ctx))
        return ctx.value or 0

    def pointer_device(self, ptr: int) -> int:
        device = _c_int(-1)
        self._call("tlc_rt_pointer_device", ptr, ctypes.byref(device))
        return device.value

    def device_capability(self) -> tuple[int, int]:
        """(major, minor) compute capability of the current context's device."""
        major, minor = _c_int(0), _c_int(0)
        self._call("tlc_rt_device_capability", ctypes.byref(major), ctypes.byref(minor))
        return major.value, minor.value

    def device_sm_count(self) -> int:
        """The number of streaming multiprocessors of the current context's
        device (asks the driver every time; see sm_count)."""
        count = _c_int(0)
        self._call("tlc_rt_device_sm_count", ctypes.byref(count))
        return count.value

    def sm_count(self, key) -> int:
        """device_sm_count for the current context, remembered under `key`
        (the device's ordinal, or the context's handle where the ordinal is
        unknown): a device's count never changes."""
        count = self._sm_counts.get(key)
        if count is None:
            count = self._sm_counts[key] = self.device_sm_count()
        return count

    def load_module(self, ptx: bytes, kernel: str) -> int:
        module = _c_void_p()
        self._call("tlc_rt_load_module", ptx, kernel.encode(), ctypes.byref(module))
        return module.value

    def get_function(self, module: int, name: str) -> int:
        fn = _c_void_p()
        self._call("tlc_rt_get_function", module, name.encode(), ctypes.byref(fn))
        return fn.value

    def set_cooperative(self, fn: int) -> None:
        """Launch `fn` cooperatively from now on (T.sync_grid)."""
        self._call_later("tlc_rt_set_cooperative", fn)

    def set_dynamic_smem(self, fn: int, nbytes: int, kernel: str) -> None:
        self._call("tlc_rt_set_dynamic_smem", fn, nbytes, kernel.encode())

    def launch(self, fn: int, grid, block, smem: int, stream: int, params, kernel: str) -> None:
        self._call("tlc_rt_launch", fn, *grid, *block, smem, stream or None,
                   params, kernel.encode())

    def launch_on(self, device: int, fn: int, dims: bytes, stream: int, slots: bytes,
                  kernel: bytes, n_maps: int = 0) -> None:
        """Launches on `device`'s primary context (made current for the launch
        only). `dims` packs the grid, block and dynamic shared memory size as
        7 uint32 (launch_dims); `slots` holds each parameter's value in 8
        bytes, then the n_maps tensor maps (the last parameters) in 128 bytes
        each."""
        err = _error_buffer()
        if self._lib.tlc_rt_launch_on(device, fn, dims, stream or None, slots,
                                      len(slots) // 8, n_maps, kernel, err, _ERR_LEN) != 0:
            raise LaunchError(err.value.decode("utf-8", "replace") or "tlc_rt_launch_on failed")

    def launcher(self):
        """launch(plan, call) -> int: launch_on with its arguments in two
        bytes objects, `plan` from launch_plan and `call` the stream (8
        bytes) then the slots, in one ctypes call (tlc_rt_launch_packed).
        Non-zero means it failed: raise_launch_error() then raises the
        LaunchError. A library without tlc_rt_launch_packed gets the same
        through launch_on (which raises itself)."""
        if self._launcher is None:
            packed = getattr(self._lib, "tlc_rt_launch_packed", None)
            last_error = getattr(self._lib, "tlc_rt_last_launch_error", None)
            if packed is not None and last_error is not None:
                packed.argtypes = [_c_char_p, _c_char_p]
                packed.restype = _c_int
                last_error.argtypes = [_c_char_p, _c_size_t]
                last_error.restype = _c_int
                self._last_launch_error = last_error
                self._launcher = packed
            else:
                self._launcher = self._launch_unpacked
        return self._launcher

    def native_entry_points(self):
        """The addresses of tlc_rt_launch_packed and tlc_rt_last_launch_error
        (for tlc.runtime._launch, which calls them with the GIL held), or
        None for a library without them."""
        packed = getattr(self._lib, "tlc_rt_launch_packed", None)
        last_error = getattr(self._lib, "tlc_rt_last_launch_error", None)
        if packed is None or last_error is None:
            return None
        return (ctypes.cast(packed, _c_void_p).value, ctypes.cast(last_error, _c_void_p).value)

    def _launch_unpacked(self, plan: bytes, call: bytes) -> int:
        fn, device, dims, n_slots, n_maps = _PLAN.unpack_from(plan)
        stream = int.from_bytes(call[:8], "little")
        self.launch_on(device, fn, dims, stream, call[8:8 + 8 * n_slots], plan[_PLAN.size:-1],
                       n_maps)
        return 0

    def raise_launch_error(self):
        """Raises the LaunchError of this thread's last failed launcher() call."""
        err = _error_buffer()
        self._last_launch_error(err, _ERR_LEN)
        raise LaunchError(err.value.decode("utf-8", "replace") or "tlc_rt_launch_packed failed")

    def encode_tensor_map(self, data_type: int, address: int, sizes, strides_bytes, box,
                          swizzle: int, kernel: str, param: str):
        """The TMA descriptor (CUtensorMap) of a tensor: a 128-byte aligned
        ctypes array of 128 bytes, usable as a kernel parameter value. sizes,
        strides_bytes and box list the dimensions outermost first."""
        rank = len(sizes)
        raw = (ctypes.c_ubyte * (TENSOR_MAP_BYTES + _TENSOR_MAP_ALIGN))()
        out = _TensorMapBytes.from_buffer(raw, -ctypes.addressof(raw) % _TENSOR_MAP_ALIGN)
        self._call("tlc_rt_encode_tensor_map", ctypes.addressof(out), data_type, rank, address,
                   (ctypes.c_uint64 * rank)(*sizes), (ctypes.c_uint64 * rank)(*strides_bytes),
                   (ctypes.c_uint32 * rank)(*box), swizzle, kernel.encode(), param.encode())
        return out

    def synchronize(self) -> None:
        self._call("tlc_rt_synchronize")


_lock = threading.Lock()
_loaded: dict[Path, Runtime] = {}
_ready: tuple[str, Runtime] | None = None  # (TLC_RUNTIME_LIB, its initialised runtime)


def runtime() -> Runtime:
    """The runtime library, loaded on first use, with the driver initialised."""
    global _ready
    ready, key = _ready, os.environ.get(LIBRARY_ENV, "")
    if ready is not None and ready[0] == key:  # the per-launch fast path
        return ready[1]
    path = library_path()
    with _lock:
        rt = _loaded.get(path)
        if rt is None:
            if not path.is_file():
                raise LaunchError(
                    f"tlc runtime: the runtime library {path} does not exist; build tlc "
                    f"(it puts {LIBRARY_NAME} into tlc/runtime/) or set {LIBRARY_ENV} "
                    f"to the library's path")
            try:
                rt = Runtime(path)
            except (OSError, AttributeError) as e:
                raise LaunchError(
                    f"tlc runtime: cannot load the runtime library {path}: {e}") from None
            _loaded[path] = rt
    rt.init()  # raises (and is retried next time) while there is no driver
    _ready = (key, rt)
    return rt


def synchronize() -> None:
    """Wait for all work on the current CUDA context (cuCtxSynchronize)."""
    runtime().synchronize()
