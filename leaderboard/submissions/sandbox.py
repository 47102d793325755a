"""The sandbox a script artifact's steps run in: they reach their own checkout and a scratch folder (and the command,
the blind copy), nothing else of this machine's files, and no other process; the command reaches no network.

Each step runs in new mount and PID namespaces (`unshare`), in a root of its own (`pivot_root`, the old root
unmounted): the system's programs and libraries read-only (/usr, /bin, /lib*, /etc, /opt), /dev's null, zero, full
and random devices, its working folder at `/blind/work` (the checkout, the run file, `/tmp`), and a /proc of its new
PID namespace, where it is process 1 and sees no parent. The dataset's real folder, the repository, the ledger, home
folders and caches, sockets and the parent's command line and environment are not in its root. It runs with no
capabilities and `no_new_privs` (setuid programs such as sudo gain nothing):

- run by an ordinary user, in a new user namespace as well, mapped to that user (`unshare --user --map-root-user`);
  Ubuntu 24.04 allows that once `kernel.apparmor_restrict_unprivileged_userns` is 0;
- run by root, as user nobody (65534), which owns the working folder for the run.

Two steps share the working folder (`wrap(..., offline=...)`): the **setup** (the artifact's optional `setup`
command) runs first with the machine's network, to fetch packages and weights into the checkout or `/tmp`, before the
blind copy exists and without `/blind/data`; the **command** runs with the blind copy read-only at `/blind/data` in a
new network namespace as well (`unshare --net`) whose only interface is its own loopback: nothing outside it is
reached, so nothing it reads from the blind copy can be matched against a download or sent anywhere. Where neither
mode works, `isolation()` says what is missing and `irboard reproduce` refuses the artifact (unless told
`--no-isolation`, whose outcome is never recorded).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from evaluator.errors import IrboardError, one_line

DATA = "/blind/data"  # the blind copy, inside the sandbox
WORK = "/blind/work"  # the command's working folder: checkout, run file, tmp
NOBODY = 65534
# how a reproduction record says the script was isolated (`isolation`)
USER_NAMESPACES = "user, mount and PID namespaces (unshare), no capabilities; run offline (network namespace)"
AS_NOBODY = "mount and PID namespaces (unshare) as user nobody, no capabilities; run offline (network namespace)"
NOT_ISOLATED = "none (--no-isolation): not blind"

# Run by /bin/sh as process 1 of the new namespaces: $1 the blind copy (- for none: the setup step), $2 the working
# folder, $3 who runs the command (nobody or self), $4 offline or online, then the command. The host paths it is given
# are gone from /proc/1/cmdline once it execs the command. Offline, in a network namespace of its own, its loopback
# is brought up where `ip` is installed (programs that talk to themselves over 127.0.0.1 then work).
_SETUP = r"""set -eu
data=$1 work=$2 user=$3 network=$4; shift 4
if [ "$network" = offline ] && command -v ip >/dev/null; then ip link set lo up 2>/dev/null || true; fi
root=$(mktemp -d)
# read-only; a bind of a mount whose nosuid, nodev or noexec a user namespace may not clear keeps them
read_only() { mount -o remount,bind,ro "$1" 2>/dev/null || mount -o remount,bind,ro,nosuid,nodev "$1" 2>/dev/null ||
  mount -o remount,bind,ro,nosuid,nodev,noexec "$1"; }
mount -t tmpfs -o mode=0755 irboard-sandbox "$root"
for dir in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt; do
  if [ -L "$dir" ]; then ln -s "$(readlink "$dir")" "$root$dir"
  elif [ -d "$dir" ]; then mkdir "$root$dir"; mount --rbind "$dir" "$root$dir"; read_only "$root$dir"
  fi
done
mkdir -p "$root/dev/shm" "$root/proc" "$root/tmp" "$root/blind/work"
for dev in null zero full random urandom; do touch "$root/dev/$dev"; mount --bind "/dev/$dev" "$root/dev/$dev"; done
mount -t tmpfs -o mode=1777,size=1g irboard-shm "$root/dev/shm"
if [ "$data" != - ]; then
  mkdir "$root/blind/data"
  mount --bind "$data" "$root/blind/data"
  read_only "$root/blind/data"
fi
mount --bind "$work" "$root/blind/work"
mount --bind "$work/tmp" "$root/tmp"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mkdir "$root/.old"
pivot_root "$root" "$root/.old"
cd /
umount -l /.old
rmdir /.old
mount -o remount,ro,bind /
cd /blind/work/checkout 2>/dev/null || cd /blind/work
if [ "$user" = nobody ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --inh-caps=-all --ambient-caps=-all \
    --bounding-set=-all --pdeathsig=KILL -- "$@"
fi
exec setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all --pdeathsig=KILL -- "$@"
"""


def _as_root() -> bool:
    return os.geteuid() == 0


def _unshare(offline: bool) -> list[str]:
    namespaces = ["--mount", "--pid"] if _as_root() else ["--user", "--map-root-user", "--mount", "--pid"]
    return ["unshare", *namespaces, *(["--net"] if offline else []), "--fork", "--kill-child", "--propagation",
            "private", "--"]


def wrap(argv: list[str], data: Path | None, work: Path, offline: bool = True) -> list[str]:
    """`argv` (whose paths are the sandbox's: DATA, WORK) run in the sandbox over `data` (read-only; None: no
    /blind/data, the setup step) and `work`, without network unless `offline` is False (the setup step)."""
    prepare(work)
    blind = "-" if data is None else str(data.resolve())
    return [*_unshare(offline), "/bin/sh", "-c", _SETUP, "irboard-sandbox", blind, str(work.resolve()),
            "nobody" if _as_root() else "self", "offline" if offline else "online", *argv]


def prepare(work: Path) -> None:
    """The working folder with its /tmp, owned by the sandbox's user (nobody, when run by root)."""
    work.joinpath("tmp").mkdir(exist_ok=True)
    if _as_root():
        for folder, dirs, files in os.walk(work):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.chown(name, NOBODY, NOBODY, follow_symlinks=False)


def environment() -> dict[str, str]:
    """What the command's environment holds: a path, a home and a scratch folder in the sandbox, nothing else."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": f"{WORK}/checkout", "TMPDIR": "/tmp",
            "LANG": "C.UTF-8"}


@lru_cache(maxsize=1)
def isolation() -> str:
    """How submitted code is isolated here (USER_NAMESPACES or AS_NOBODY), tried once on an empty sandbox offline (as
    the command runs); IrboardError, one line saying what is needed, where it cannot be."""
    missing = [name for name in ("unshare", "setpriv") if shutil.which(name) is None]
    if missing:
        raise IrboardError(f"running submitted code isolated needs {' and '.join(missing)} (util-linux), which this "
                           "machine lacks; install util-linux, or pass --no-isolation for a local check that is not "
                           "blind and is never recorded")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="irboard-sandbox-") as folder:
        data, work = Path(folder, "data"), Path(folder, "work")
        data.mkdir()
        work.mkdir()
        try:
            answer = subprocess.run(wrap(["true"], data, work), capture_output=True, text=True, timeout=60,
                                    stdin=subprocess.DEVNULL, env=environment(), check=False)
            lines = [line.strip() for line in answer.stderr.splitlines() if line.strip()]
            why = (one_line(lines[-1])[:200] if lines else f"exit status {answer.returncode}") \
                if answer.returncode else ""
        except (OSError, subprocess.TimeoutExpired) as error:
            why = one_line(str(error))[:200] or "no answer"
    if why:
        raise IrboardError(f"running submitted code isolated needs new {'mount, PID' if _as_root() else 'user'} and "
                           f"network namespaces, which this machine refuses ({why}; check `unshare -Urmn true`); on "
                           "Ubuntu 24.04 run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or pass "
                           "--no-isolation for a local check that is not blind and is never recorded")
    return AS_NOBODY if _as_root() else USER_NAMESPACES
