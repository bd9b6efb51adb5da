"""On-disk write-ahead log for the event log: append-only framed records with group commit.

The in-memory event log is the truth while the process runs; this file is what makes it
survive a crash. The contract: a record whose `sync()` returned is on disk, and after a crash
(kill -9, power loss) the file reopens to a prefix of the appended records that contains every
synced one and never a corrupted record.

File format (all integers little-endian)::

    file   := FILE_MAGIC record*
    record := RECORD_MAGIC  u32 length  u32 crc  payload[length]

`FILE_MAGIC` is ``b"FAKEWAL1"``. `RECORD_MAGIC` is 4 fixed bytes, so zero-filled or garbage
tails never parse as records. `crc` is CRC-32 of the payload seeded with the length, so neither a
damaged payload nor a damaged length field can validate. Records are never rewritten; the only
mutation besides appending is cutting a torn tail at open, or after a failed write.

Threading model: `append()` only buffers (no I/O) and is called on the event loop thread. A
single background flusher task hands everything pending to one dedicated worker thread, which
writes it with one `write` and one `fdatasync`, then wakes every `sync()` waiter it covered
(group commit). Any write or fsync error poisons the log: the pending waiters and every later
`append`/`sync` fail with `WalError`, because after a failed fsync the kernel's page cache can
no longer be trusted (same as PostgreSQL's "fsync failure is a PANIC"). The process should then
restart and recover from the file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import fcntl
import heapq
import itertools
import logging
import os
import struct
import threading
import zlib
from pathlib import Path

__all__ = [
    "FILE_MAGIC",
    "MAX_RECORD_BYTES",
    "RECORD_HEADER",
    "RECORD_MAGIC",
    "WalClosedError",
    "WalCorruptError",
    "WalError",
    "WriteAheadLog",
    "encode_record",
]

log = logging.getLogger(__name__)

FILE_MAGIC = b"FAKEWAL1"
RECORD_MAGIC = b"\xe7EV\x01"
RECORD_HEADER = struct.Struct("<4sII")  # magic, payload length, crc32(payload, seed=length)
MAX_RECORD_BYTES = 64 * 1024 * 1024  # far above the apiserver's 1.5 MB object limit

_pack_header = RECORD_HEADER.pack
_unpack_header = RECORD_HEADER.unpack_from
_HEADER_SIZE = RECORD_HEADER.size
_crc32 = zlib.crc32


class WalError(Exception):
    """The WAL can't guarantee durability (I/O error, or it is closed)."""


class WalClosedError(WalError):
    """The WAL was closed; nothing can be appended or synced past what is already durable."""


class WalCorruptError(WalError):
    """The file is not a WAL of this format, so recovery refuses to touch it."""


def encode_record(payload: bytes) -> bytes:
    """One framed record (header + payload) exactly as it is stored on disk."""
    return _pack_header(RECORD_MAGIC, len(payload), _crc32(payload, len(payload))) + payload


def _write_all(fd: int, data: bytes) -> None:
    """Write all of `data` at the current offset, retrying short writes."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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


def _fsync_dir(path: Path) -> None:
    """Make a file's directory entry durable (needed after creating the file)."""
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _scan(data: bytes, start: int) -> tuple[list[bytes], int]:
    """Parse records from `start`; return the payloads and the offset after the last good one."""
    records: list[bytes] = []
    pos = start
    end = len(data)
    while pos + _HEADER_SIZE <= end:
        magic, length, crc = _unpack_header(data, pos)
        body = pos + _HEADER_SIZE
        if magic != RECORD_MAGIC or length > MAX_RECORD_BYTES or body + length > end:
            break
        payload = data[body : body + length]
        if _crc32(payload, length) != crc:
            break
        records.append(payload)
        pos = body + length
    return records, pos


def _intact_records_after(data: bytes, start: int) -> int:
    """Count records that still validate somewhere after a damaged spot (a corruption hint)."""
    pos = data.find(RECORD_MAGIC, start + 1)
    while pos != -1:
        found, _ = _scan(data, pos)
        if found:
            return len(found)
        pos = data.find(RECORD_MAGIC, pos + 1)
    return 0


class WriteAheadLog:
    """Append-only record file with group-commit `sync()`; use `WriteAheadLog.open()`."""

    def __init__(self, *, path: Path, fd: int, offset: int, seq: int) -> None:
        self._path = path
        self._fd = fd
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
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="wal-flush"
        )
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []  # heap by seq
        self._tiebreak = itertools.count()
        self._flusher: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None

    # -- opening and recovery -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path) -> tuple[WriteAheadLog, list[bytes]]:
        """Open or create the WAL at `path`; return it and every valid record, in order.

        A torn tail (short header or payload, bad checksum, trailing zeros or garbage) is cut
        at the end of the last good record and logged, so new appends continue cleanly.
        """
        path = Path(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise WalError(f"{path} is already open by another WAL") from exc
            records, offset = cls._recover(path, fd)
        except BaseException:
            os.close(fd)
            raise
        os.lseek(fd, offset, os.SEEK_SET)
        return cls(path=path, fd=fd, offset=offset, seq=len(records)), records

    @staticmethod
    def _recover(path: Path, fd: int) -> tuple[list[bytes], int]:
        """Read the file, cut any torn tail, and return (records, end offset of good data)."""
        size = os.fstat(fd).st_size
        data = _read_all(fd, size)
        if len(data) != size:
            raise WalError(f"{path}: short read during recovery ({len(data)} of {size} bytes)")
        magic_len = len(FILE_MAGIC)
        if data[:magic_len] != FILE_MAGIC:
            # Only a file torn while being created (a prefix of the magic, or zero fill) is ours
            # to reinitialize; anything else is some other file and we refuse to touch it.
            if not (FILE_MAGIC.startswith(data) or data.count(0) == len(data)):
                raise WalCorruptError(f"{path} is not a fakeapi WAL file (bad file header)")
            if data:
                log.warning("%s: reinitializing a torn file header (%d bytes)", path, size)
            os.ftruncate(fd, 0)
            os.pwrite(fd, FILE_MAGIC, 0)
            _datasync(fd)
            _fsync_dir(path.parent)
            return [], magic_len
        records, good_end = _scan(data, magic_len)
        if good_end < size:
            WriteAheadLog._cut_tail(path=path, fd=fd, data=data, good_end=good_end, n=len(records))
        return records, good_end

    @staticmethod
    def _cut_tail(*, path: Path, fd: int, data: bytes, good_end: int, n: int) -> None:
        """Truncate at `good_end`, logging what was cut; keep a copy if it looks like more than
        a torn tail (intact records after the damage)."""
        cut = len(data) - good_end
        intact = _intact_records_after(data, good_end)
        if intact:
            saved = path.with_name(f"{path.name}.corrupt-{good_end}")
            saved.write_bytes(data[good_end:])
            log.error(
                "%s: damaged record at offset %d after %d good records; %d intact records follow"
                " (acknowledged ones would mean media corruption); cut %d bytes, saved to %s",
                path,
                good_end,
                n,
                intact,
                cut,
                saved,
            )
        else:
            log.warning(
                "%s: cut torn tail of %d bytes at offset %d after %d good records",
                path,
                cut,
                good_end,
                n,
            )
        os.ftruncate(fd, good_end)
        _datasync(fd)

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
        if length > MAX_RECORD_BYTES:
            raise ValueError(f"WAL record of {length} bytes exceeds {MAX_RECORD_BYTES}")
        header = _pack_header(RECORD_MAGIC, length, _crc32(payload, length))
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
                _write_all(self._fd, data)
                _datasync(self._fd)
            except BaseException as exc:
                self._poison(exc)
                raise
            self._durable_offset += len(data)
            self._durable_seq = upto
            self._flush_count += 1
            return upto

    def _poison(self, exc: BaseException) -> None:
        """Mark the log failed and best-effort cut the partial batch so the file stays clean."""
        self._error = exc
        log.error("%s: WAL write/fsync failed, log is now unusable: %r", self._path, exc)
        try:
            os.ftruncate(self._fd, self._durable_offset)
            os.lseek(self._fd, self._durable_offset, os.SEEK_SET)
        except OSError as trunc_exc:  # recovery at the next open cuts whatever is left
            log.error("%s: could not cut the failed batch: %r", self._path, trunc_exc)

    def _unusable(self) -> WalError:
        """The error to raise once the log is failed or closed."""
        if self._error is not None:
            err = WalError(f"{self._path}: WAL failed earlier: {self._error}")
            err.__cause__ = self._error
            return err
        return WalClosedError(f"{self._path} is closed")

    # -- shutdown -------------------------------------------------------------------------

    def flush_now(self) -> None:
        """Synchronously write and fsync everything appended so far (no event loop needed)."""
        self._flush_blocking()

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
        """Close the file descriptor once (which also releases the flock)."""
        with self._io_lock:
            if not self._fd_closed:
                self._fd_closed = True
                try:
                    os.close(self._fd)
                except OSError as exc:
                    if exc.errno != errno.EBADF:
                        raise

    def __repr__(self) -> str:
        return f"<WriteAheadLog {self._path} seq={self._seq} durable={self._durable_seq}>"
