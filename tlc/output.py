"""Writing output files safely, and reading files that may not be regular.

`write_output` is what the `tlc` command and `save_artifact` use: a regular
file (or a path that does not exist) is replaced atomically, through a
temporary file in the same folder, with the mode the umask gives a new file;
a character device or a FIFO (`/dev/null`, `/dev/stdout`) is written through
as a plain open() would; anything else (a directory, a block device, a
socket, a symbolic link to a regular file, the input file itself) is refused.
Every failure is an OutputError whose text is one line naming the path.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile


class FileError(OSError):
    """A file that could not be read or written; str() is one line naming it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class OutputError(FileError):
    """An output that could not be written."""


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def umask() -> int:
    """The process's umask, read without changing it where Linux allows."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _is_descriptor_path(path: str) -> bool:
    """/dev/stdout, /dev/fd/N, /proc/self/fd/N: names of open descriptors."""
    absolute = os.path.abspath(path)
    return (os.path.dirname(absolute) == "/dev" and not os.path.isdir(absolute)
            and os.path.basename(absolute) in ("stdout", "stderr")) or \
        absolute.startswith(("/dev/fd/", "/proc/self/fd/"))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    return "not a regular file"


def write_output(path: str, data: str | bytes, inputs: tuple[str, ...] = (),
                 fsync: bool = False) -> None:
    """Writes `data` to `path` (see the module's docstring); raises OutputError."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not path:
        raise OutputError("cannot write '': the output path is empty")
    shown = repr(path)
    for source in inputs:
        if source and source != "-" and _same_file(path, source):
            raise OutputError(f"cannot write {shown}: it is the input file")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError(f"cannot write {shown}: {_reason(e)}") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            raise OutputError(f"cannot write {shown}: it is a symbolic link to "
                              f"'{os.readlink(path)}', which cannot be opened") from None
        if _is_descriptor_path(path) and not stat.S_ISDIR(target.st_mode):
            _write_through(path, data, shown)
            return
        if stat.S_ISCHR(target.st_mode) or stat.S_ISFIFO(target.st_mode):
            _write_through(path, data, shown)
            return
        raise OutputError(f"cannot write {shown}: it is a symbolic link (to "
                          f"'{os.path.realpath(path)}'); name the file itself")
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        _write_through(path, data, shown)
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputError(f"cannot write {shown}: it is {_kind(st.st_mode)}")
    try:
        replace_atomically(path, data, mode=0o666 & ~umask(), fsync=fsync)
    except OSError as e:
        raise OutputError(f"cannot write {shown}: {_reason(e)}") from None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _write_through(path: str, data: bytes, shown: str) -> None:
    """Writes into a device or FIFO that already exists, as open(path, 'wb') would."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC if not _is_fifo(path) else os.O_WRONLY)
    except OSError as e:
        raise OutputError(f"cannot write {shown}: {_reason(e)}") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as e:
        raise OutputError(f"cannot write {shown}: {_reason(e)}") from None
    finally:
        os.close(fd)


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def replace_atomically(path: str, data: bytes, mode: int, fsync: bool = False) -> None:
    """Writes a temporary file next to `path` and renames it over `path`;
    the temporary file never outlives a failure. Raises OSError."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.basename(path):
        raise OSError(errno.EISDIR, "it names a directory")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tlc-", suffix=".tmp")
    try:
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def open_regular(path: str, what: str = "file", follow_symlinks: bool = True):
    """Opens `path` for reading only if it is a regular file (a FIFO would
    block, a device never end); returns a binary file object. Raises FileError."""
    try:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        if not follow_symlinks:
            flags |= getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags)
    except OSError as e:
        raise FileError(f"cannot read {what} '{path}': {_reason(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileError(f"cannot read {what} '{path}': it is {_kind(st.st_mode)}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
