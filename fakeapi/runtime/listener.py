"""One aiohttp application on one address, for the listeners a process of components opens
of its own (the kubelet API, the health endpoints): bound on `start`, closed on `stop`."""

from __future__ import annotations

import ssl

from aiohttp import web


class AppListener:
    """Serves an application on `host:port` (0: a free port) until stopped."""

    def __init__(self, *, shutdown_timeout: float) -> None:
        self._shutdown_timeout = shutdown_timeout
        self._runner: web.AppRunner | None = None
        self.port = 0
        """The bound port (after `start()`)."""

    async def start(self, app: web.Application, host: str, port: int,
                    tls: ssl.SSLContext | None = None) -> int:
        """Listen and return the bound port."""
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=self._shutdown_timeout)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, port, ssl_context=tls).start()
        self.port = int(self._runner.addresses[0][1])
        return self.port

    async def stop(self) -> None:
        """Stop listening and close the open connections."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
