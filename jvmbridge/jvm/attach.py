"""HotSpot's attach protocol spoken from Python, as jcmd does (attachListener_linux.cpp), running
nothing of the JVM's own installation, which may be anyone's program.

As root, a forked child drops to the JVM's uid and gid first, so the JVM's owner gains nothing from
us. SIGQUIT goes only to a JVM catching it (-Xrs would be killed), through its pidfd, so a reused
pid gets nothing; replies are read up to MAX_REPLY_BYTES."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.jvm.printflags import MAX_TEXT_BYTES
from jvmbridge.jvm.process import ProcessChanged, TrackedProcess
from jvmbridge.jvm.procroot import OutsideRoot, open_inside
from jvmbridge.trust.bounded import read_at_most, read_by

# jcmd's own wait is 10 s too.
SOCKET_WAIT_SECONDS = 10.0
PROTOCOL_VERSION = b"1"
# What the reply's reader, printflags, takes.
MAX_REPLY_BYTES = MAX_TEXT_BYTES


class AttachError(RuntimeError):
    """The JVM could not be attached to, or refused the command: one line saying why."""


@dataclass(frozen=True)
class Target:
    """A process as the attach needs it, from /proc/PID/status."""
    process: TrackedProcess
    ns_pid: int  # as the JVM sees itself (NSpid's innermost): the socket's and trigger's name
    uid: int  # effective uid and gid, as this host sees them
    gid: int
    catches_sigquit: bool

    @property
    def pid(self) -> int:  # as this host sees it
        return self.process.pid

    @classmethod
    def of(cls, process: TrackedProcess) -> Target:
        fields = {}
        try:
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                fields[key] = value.split()
            process.ensure_same()  # what was read is the found process's
        except FileNotFoundError:
            raise AttachError("no such process") from None
        except ProcessChanged as e:
            raise AttachError(str(e)) from None
        caught = int(fields["SigCgt"][0], 16)
        return cls(process=process, ns_pid=int(fields.get("NSpid", [process.pid])[-1]), uid=int(fields["Uid"][1]),
                   gid=int(fields["Gid"][1]), catches_sigquit=bool(caught & (1 << (signal.SIGQUIT - 1))))


def jcmd(process: int | TrackedProcess, command: str, timeout: float = 30.0) -> str:
    """What ``jcmd PID COMMAND`` prints; AttachError otherwise. A bare pid: whoever has it now."""
    if isinstance(process, int):
        try:
            tracked = TrackedProcess(process)
        except (OSError, ProcessChanged):  # none, or it ended while being found
            raise AttachError("no such process") from None
        try:
            return jcmd(tracked, command, timeout)
        finally:
            tracked.close()
    target = Target.of(process)
    _clear_squatters(target)
    reply = _as_target(target, lambda: _attach_and_send(target, b"jcmd", command.encode()), timeout)
    code, _, output = reply.decode(errors="replace").partition("\n")
    if code.strip() != "0":
        said = output.strip().splitlines()
        raise AttachError(f"the JVM answered {code.strip() or 'nothing'}" + (f": {said[0]}" if said else ""))
    return output


def code_list(process: int | TrackedProcess, timeout: float = 30.0) -> str:
    """`jcmd PID Compiler.codelist` (JDK 9+): each compiled method, its level and state."""
    return jcmd(process, "Compiler.codelist", timeout)


def _clear_squatters(target: Target) -> None:
    """As root: remove another user's entries at the JVM's socket names in its sticky /tmp (the JVM
    could never open its socket); entries of its uid stay, as may another JVM's (:func:`_named_for_another`)."""
    if os.geteuid() != 0:
        return
    try:
        tmp, _ = open_inside(Path(f"/proc/{target.pid}/root"), "/tmp")
    except (OutsideRoot, OSError):
        return  # the attaching child says why it cannot reach it
    try:
        target.process.ensure_same()  # the /tmp opened is the found process's
        for name in (f".java_pid{target.ns_pid}", f".java_pid{target.ns_pid}.tmp"):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):  # a folder: the child says so
                owner = os.stat(name, dir_fd=tmp, follow_symlinks=False).st_uid
                if owner != target.uid and not _named_for_another(tmp, target, owner):
                    os.unlink(name, dir_fd=tmp)
    except ProcessChanged as e:
        raise AttachError(str(e)) from None
    finally:
        os.close(tmp)


def _named_for_another(tmp: int, target: Target, owner: int) -> bool:
    """Whether another process of ``owner`` has the target's pid in its own PID namespace and this
    /tmp: the entry is then its socket, not a squatter's."""
    folder = os.fstat(tmp)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == target.pid:
            continue
        try:
            fields = dict(line.partition(":")[::2] for line in Path(f"/proc/{entry.name}/status").read_text().splitlines())
            if int(fields["Uid"].split()[1]) != owner or int(fields.get("NSpid", entry.name).split()[-1]) != target.ns_pid:
                continue
            theirs, _ = open_inside(Path(f"/proc/{entry.name}/root"), "/tmp")
        except (OSError, OutsideRoot, KeyError, ValueError, IndexError):  # gone, or not readable as a process's
            continue
        try:
            seen = os.fstat(theirs)
        finally:
            os.close(theirs)
        if (seen.st_dev, seen.st_ino) == (folder.st_dev, folder.st_ino):
            return True
    return False


def _as_target(target: Target, work, timeout: float) -> bytes:
    """``work()``'s bytes, done in a forked child with the target's uid and gid when we are root."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: nothing here may return into the caller's code
        os.close(read_end)
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(target.gid)
                os.setuid(target.uid)  # real, effective and saved: no way back
            answer = b"R" + work()
        except BaseException as e:  # noqa: B036 - every failure becomes the parent's one line
            answer = b"E" + str(e).encode(errors="replace")
        try:
            while answer:
                answer = answer[os.write(write_end, answer):]
        finally:
            os._exit(0)
    os.close(write_end)
    limit = 1 + MAX_REPLY_BYTES  # the child's "R" and the reply it read
    answer = None
    try:
        deadline = time.monotonic() + timeout
        answer = read_at_most(lambda size: read_by(read_end, size, deadline), limit)
    except TimeoutError:
        pass
    finally:
        os.close(read_end)
        if answer is None or len(answer) > limit:
            os.kill(child, signal.SIGKILL)  # our own child, not yet waited for: its pid is still its own
        os.waitpid(child, 0)
    return _reply(answer, limit, timeout)


def _reply(answer: bytes | None, limit: int, timeout: float) -> bytes:
    """The work's bytes as the child sent them; AttachError past ``limit``, at timeout or on failure."""
    if answer is None:
        raise AttachError(f"no answer within {timeout:g} s")
    if len(answer) > limit:
        raise AttachError(f"the attaching process sent more than {MAX_REPLY_BYTES // 2**20} MiB: not read further")
    if answer[:1] != b"R":
        raise AttachError(answer[1:].decode(errors="replace") or "the attaching process died")
    return answer[1:]


def _attach_and_send(target: Target, command: bytes, argument: bytes) -> bytes:
    """In the child: find or start the JVM's attach listener, send one command, read the reply."""
    try:
        tmp, _ = open_inside(Path(f"/proc/{target.pid}/root"), "/tmp")
    except (OutsideRoot, PermissionError) as e:
        raise AttachError(f"cannot reach the JVM's /tmp: {e.strerror or e}") from None
    try:
        target.process.ensure_same()  # the /tmp opened is the found process's
        found = _socket(tmp, target)
        listener = found if found is not None else _start_listener(tmp, target)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.settimeout(SOCKET_WAIT_SECONDS)
                # Through our descriptor of the socket file: no path looked up again.
                connection.connect(f"/proc/self/fd/{listener}")
                connection.sendall(b"\0".join([PROTOCOL_VERSION, command, argument, b"", b"", b""]))
                reply = read_at_most(connection.recv, MAX_REPLY_BYTES)
        finally:
            os.close(listener)
    finally:
        os.close(tmp)
    if len(reply) > MAX_REPLY_BYTES:
        raise AttachError(f"the JVM's reply is larger than {MAX_REPLY_BYTES // 2**20} MiB: not read further")
    return reply


def _socket(tmp: int, target: Target) -> int | None:
    """A descriptor of the JVM's socket file, or None while there is none; refused if not a socket
    of the JVM's owner."""
    try:
        fd = os.open(f".java_pid{target.ns_pid}", os.O_PATH | os.O_NOFOLLOW, dir_fd=tmp)
    except FileNotFoundError:
        return None
    found = os.fstat(fd)
    if not stat.S_ISSOCK(found.st_mode) or found.st_uid != target.uid:
        os.close(fd)
        raise AttachError(f"/tmp/.java_pid{target.ns_pid} is not the JVM's socket "
                          f"(mode {stat.filemode(found.st_mode)}, owner uid {found.st_uid}, the JVM's {target.uid})")
    return fd


def _start_listener(tmp: int, target: Target) -> int:
    """The trigger file, SIGQUIT, and the wait for the socket; the trigger is removed after."""
    if not target.catches_sigquit:
        raise AttachError("the process does not catch SIGQUIT (started with -Xrs, or not yet up), "
                          "which would end it: not signalled")
    where, name = _trigger(tmp, target)
    try:
        target.process.send_signal(signal.SIGQUIT)
        deadline = time.monotonic() + SOCKET_WAIT_SECONDS
        pause = 0.02
        while time.monotonic() < deadline:
            time.sleep(pause)
            found = _socket(tmp, target)
            if found is not None:
                return found
            pause = min(pause * 2, 0.2)
    finally:
        try:
            with contextlib.suppress(FileNotFoundError):  # another attacher of this JVM (jcmd, a check) took it
                os.unlink(name, dir_fd=where)
        finally:
            os.close(where)
    raise AttachError(f"the JVM opened no attach socket within {SOCKET_WAIT_SECONDS:g} s of SIGQUIT "
                      "(started with -XX:+DisableAttachMechanism?)")


def _trigger(tmp: int, target: Target) -> tuple[int, str]:
    """Create ``.attach_pid<pid>`` in the JVM's cwd, else its /tmp (heeded only if owned by its owner)."""
    name = f".attach_pid{target.ns_pid}"
    places = []
    try:
        places.append(os.open(f"/proc/{target.pid}/cwd", os.O_PATH | os.O_DIRECTORY))
    except OSError:
        pass
    places.append(os.dup(tmp))
    try:
        target.process.ensure_same()  # the working directory opened is the found process's
    except ProcessChanged:
        for where in places:
            os.close(where)
        raise
    chosen = None
    for where in places:
        if chosen is None and _created(name, where):
            chosen = where
        else:
            os.close(where)
    if chosen is None:
        raise AttachError(f"cannot create {name} in the JVM's working directory or /tmp")
    return chosen, name


def _created(name: str, where: int) -> bool:
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=where)
    except OSError:
        return False
    owner = os.fstat(fd).st_uid
    os.close(fd)
    return owner == os.geteuid()
