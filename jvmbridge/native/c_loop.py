"""The C loop (aesloop.c): compiled on first use against libcrypto, cached per user, loaded with ctypes."""
from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
from pathlib import Path

from jvmbridge.harness import HarnessUnavailable, cache_dir
from jvmbridge.trust.bounded import read_regular_file
from jvmbridge.trust.launch import find_program, run
from jvmbridge.trust.paths import NotTrusted, trusted_path
from jvmbridge.trust.writer import replace_whole

SOURCE = Path(__file__).with_name("aesloop.c")
# The source is a few KiB and its library a few dozen: more is not ours.
_SOURCE_LIMIT = 1 << 20
_LIBRARY_LIMIT = 64 << 20


class CLoopUnavailable(RuntimeError):
    """No C compiler, no OpenSSL headers, or a failed build: the message says which."""


def library_path() -> Path:
    """The compiled loop, built now if this source has not been built before."""
    if not SOURCE.is_file():
        raise CLoopUnavailable("the C loop's source is missing from this installation: reinstall jvmbridge")
    source = read_regular_file(SOURCE, _SOURCE_LIMIT)
    try:
        built = trusted_path(cache_dir() / f"aesloop-{hashlib.sha256(source).hexdigest()[:16]}.so",
                             "the C loop")  # root loads it into its own process
    except (HarnessUnavailable, NotTrusted) as e:
        raise CLoopUnavailable(str(e)) from None
    if built.is_file():
        return built
    compiler = _compiler()
    with tempfile.TemporaryDirectory(prefix="jvmbridge-cc-") as scratch:  # 0700, in no user's $TMPDIR (launch)
        partial = Path(scratch) / built.name
        done = run([str(compiler), "-O2", "-shared", "-fPIC", "-o", str(partial), str(SOURCE), "-lcrypto"],
                   capture_output=True, text=True)
        if done.returncode != 0:
            if "openssl/" in done.stderr and "No such file" in done.stderr:
                raise CLoopUnavailable("no OpenSSL headers to build the C loop; Debian: apt install libssl-dev")
            last = done.stderr.strip().splitlines()[-1:] or ["no output"]
            raise CLoopUnavailable(f"the C loop did not build: {last[0]}")
        # Whole or not at all, and only the compiler's own output, never a file put in its place.
        try:
            replace_whole(built, read_regular_file(partial, _LIBRARY_LIMIT, own=True))
        except (OSError, ValueError) as e:
            raise CLoopUnavailable(f"the C loop's build {partial}: {e}") from None
    try:
        return trusted_path(built, "the C loop")  # again, now it is there: root loads it into its own process
    except NotTrusted as e:
        raise CLoopUnavailable(str(e)) from None


def _compiler() -> Path:
    """$CC, else cc or gcc; CLoopUnavailable if none, or as root one another user can change."""
    try:  # gcc's own programs (as, ld) come from the launcher's PATH: folders root alone can change
        compiler = (find_program(os.environ.get("CC") or "cc", "the C compiler")
                    or (None if "CC" in os.environ else find_program("gcc", "the C compiler")))
    except NotTrusted as e:
        raise CLoopUnavailable(str(e)) from None
    if not compiler:
        raise CLoopUnavailable(f"no C compiler ({os.environ.get('CC') or 'cc'}) to build the C loop; "
                               "Debian: apt install gcc libssl-dev")
    return compiler


def load(path: Path) -> ctypes.CDLL:
    library = ctypes.CDLL(str(path))
    library.aesloop_cpuinfo.restype = library.aesloop_openssl_version.restype = ctypes.c_char_p
    library.aesloop_run.restype = ctypes.c_int64
    library.aesloop_run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_int)]
    return library
