"""The sidecar's HTTP endpoints and operator actions (one part of `SidecarBase`).

:class:`Endpoints` serves `/metrics`, `/healthz` and `/readyz` (`exporters.MetricsServer`,
on its own threads) and, when `server.admin.enabled`, the operator actions behind the
bearer token: `POST /drift/rebaseline`. An action runs on the event loop, where the
pipeline lives. Its log lines keep the logger name `stream.runtime.engine`, where they
were written before this part was split out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from exporters import MetricsServer, PromFamilies
from stream.runtime.fleet import FleetDrift
from stream.runtime.settings import Settings

__all__ = ["Endpoints"]

log = logging.getLogger("stream.runtime.engine")  # unchanged since the split: log filters


class Endpoints:
    """`/metrics`, `/healthz`, `/readyz` and the admin actions of one sidecar."""

    def __init__(
        self,
        settings: Settings,
        prom: PromFamilies,
        readiness: Callable[[], tuple[bool, str]],
        fleet: FleetDrift | None,
    ) -> None:
        self.settings = settings
        self.prom = prom
        self.readiness = readiness
        self.fleet = fleet
        self.server: MetricsServer | None = None

    @staticmethod
    def _threadsafe(
        loop: asyncio.AbstractEventLoop, fn: Callable[[], Coroutine[Any, Any, Any]]
    ) -> Any:
        """Run `fn` on the event loop (where the pipeline lives) from the HTTP thread."""
        return asyncio.run_coroutine_threadsafe(fn(), loop).result(timeout=10)

    async def rebaseline(self) -> dict[str, Any]:
        """POST /drift/rebaseline: every series of the whole group takes its current level
        as the new normal (one command per partition; each owner applies it)."""
        if self.fleet is None:
            return {"rebaseline": "disabled", "partitions": 0}
        return await self.fleet.rebaseline()

    def start(self, loop: asyncio.AbstractEventLoop) -> MetricsServer:
        """Start serving (own threads); the actions run on `loop`."""
        s = self.settings
        admin = s.server.admin  # actions only when enabled, always behind the bearer token
        actions = {"/drift/rebaseline": lambda: self._threadsafe(loop, self.rebaseline)}
        self.server = MetricsServer(
            self.prom.registry, self.readiness, s.server.host, s.server.port,
            actions if admin.enabled else None,
            token=admin.token.get_secret_value() if admin.token is not None else None,
            admin_host=admin.host, admin_port=admin.port,
            max_connections=s.server.max_connections,
        ).start()  # fmt: skip
        log.info("serving /metrics on %s/metrics", self.server.url)
        if admin.enabled:
            where = self.server.admin_url or self.server.url
            log.info("admin actions (bearer token) on %s: %s", where, ", ".join(actions))
        return self.server

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
