"""``replay --isolate``: move this process into a fresh network namespace with only loopback.

The network block of the pytest plugin is a socket patch: C extensions, subprocesses and raw
sockets go around it. A Linux network namespace does not: the kernel gives the namespace its
own interfaces, and a new one has only ``lo``, so nothing in it reaches any other address,
whatever the code. :func:`isolate` moves the calling process into one before the proxy starts;
the proxy, the replay origin's child process and the wrapped command (everything started
afterwards) inherit it, and loopback is brought up so they reach each other.

How: ``unshare(CLONE_NEWUSER | CLONE_NEWNET)``, which an unprivileged user may do where
unprivileged user namespaces are allowed (the user keeps its own uid and gid, mapped to
themselves, so files keep their owners and the command runs as the same user); if that is
refused, ``unshare(CLONE_NEWNET)`` alone, which a privileged process (``CAP_SYS_ADMIN``) may
do. ``os.unshare`` on Python 3.12, the C library's ``unshare(2)`` through ``ctypes`` on 3.11.
Then ``lo`` is set up with the ``SIOCSIFFLAGS`` ioctl (no ``ip`` binary needed), and the
namespace is checked to hold ``lo`` alone. ``unshare`` of a user namespace needs a process with
one thread, so this runs before anything starts one. Every failure is one
:class:`~replayproxy._errors.UsageError` line saying why and what to do.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable

from replayproxy._errors import UsageError

__all__ = ["CLONE_NEWNET", "CLONE_NEWUSER", "isolate", "isolate_replay", "only_loopback"]

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = struct.Struct("16sh22x")  # struct ifreq: the name, then ifr_flags in the union

_HOW_TO_ALLOW = (
    "unprivileged user namespaces may be disabled (sysctl user.max_user_namespaces, "
    "kernel.unprivileged_userns_clone, or kernel.apparmor_restrict_unprivileged_userns on "
    "Ubuntu 23.10+), or a container's seccomp profile refuses unshare(2); allow them, run as "
    "a user with CAP_SYS_ADMIN, or leave out --isolate"
)


def _unshare_call() -> Callable[[int], None]:
    """``os.unshare`` (3.12+), or ``unshare(2)`` of the C library through ctypes (3.11)."""
    call: Callable[[int], None] | None = getattr(os, "unshare", None)
    if call is not None:
        return call
    libc = ctypes.CDLL(None, use_errno=True)

    def unshare(flags: int) -> None:
        if libc.unshare(ctypes.c_int(flags)) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return unshare


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def _map_self(uid: int, gid: int) -> None:
    """Map this user and group to themselves in the new user namespace (user_namespaces(7):
    ``setgroups`` must be denied before an unprivileged process may write ``gid_map``)."""
    _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    with contextlib.suppress(FileNotFoundError):  # kernels before 3.19 have no such file
        _write("/proc/self/setgroups", "deny\n")
    _write("/proc/self/gid_map", f"{gid} {gid} 1\n")


def _enter(unshare: Callable[[int], None]) -> None:
    uid, gid = os.geteuid(), os.getegid()
    try:
        unshare(CLONE_NEWUSER | CLONE_NEWNET)
    except OSError as first:
        try:
            unshare(CLONE_NEWNET)  # privileged, without a user namespace
        except OSError:
            raise UsageError(
                f"--isolate cannot create a network namespace (unshare: "
                f"{first.strerror or first}); {_HOW_TO_ALLOW}"
            ) from None
        return
    try:
        _map_self(uid, gid)
    except OSError as e:
        raise UsageError(
            f"--isolate cannot map user {uid} into its namespace ({e.strerror or e}); "
            f"{_HOW_TO_ALLOW}"
        ) from None


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = _IFREQ.pack(b"lo", 0)
        flags = _IFREQ.unpack(fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | _IFF_UP))


def only_loopback() -> bool:
    """Whether this process's network namespace has no interface but ``lo``."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def isolate() -> None:
    """Move this process into a new network namespace with only loopback, up. Raises a
    one-line :class:`UsageError` where that cannot be done (not Linux, namespaces refused,
    threads already running)."""
    if not sys.platform.startswith("linux"):
        raise UsageError(
            f"--isolate needs Linux network namespaces; this is {sys.platform}: leave out "
            "--isolate (replay never contacts the upstream in record mode none)"
        )
    if threading.active_count() > 1:
        # unshare(CLONE_NEWUSER) refuses a multi-threaded process (EINVAL).
        raise UsageError(
            f"--isolate must run before any thread starts; {threading.active_count()} run"
        )
    _enter(_unshare_call())
    try:
        _loopback_up()
    except OSError as e:
        if e.errno != errno.EPERM:
            raise
        raise UsageError(
            f"--isolate cannot bring up loopback in its namespace ({e.strerror})"
        ) from None
    if not only_loopback():
        names = ", ".join(name for _, name in socket.if_nameindex())
        raise UsageError(f"--isolate: the new network namespace is not empty ({names})")


def isolate_replay(command: tuple[str, ...], record_mode: str) -> None:
    """``replay --isolate``: refuse what cannot work offline, then :func:`isolate`."""
    if record_mode != "none":
        raise UsageError(
            f"--isolate replays offline and cannot record: --record-mode {record_mode} needs "
            "the network (record without --isolate, then replay with it)"
        )
    if not command:
        raise UsageError(
            "--isolate needs -- COMMAND: nothing outside the namespace could reach the proxy "
            "(replayproxy replay --isolate CASSETTE -- pytest)"
        )
    isolate()
