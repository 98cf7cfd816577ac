"""Kafka connection options derived once from settings, for aiokafka clients and for faust."""

from __future__ import annotations

import logging
import ssl
from typing import TYPE_CHECKING, Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from stream.runtime.settings import KafkaSettings

if TYPE_CHECKING:  # faust is imported by the faust engine only
    import faust

__all__ = ["aiokafka_kwargs", "ensure_topics", "faust_credentials"]

log = logging.getLogger(__name__)

_TOPIC_ALREADY_EXISTS = 36


def _ssl_context(k: KafkaSettings) -> ssl.SSLContext | None:
    if k.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    ctx = ssl.create_default_context(cafile=str(k.ssl_cafile) if k.ssl_cafile else None)
    if k.ssl_certfile:
        ctx.load_cert_chain(str(k.ssl_certfile), str(k.ssl_keyfile) if k.ssl_keyfile else None)
    return ctx


def aiokafka_kwargs(k: KafkaSettings) -> dict[str, Any]:
    """Connection keyword arguments for AIOKafkaProducer/Consumer/AdminClient."""
    kwargs: dict[str, Any] = {
        "bootstrap_servers": k.bootstrap_servers.split(","),
        "security_protocol": k.security_protocol,
    }
    ctx = _ssl_context(k)
    if ctx is not None:
        kwargs["ssl_context"] = ctx
    if k.security_protocol.startswith("SASL"):
        kwargs["sasl_mechanism"] = k.sasl_mechanism
        kwargs["sasl_plain_username"] = k.sasl_username
        kwargs["sasl_plain_password"] = (
            k.sasl_password.get_secret_value() if k.sasl_password else None
        )
    return kwargs


def faust_credentials(k: KafkaSettings) -> faust.types.auth.CredentialsT | None:
    import faust

    ctx = _ssl_context(k)
    if k.security_protocol.startswith("SASL"):
        return faust.SASLCredentials(
            username=k.sasl_username,
            password=k.sasl_password.get_secret_value() if k.sasl_password else None,
            ssl_context=ctx,
            mechanism=k.sasl_mechanism,
        )
    if ctx is not None:
        return faust.SSLCredentials(ctx)
    return None


async def ensure_topics(
    k: KafkaSettings, topics: list[str] | None = None, new: list[NewTopic] | None = None
) -> None:
    """Create the topics ragpulse reads and writes when missing (idempotent): `topics` by
    name with `kafka.topic_partitions`, or `new` as given (the drift stage's topics,
    stream.runtime.fleet_topics)."""
    if new is None:
        names = topics or [k.input_topic, k.dlq_topic, k.scores_topic, k.alarms_topic]
        new = [NewTopic(n, num_partitions=k.topic_partitions, replication_factor=1) for n in names]
    admin = AIOKafkaAdminClient(**aiokafka_kwargs(k), client_id=f"{k.client_id}-admin")
    await admin.start()
    try:
        response = await admin.create_topics(new)
        for name, code, *_ in getattr(response, "topic_errors", []):
            if code not in (0, _TOPIC_ALREADY_EXISTS):
                raise RuntimeError(f"cannot create topic {name}: Kafka error code {code}")
    finally:
        await admin.close()
