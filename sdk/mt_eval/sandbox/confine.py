"""The ``unshare`` fallback's inside half: build the sandbox's file system and drop privileges, then run
the guest. Standard library only (it runs with ``python -I -S``), as the namespaces' root.

    unshare --user --map-root-user --mount --pid --net … -- python -I -S confine.py SPEC_JSON -- COMMAND…

SPEC_JSON gives ``root`` (an empty host directory to build in), ``read_only``, ``symlinks``, ``locked`` (and
``locked_files``, those of them made as files),
``gateway`` (host directory, or null), ``network`` ("none", "gateway" or "host"), ``workdir`` and ``env``:
the same view bubblewrap builds from the same `FileSystemView`. Capabilities are dropped with util-linux
``setpriv`` (no new privileges, empty bounding set, securebits that keep root from regaining any).
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import socket
import struct
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_libc = ctypes.CDLL(None, use_errno=True)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(*(None if v is None else v.encode() for v in (source, target, fstype)), flags,
                   None if data is None else data.encode()) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {source} on {target}: {os.strerror(error)}")


def bind(source: str, target: str, *, read_only: bool = True) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))  # SIOCSIFFLAGS: IFF_UP


def build(spec: dict) -> None:  # type: ignore[type-arg]
    root = spec["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    os.makedirs(f"{root}/tmp", exist_ok=True)
    mount("tmpfs", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    for path in spec["read_only"]:
        bind(path, root + path)
    for target, link in spec["symlinks"]:
        os.symlink(target, root + link)
    os.makedirs(f"{root}/dev", exist_ok=True)
    mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID, "mode=0755")
    for device in DEVICES:
        if os.path.exists(f"/dev/{device}"):
            bind(f"/dev/{device}", f"{root}/dev/{device}", read_only=False)
    os.makedirs(f"{root}/proc", exist_ok=True)
    mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV)
    files = set(spec.get("locked_files", ()))
    cover = f"{root}/dev/.locked"  # an unreadable file to bind over a locked one inside an exposed directory
    os.close(os.open(cover, os.O_CREAT | os.O_WRONLY, 0))
    for path in spec["locked"]:  # (a file as a file: writing it fails "Read-only file system", not "Is a directory")
        if path in files and os.path.lexists(root + path):  # inside an exposed directory (a run's corpus)
            mount(cover, root + path, None, MS_BIND)
            mount(None, root + path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
            continue
        if path in files:
            os.makedirs(os.path.dirname(root + path), exist_ok=True)
            os.close(os.open(root + path, os.O_CREAT | os.O_WRONLY, 0))
        else:
            os.makedirs(root + path, exist_ok=True)
        os.chmod(root + path, 0)
    os.unlink(cover)  # (its binds stay; /dev is not remounted read-only, which a file in use but unlinked blocks)
    if spec["gateway"]:
        bind(spec["gateway"], f"{root}/run/mt-eval")
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    if spec["network"] != "host":
        loopback_up()
    os.chroot(root)
    os.chdir(spec["workdir"])


def main(argv: list[str]) -> int:  # returns only on a usage error
    if len(argv) < 3 or argv[1] != "--":
        print("usage: confine.py SPEC_JSON -- COMMAND…", file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    try:
        build(spec)
    except OSError as exc:
        print(f"mt-eval sandbox (unshare): cannot build the sandbox: {exc}", file=sys.stderr)
        return 126
    drop = ["/usr/bin/setpriv", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
            "--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked"]
    os.execve(drop[0], [*drop, "--", *argv[2:]], spec["env"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
