"""The write-ahead log's writer: append-only framed records with group commit.

The in-memory event log is the truth while the process runs; this file is what makes it
survive a crash. The contract: a record whose `sync()` returned is on disk, and after a crash
(kill -9, power loss) the file reopens to a prefix of the appended records that contains every
synced one and never a corrupted record. A file that can't honour that (a damaged record, or
acknowledged records missing) is refused with `WalDamagedError`, never silently shortened.

The file's format, its ack file and how a file is judged are `fakeapi.storage.walformat`;
this module only writes by them. Records are never rewritten; the only mutation besides
appending is cutting an unacknowledged torn final write at open (logged at INFO), or the
batch of a failed write. The ack file is updated after every fsync.

Threading model: `append()` only buffers (no I/O) and is called on the event loop thread. A
single background flusher task hands everything pending to one dedicated worker thread, which
writes it with one `write` and one `fdatasync`, then wakes every `sync()` waiter it covered
(group commit). Any write or fsync error poisons the log: the partial batch is cut from the
file, the pending waiters and every later `append`/`sync` fail with `WalError` (after a failed
fsync the page cache can't be trusted for that data: PostgreSQL's "fsync failure is a PANIC").
`resume()` probes whether the file takes writes again (space freed, device back) and, if it
does, lets appending continue after the last durable record.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import heapq
import itertools
import logging
import os
import threading
from pathlib import Path

from fakeapi.storage import walformat
from fakeapi.storage.walformat import (
    DEFAULT_HEADER,
    FORMAT,
    Ack,
    Damage,
    Preamble,
    WalDamagedError,
    WalError,
    ack_bytes,
    ack_path,
    fsync_dir,
    lock,
    new_file,
    preamble,
    read_ack,
    record_header,
    scan_data,
    torn_at_creation,
    write_ack,
    write_all,
)

__all__ = ["PROBE_BYTES", "WalClosedError", "WriteAheadLog"]

log = logging.getLogger(__name__)

PROBE_BYTES = 64 * 1024
"""Bytes `resume()` writes (then cuts) past the durable end to learn whether writes work."""


class WalClosedError(WalError):
    """The WAL was closed; nothing can be appended or synced past what is already durable."""


def _datasync(fd: int) -> None:
    """Flush file data (and the size, which `fdatasync` includes) to stable storage."""
    os.fdatasync(fd)


def _read_all(fd: int, size: int) -> bytes:
    """Read the first `size` bytes of the file (pread may return less per call)."""
    chunks: list[bytes] = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, size - pos, pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class WriteAheadLog:
    """Append-only record file with group-commit `sync()`; use `WriteAheadLog.open()`."""

    def __init__(self, *, path: Path, fd: int, offset: int, seq: int,
                 pre: Preamble | None = None) -> None:
        self._path = path
        self._fd = fd
        self._preamble = pre or Preamble(FORMAT, DEFAULT_HEADER, len(new_file()))
        self._buf_lock = threading.Lock()  # guards _buf/_seq between loop and worker thread
        self._io_lock = threading.Lock()  # serializes writes; held across write + fsync
        self._buf: list[bytes] = []
        self._seq = seq  # last appended
        self._durable_seq = seq  # last written + fsync'd
        self._durable_offset = offset  # file size covering _durable_seq
        self._flush_count = 0
        self._error: BaseException | None = None
        self._closed = False
        self._fd_closed = False
        self._ack_fd = os.open(ack_path(path), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._ack_failed = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="wal-flush"
        )
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # heap by seq
        self._tiebreak = itertools.count()
        self._flusher: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None

    # -- opening and recovery -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *,
             header: bytes = DEFAULT_HEADER) -> tuple[WriteAheadLog, list[bytes]]:
        """Open or create the WAL at `path`; return it and every valid event record, in order.

        A new file gets `header` (a JSON object with "format": 2) as its header record; an
        existing file keeps the header (or the format) it has. An unacknowledged torn final
        write is cut (and logged at INFO), so new appends continue cleanly; any other damage
        raises WalDamagedError and leaves the file as it is.
        """
        path = Path(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            lock(fd, path)
            records, offset, pre = cls._recover(path, fd, header)
        except BaseException:
            os.close(fd)
            raise
        os.lseek(fd, offset, os.SEEK_SET)
        return cls(path=path, fd=fd, offset=offset, seq=len(records), pre=pre), records

    @staticmethod
    def _recover(path: Path, fd: int, header: bytes) -> tuple[list[bytes], int, Preamble]:
        """Read the file, cut an unacknowledged torn tail, and return (records, end offset,
        preamble)."""
        size = os.fstat(fd).st_size
        data = _read_all(fd, size)
        if len(data) != size:
            raise WalError(f"{path}: short read during recovery ({len(data)} of {size} bytes)")
        if torn_at_creation(data):
            # Only a file torn while being created (a prefix of the magic and header, or zero
            # fill) is ours to reinitialize; anything else is refused untouched below.
            ack = read_ack(path)
            if ack is not None and ack.records:
                raise WalDamagedError(path, Damage(
                    offset=0, record=1, why=f"the file header is gone, but {ack.records} "
                    "records were acknowledged", intact_after=0, acknowledged=True, torn=False))
            if data:
                log.info("%s: reinitializing a torn file header (%d bytes)", path, size)
            first = new_file(header)
            pre = preamble(first, path)
            os.ftruncate(fd, 0)
            os.pwrite(fd, first, 0)
            _datasync(fd)
            fsync_dir(path.parent)
            write_ack(path, Ack(len(first), 0))
            return [], len(first), pre
        pre = preamble(data, path)
        scan = scan_data(data, read_ack(path), pre)
        damage = scan.damage
        if damage is not None:
            if not damage.torn:
                raise WalDamagedError(path, damage)
            log.info("%s: cut an unacknowledged torn final write of %d bytes at offset %d "
                     "after %d records (%s)", path, size - scan.good_end, scan.good_end,
                     len(scan.records), damage.why)
            os.ftruncate(fd, scan.good_end)
            _datasync(fd)
        if damage is not None or scan.ack is None or scan.ack != Ack(scan.good_end,
                                                                       len(scan.records)):
            write_ack(path, Ack(scan.good_end, len(scan.records)))
        return scan.records, scan.good_end, pre

    # -- the file's header ----------------------------------------------------------------

    @property
    def format(self) -> int:
        """The file's format (1: no header; 2)."""
        return self._preamble.format

    @property
    def header(self) -> bytes | None:
        """The header record's payload as the file holds it (None in format 1)."""
        return self._preamble.header

    # -- appending and group commit -------------------------------------------------------

    @property
    def path(self) -> Path:
        """Where the log lives."""
        return self._path

    @property
    def last_seq(self) -> int:
        """Sequence number of the last appended record (0 if none)."""
        return self._seq

    @property
    def durable_seq(self) -> int:
        """Every record up to this sequence number is written and fsync'd."""
        return self._durable_seq

    @property
    def flush_count(self) -> int:
        """How many write+fsync batches have been done (for group-commit statistics)."""
        return self._flush_count

    def append(self, payload: bytes) -> int:
        """Buffer one record (no I/O) and return its 1-based sequence number in the file."""
        length = len(payload)
        limit = walformat.MAX_RECORD_BYTES  # read per call, as the readers do
        if length > limit:
            raise ValueError(f"WAL record of {length} bytes exceeds {limit}")
        header = record_header(payload)
        with self._buf_lock:
            if self._closed or self._error is not None:
                raise self._unusable()
            self._buf.append(header)
            self._buf.append(payload)
            self._seq += 1
            return self._seq

    async def sync(self, seq: int) -> None:
        """Return once record `seq` (and all before it) is written and fsync'd.

        Concurrent callers share one write+fsync; raises `WalError` if the flush fails.
        """
        if seq <= self._durable_seq:
            return
        if seq > self._seq:
            raise ValueError(f"cannot sync seq {seq}: only {self._seq} records appended")
        if self._error is not None or self._fd_closed:
            raise self._unusable()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (seq, next(self._tiebreak), fut))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_loop(), name="wal-flusher")
        await fut

    async def _flush_loop(self) -> None:
        """Flush while anyone waits; appends made during one flush ride in the next one."""
        try:
            while self._waiters:
                await self._flush_and_wake()
        except asyncio.CancelledError:
            for _, _, fut in self._waiters:
                fut.cancel()
            self._waiters.clear()
            raise
        except Exception:  # already delivered to every waiter by _flush_and_wake
            pass
        finally:
            self._flusher = None

    async def _flush_and_wake(self) -> None:
        """Run one write+fsync in the worker thread, then resolve the waiters it covered."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._flush_blocking)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail_waiters(exc)
            raise
        self._wake()

    def _wake(self) -> None:
        """Resolve every waiter whose record is durable."""
        waiters, durable = self._waiters, self._durable_seq
        while waiters and waiters[0][0] <= durable:
            fut = heapq.heappop(waiters)[2]
            if not fut.done():
                fut.set_result(None)

    def _fail_waiters(self, exc: BaseException) -> None:
        """Fail every waiter whose record is not durable (the others are woken normally)."""
        self._wake()
        while self._waiters:
            fut = heapq.heappop(self._waiters)[2]
            if not fut.done():
                err = WalError(f"WAL flush failed: {exc}")
                err.__cause__ = exc
                fut.set_exception(err)

    def _flush_blocking(self) -> int:
        """Write and fsync everything buffered (in one write); return the durable seq."""
        with self._io_lock:
            if self._error is not None:
                raise self._unusable()
            with self._buf_lock:
                chunks, upto = self._buf, self._seq
                if not chunks:
                    return self._durable_seq
                if self._fd_closed:
                    raise WalClosedError(f"{self._path} is closed")
                self._buf = []
            data = b"".join(chunks)
            try:
                write_all(self._fd, data)
                _datasync(self._fd)
            except BaseException as exc:
                self._poison(exc)
                raise
            self._durable_offset += len(data)
            self._durable_seq = upto
            self._flush_count += 1
            self._record_ack()
            return upto

    def _record_ack(self) -> None:
        """Note in the ack file how far the file is now acknowledged (before anyone is told)."""
        try:
            os.pwrite(self._ack_fd, ack_bytes(Ack(self._durable_offset, self._durable_seq)), 0)
        except OSError as exc:  # only a hint for recovery: the records themselves are durable
            if not self._ack_failed:
                log.warning("%s: could not update the ack file: %r", self._path, exc)
            self._ack_failed = True
        else:
            self._ack_failed = False

    def _poison(self, exc: BaseException) -> None:
        """Mark the log failed and best-effort cut the partial batch so the file stays clean."""
        self._error = exc
        log.error("%s: WAL write/fsync failed, appends are refused until it is writable: %r",
                  self._path, exc)
        try:
            os.ftruncate(self._fd, self._durable_offset)
            os.lseek(self._fd, self._durable_offset, os.SEEK_SET)
        except OSError as trunc_exc:  # recovery at the next open cuts whatever is left
            log.error("%s: could not cut the failed batch: %r", self._path, trunc_exc)

    @property
    def error(self) -> BaseException | None:
        """The I/O error that stopped appends (None while the log is writable)."""
        return self._error

    async def resume(self) -> bool:
        """After an I/O error: probe whether the file takes writes again; if it does, drop
        what was appended after the last durable record and accept appends again."""
        if self._error is None:
            return True
        if self._fd_closed:
            return False
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._resume_blocking)

    def _resume_blocking(self) -> bool:
        with self._io_lock:
            if self._error is None:
                return True
            end = self._durable_offset
            try:
                os.ftruncate(self._fd, end)
                os.lseek(self._fd, end, os.SEEK_SET)
                write_all(self._fd, bytes(PROBE_BYTES))
                _datasync(self._fd)
                os.ftruncate(self._fd, end)
                _datasync(self._fd)
                os.lseek(self._fd, end, os.SEEK_SET)
            except OSError as exc:
                try:  # a torn probe is zero fill, which recovery cuts anyway
                    os.ftruncate(self._fd, end)
                except OSError:
                    pass
                log.debug("%s: still not writable: %r", self._path, exc)
                return False
            with self._buf_lock:
                self._buf = []
                self._seq = self._durable_seq
                self._error = None
            self._record_ack()
            log.warning("%s: writable again after %d durable records", self._path,
                        self._durable_seq)
            return True

    def _unusable(self) -> WalError:
        """The error to raise once the log is failed or closed."""
        if self._error is not None:
            err = WalError(f"{self._path}: WAL failed earlier: {self._error}")
            err.__cause__ = self._error
            return err
        return WalClosedError(f"{self._path} is closed")

    # -- shutdown -------------------------------------------------------------------------

    def flush_now(self) -> None:
        """Synchronously write and fsync everything appended so far (no event loop needed);
        an I/O error is a `WalError` (caused by it), as `sync()` raises it."""
        try:
            self._flush_blocking()
        except WalError:
            raise
        except OSError as exc:
            raise WalError(f"WAL flush failed: {exc}") from exc

    async def close(self) -> None:
        """Flush and fsync everything pending, wake all waiters, and close the file.

        Idempotent; concurrent callers share one close, which finishes even if they are
        cancelled.
        """
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        """The body of `close()`, run once."""
        if self._fd_closed:
            return
        with self._buf_lock:
            self._closed = True
        loop = asyncio.get_running_loop()
        try:
            if self._error is None:
                await self._flush_and_wake()
        finally:
            if self._flusher is not None:
                await asyncio.gather(self._flusher, return_exceptions=True)
            self._fail_waiters(WalClosedError(f"{self._path} closed"))
            await loop.run_in_executor(self._executor, self._close_fd)
            self._executor.shutdown(wait=False)

    def close_now(self) -> None:
        """Synchronous `close()` for shutdown paths without a running event loop."""
        if self._fd_closed:
            return
        with self._buf_lock:
            self._closed = True
        try:
            if self._error is None:
                self._flush_blocking()
        finally:
            self._close_fd()
            self._executor.shutdown(wait=False)

    def _close_fd(self) -> None:
        """Close the file descriptors once (which also releases the flock); a clean close
        leaves a durable ack file."""
        with self._io_lock:
            if not self._fd_closed:
                self._fd_closed = True
                if self._error is None:
                    try:
                        os.fsync(self._ack_fd)
                    except OSError as exc:
                        log.warning("%s: could not sync the ack file: %r", self._path, exc)
                for fd in (self._ack_fd, self._fd):
                    try:
                        os.close(fd)
                    except OSError as exc:
                        if exc.errno != errno.EBADF:
                            raise

    def __repr__(self) -> str:
        return f"<WriteAheadLog {self._path} seq={self._seq} durable={self._durable_seq}>"
