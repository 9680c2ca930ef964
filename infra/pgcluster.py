"""A throwaway PostgreSQL server for tests.

:func:`postgres_url` yields a connection URL: ``$DATABASE_URL`` when it is set, else a
fresh cluster of the machine's own PostgreSQL (``initdb``/``pg_ctl`` on ``PATH`` or under
``/usr/lib/postgresql/*/bin``) in a temporary directory — trust authentication, loopback
only on a free port, its unix socket inside the directory, ``fsync=off`` for speed —
stopped and deleted on exit. As root the server runs as the ``postgres`` OS user
(PostgreSQL refuses to run as root). With no system binaries, the ``pgserver`` wheel's
bundled server is used; with neither, :class:`PostgresUnavailableError` is raised —
never a silent skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import psycopg

DBNAME: Final = "shengji_test"
SUPERUSER: Final = "postgres"
BIN_GLOBS: Final = (
    "/usr/lib/postgresql/*/bin",
    "/usr/local/pgsql/bin",
    "/usr/pgsql-*/bin",
    "/opt/homebrew/opt/postgresql@*/bin",
    "/usr/local/opt/postgresql@*/bin",
)
_START_ATTEMPTS: Final = 3
_SETTINGS: Final = (
    "listen_addresses = '127.0.0.1'",
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    "max_connections = 200",
    "shared_buffers = 32MB",
    "log_min_messages = warning",
)


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL server could be had: the tests that need one must fail, not skip."""


@dataclass(frozen=True, slots=True)
class _RunAs:
    """Who runs the server's programs: ourselves, or (as root) the ``postgres`` user."""

    uid: int | None = None
    gid: int | None = None

    def run(self, cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if self.uid is not None:
            kwargs.update(user=self.uid, group=self.gid, extra_groups=[])
        return subprocess.run(
            list(cmd), check=True, capture_output=True, text=True, timeout=60, **kwargs
        )


def find_bin_dir(search_path: str | None = None, globs: Sequence[str] = BIN_GLOBS) -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: ``PATH`` first, else the newest
    of the usual install locations; None when there is none."""
    initdb = shutil.which("initdb", path=search_path)
    if initdb is not None:
        folder = Path(initdb).resolve().parent
        if (folder / "pg_ctl").exists():
            return folder
    found: list[Path] = []
    for pattern in globs:
        found += [Path(p) for p in glob.glob(pattern)]
    usable = [p for p in found if (p / "initdb").exists() and (p / "pg_ctl").exists()]
    return max(usable, key=_version_key) if usable else None


def _version_key(path: Path) -> tuple[int, ...]:
    digits = "".join(c if c.isdigit() else " " for c in str(path)).split()
    return tuple(int(d) for d in digits)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def postgres_url(
    environ: Mapping[str, str] | None = None,
    *,
    bin_dir: Path | None = None,
    search_path: str | None = None,
    globs: Sequence[str] = BIN_GLOBS,
    allow_pgserver: bool = True,
) -> Iterator[str]:
    """Yield a PostgreSQL URL: ``DATABASE_URL`` of ``environ`` (default ``os.environ``)
    if set, else a throwaway cluster's (see the module docstring). ``bin_dir``,
    ``search_path``, ``globs`` and ``allow_pgserver`` choose how a server is found."""
    env = os.environ if environ is None else environ
    url = env.get("DATABASE_URL", "").strip()
    if url:
        yield url
        return
    folder = bin_dir or find_bin_dir(search_path, globs)
    if folder is not None:
        with throwaway_cluster(folder) as url:
            yield url
        return
    if allow_pgserver:
        with _pgserver_cluster() as url:
            yield url
        return
    raise PostgresUnavailableError(
        "no PostgreSQL server for the tests: DATABASE_URL is not set, no initdb/pg_ctl "
        f"was found on PATH or under {', '.join(globs)}, and the pgserver fallback is "
        "off; install PostgreSQL (apt-get install postgresql) or set DATABASE_URL"
    )


@dataclass(frozen=True, slots=True)
class Cluster:
    """A running throwaway cluster (:func:`throwaway_server`) that a fault test may stop
    and start again: same data, same port, so clients reconnect to the same URL."""

    url: str
    port: int
    bin_dir: Path
    data: Path
    log: Path
    run_as: _RunAs

    def stop(self) -> None:
        """Stop (``-m fast``: every connection is cut, commits are kept). Not
        ``immediate``: this cluster runs with ``synchronous_commit = off``, so a crash
        would lose commits already acknowledged, which a production server does not."""
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self.run_as.run(
                [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"]
            )

    def start(self) -> None:
        """Start again on the same port (waits until it accepts connections)."""
        cmd = [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log)]
        self.run_as.run([*cmd, "-w", "-t", "30", "-o", f"-p {self.port}", "start"])

    def restart(self) -> None:
        self.stop()
        self.start()


@contextmanager
def throwaway_cluster(bin_dir: Path) -> Iterator[str]:
    """A new cluster from ``bin_dir``'s programs, deleted on exit; yields its URL."""
    with throwaway_server(bin_dir) as cluster:
        yield cluster.url


def server_bin_dir() -> Path:
    """``initdb``/``pg_ctl`` of the machine, else the ``pgserver`` wheel's bundled ones."""
    folder = find_bin_dir()
    if folder is not None:
        return folder
    try:
        import pgserver  # noqa: PLC0415 - optional

        bundled = Path(pgserver.__file__).parent / "pginstall" / "bin"
    except ImportError:
        bundled = None
    if bundled is None or not (bundled / "pg_ctl").exists():
        raise PostgresUnavailableError("no initdb/pg_ctl for a throwaway cluster")
    return bundled


@contextmanager
def throwaway_server(
    bin_dir: Path | None = None, settings: Sequence[str] = ()
) -> Iterator[Cluster]:
    """A new cluster (``bin_dir``, else :func:`server_bin_dir`), deleted on exit — never
    ``$DATABASE_URL``'s server, so a test may stop and restart it (:class:`Cluster`).
    ``settings``: more ``postgresql.conf`` lines (a bench's
    ``shared_preload_libraries = 'pg_stat_statements'``)."""
    bin_dir = bin_dir or server_bin_dir()
    run_as = _RunAs()
    parent: str | None = None
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(SUPERUSER)
        except KeyError:
            raise PostgresUnavailableError(
                "running as root, and there is no 'postgres' OS user to run the server as"
            ) from None
        run_as = _RunAs(entry.pw_uid, entry.pw_gid)
        parent = "/tmp" if Path("/tmp").is_dir() else None  # reachable by that user
    root = Path(tempfile.mkdtemp(prefix="shengji-pg-", dir=parent))
    data, sock, log = root / "data", root / "sock", root / "server.log"
    started = False
    try:
        sock.mkdir()
        if run_as.uid is not None:
            assert run_as.gid is not None
            for path in (root, sock):
                os.chown(path, run_as.uid, run_as.gid)
        _initdb(run_as, bin_dir, data)
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n".join((*_SETTINGS, *settings, f"unix_socket_directories = '{sock}'", ""))
            )
        port = _start(run_as, bin_dir, data, log)
        started = True
        _create_database(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres")
        url = f"postgresql://{SUPERUSER}@127.0.0.1:{port}/{DBNAME}"
        yield Cluster(url, port, bin_dir, data, log, run_as)
    finally:
        if started:
            _stop(run_as, bin_dir, data)
        shutil.rmtree(root, ignore_errors=True)


def _stop(run_as: _RunAs, bin_dir: Path, data: Path) -> None:
    """Stop the server at once (nothing in it is worth a clean shutdown)."""
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        run_as.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"])


def _initdb(run_as: _RunAs, bin_dir: Path, data: Path) -> None:
    cmd = [
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        SUPERUSER,
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-locale",
        "--no-sync",
    ]
    try:
        run_as.run(cmd)
    except subprocess.CalledProcessError as e:
        raise PostgresUnavailableError(f"initdb failed: {e.stderr or e.stdout}") from e


def _start(run_as: _RunAs, bin_dir: Path, data: Path, log: Path) -> int:
    """Start the server on a free loopback port (retried if another process takes it)."""
    error = ""
    for _ in range(_START_ATTEMPTS):
        port = _free_port()
        cmd = [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-w",
            "-t",
            "30",
            "-o",
            f"-p {port}",
            "start",
        ]
        try:
            run_as.run(cmd)
            return port
        except subprocess.CalledProcessError as e:
            error = (e.stderr or e.stdout or "") + _tail(log)
            _stop(run_as, bin_dir, data)  # in case it came up after pg_ctl gave up waiting
            time.sleep(0.1)
    raise PostgresUnavailableError(f"pg_ctl start failed: {error}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def _create_database(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
        try:  # FILE_COPY (PostgreSQL 15+) is the quicker copy with fsync off
            conn.execute(f"CREATE DATABASE {DBNAME} STRATEGY FILE_COPY")
        except psycopg.errors.SyntaxError:
            conn.execute(f"CREATE DATABASE {DBNAME}")


@contextmanager
def _pgserver_cluster() -> Iterator[str]:
    """The ``pgserver`` wheel's bundled PostgreSQL (as root it runs the server as an OS
    user ``pgserver`` that it creates). Deleted on exit."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            from pgserver.postgres_server import get_server  # noqa: PLC0415 - optional
    except ImportError:
        raise PostgresUnavailableError(
            "no PostgreSQL server for the tests: DATABASE_URL is not set, no initdb/pg_ctl "
            "was found, and the pgserver package is not installed (pip install pgserver)"
        ) from None
    root = Path(tempfile.mkdtemp(prefix="shengji-pgserver-"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = get_server(root / "data", cleanup_mode="delete")
        try:
            server.psql(f"CREATE DATABASE {DBNAME};")
            yield server.get_uri(DBNAME)
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
