"""Wire helpers of the OpenAI-compatible judge: request bodies, reply parsing, failure
classification, PII redaction (see :mod:`monitors.judges.openai`)."""

from __future__ import annotations

import ipaddress
import json
import logging
import zlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr, ValidationError

from monitors.judges.base import JudgeCall, JudgeError

if TYPE_CHECKING:  # httpx is imported where a request is made: the sidecar without an
    import httpx  # OpenAI judge does not load it (~5 MiB of RSS with its CLI's imports)

__all__ = ["ResponseFormat", "build_payload", "is_loopback", "redact", "strict_schema"]

ResponseFormat = Literal["json_schema", "json_object_schema", "json_object", "none"]
_DOWNGRADE: dict[str, ResponseFormat] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
}
#: reasons that say the endpoint is unhealthy (they count against the circuit breaker)
_ENDPOINT_FAILURES = frozenset(
    {"timeout", "connect_error", "rate_limited", "server_error", "response_too_large"}
)
_ENDPOINT_STATUSES = frozenset({401, 403, 404})  # wrong key / URL: every call would fail
#: statuses a server uses to reject a response_format (llama-cpp-python's server: 500)
_FORMAT_REJECTED = frozenset({400, 422, 500})
_FENCE = "```"
#: default cap on a response body (decoded bytes): a chat completion is a few KiB
MAX_RESPONSE_BYTES = 4 << 20
_SCHEMA_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def is_loopback(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@cache
def _pii() -> Any:
    from detectors.pii import PiiDetector  # its RE2 patterns compile on first use

    return PiiDetector()


def redact(text: str) -> str:
    """Mask e-mails, phone numbers, payment cards, IBANs and US SSNs (detectors.pii)."""
    for category, start, end, _key, _evidence in reversed(_pii().find(text)):
        text = f"{text[:start]}[{category} redacted]{text[end:]}"  # from the end: spans hold
    return text


def strict_schema(schema: Any) -> Any:
    """OpenAI strict mode: every object closed (`additionalProperties: false`) with all
    its properties required; `default` dropped (unsupported there). Returns a copy."""
    if isinstance(schema, list):
        return [strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "default":
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        else:
            out[key] = strict_schema(value)
    if out.get("type") == "object" and isinstance(out.get("properties"), dict):
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


_SCHEMA_HINT = (
    "\n\nAnswer with one JSON object and nothing else. It must validate against this "
    "JSON schema:\n{}"
)
_CORRECTION = (
    "That reply was rejected: {}. Answer again with only the JSON object that the schema requires."
)


class _FormatUnsupported(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class _BadBody(Exception):
    """A 2xx whose body is not a chat completion: retried like a 502 from a proxy."""

    def __init__(self, detail: str) -> None:
        import httpx  # raised after an httpx request: already imported

        super().__init__(detail)
        self.response: httpx.Response = httpx.Response(502)


class _TooLarge(Exception):
    """A body over max_response_bytes: not read further, not retried."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


async def read_capped(resp: httpx.Response, cap: int) -> bytes:
    """The body of a streamed response, decoded, at most `cap` bytes; `_TooLarge` as soon
    as it would pass `cap` (a declared Content-Length over it: before reading anything).
    gzip / deflate are inflated here with a bounded output, so a compression bomb costs
    `cap` too; any other content coding is refused (`_BadBody`)."""
    coding = resp.headers.get("content-encoding", "identity").strip().lower()
    inflate: Any = None
    if coding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif coding == "deflate":
        inflate = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped (or gzip)
    elif coding not in ("", "identity"):
        raise _BadBody(f"unsupported content-encoding {coding[:40]!r}")
    declared = resp.headers.get("content-length", "")
    if inflate is None and declared.isdigit() and len(declared) < 20 and int(declared) > cap:
        raise _TooLarge(f"Content-Length {declared} over max_response_bytes={cap}")
    parts: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_raw():
        if inflate is not None:
            try:
                chunk = inflate.decompress(chunk, cap - size + 1)
            except zlib.error as exc:
                raise _BadBody(f"{coding} body does not inflate: {exc}") from None
        size += len(chunk)
        if size > cap:
            raise _TooLarge(f"body over max_response_bytes={cap}")
        parts.append(chunk)
    return b"".join(parts)


def buffered(resp: httpx.Response, body: bytes) -> httpx.Response:
    """A read response holding `body` (already decoded, capped) for the status checks."""
    import httpx  # the response came from httpx: already imported

    drop = ("content-encoding", "content-length", "transfer-encoding")
    headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() not in drop]
    return httpx.Response(resp.status_code, headers=headers, content=body, request=resp.request)


def snippet(resp: httpx.Response, limit: int = 200) -> str:
    """The first `limit` characters of a (capped, buffered) body, for an error detail."""
    return resp.content[: 4 * limit].decode("utf-8", "replace")[:limit]


def strip_queries(text: str) -> str:
    """`text` with the query string of every http(s) URL in it cut (string operations)."""
    out: list[str] = []
    i = scan = 0
    while True:
        start = text.find("http", scan)
        if start < 0:
            out.append(text[i:])
            return "".join(out)
        if not text.startswith(("://", "s://"), start + 4):
            scan = start + 4
            continue
        end = start
        while end < len(text) and not (text[end].isspace() or text[end] in "'\"<>"):
            end += 1
        url = text[start:end]
        cut = min((p for p in (url.find("?"), url.find("#")) if p >= 0), default=len(url))
        out.append(text[i:start])
        out.append(url[:cut] + ("?[query redacted]" if "?" in url else ""))
        i = scan = end


class Scrubber:
    """Removes what must never reach a log line or an error detail: URL query strings and
    the values of the key and the secret headers and query parameters."""

    def __init__(self, secrets: list[str]) -> None:
        # longest first, so a secret that contains another is removed whole
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return strip_queries(text)


def public_url(url: str) -> str:
    """`url` without user info, query or fragment (what repr and logs may show)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class _QueryFreeLog(logging.Filter):
    """On httpx's logger: its request lines (`HTTP Request: POST <url> ...`) without the
    URL's query string, whatever level a host application gives that logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                strip_queries(str(a)) if "://" in str(a) else a for a in record.args
            )
        elif "://" in str(record.msg):
            record.msg = strip_queries(str(record.msg))
        return True


_QUERY_FREE_LOG = _QueryFreeLog()


def quiet_url_logging() -> None:
    """Install the query-stripping filter on httpx's logger (idempotent)."""
    logger = logging.getLogger("httpx")
    if _QUERY_FREE_LOG not in logger.filters:
        logger.addFilter(_QUERY_FREE_LOG)


class _HTTPError(JudgeError):
    """A JudgeError that came with an HTTP status (the breaker weighs 401/403/404)."""

    def __init__(self, reason: str, detail: str, call: JudgeCall, status: int) -> None:
        super().__init__(reason, detail, call)
        self.status = status


def _error_for(
    exc: BaseException, call: JudgeCall, scrub: Callable[[str], str] = strip_queries
) -> JudgeError:
    """The bounded judge_error reason of a failed HTTP attempt; its detail scrubbed of
    URL query strings and secrets (httpx puts the request URL into its messages)."""
    import httpx  # the attempt was an httpx request: already imported

    status: int | None = None
    detail = f"{type(exc).__name__}: {str(exc)[:1000]}"
    if isinstance(exc, _TooLarge):
        reason = "response_too_large"
    elif isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        reason = "connect_error"
    elif isinstance(exc, httpx.TimeoutException | TimeoutError):
        reason = "timeout"
    elif isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        detail = f"HTTP {status}: {snippet(exc.response)}"
        if status == 429:
            reason = "rate_limited"
        elif status == 408:
            reason = "timeout"
        elif status >= 500:
            reason = "server_error"
        else:
            reason = "client_error"
    elif isinstance(exc, httpx.TransportError | _BadBody):  # dropped connection, garbage
        reason = "server_error"
    else:
        reason = "internal_error"
    detail = scrub(detail)[:300]
    if status is not None:
        return _HTTPError(reason, detail, call, status)
    return JudgeError(reason, detail, call)


def tokens(usage: Any, name: str) -> int:
    """A token count of the reply's `usage`, 0 when absent or not a sane integer."""
    value: Any = usage.get(name) if isinstance(usage, dict) else None
    digits = isinstance(value, str) and 0 < len(value) <= 12 and value.isdecimal()
    if digits or (isinstance(value, float) and 0 <= value < 1 << 40):
        value = int(value)
    return value if type(value) is int and 0 <= value < 1 << 40 else 0


def _content(data: Mapping[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """The message content with any ```json fence removed, or the problem with it."""
    choices = data.get("choices")
    choice: Any = choices[0] if isinstance(choices, list) and choices else None
    message: Any = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return "", ("invalid_json", "no choices[0].message in the completion")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        refusal = message.get("refusal")
        if refusal is not None:
            refusal = refusal[:200] if isinstance(refusal, str) else type(refusal).__name__
        return "", ("invalid_json", f"empty content (refusal: {refusal!r})"[:300])
    content = unfence(content.strip())
    if choice.get("finish_reason") == "length" and parse_json(content)[1] is not None:
        return content, ("invalid_json", "truncated at max_tokens (finish_reason=length)")
    return content, None


def unfence(content: str) -> str:
    """`content` without a Markdown code fence around it (```` ```json … ``` ````), else
    unchanged. Plain string operations: linear in the length, whatever the reply."""
    if len(content) < 2 * len(_FENCE) or not (
        content.startswith(_FENCE) and content.endswith(_FENCE)
    ):
        return content
    inner = content[len(_FENCE) : -len(_FENCE)]
    return inner.removeprefix("json").strip()


def parse_json(text: str) -> tuple[Any, str | None]:
    """(value, None), or (None, why it is not JSON): never raises for hostile text (deep
    nesting, a number too long for int, a lone surrogate)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at char {exc.pos}"
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        return None, str(exc)[:120]


def _summarise(exc: ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()[:5]]
    return "; ".join(parts)[:300]


def build_payload(
    model: str,
    messages: list[dict[str, str]],
    output: type[BaseModel],
    fmt: ResponseFormat,
    strict: bool = True,
    max_tokens: int | None = None,
    seed: int | None = None,
    temperature: float = 0.0,
) -> dict[str, Any]:
    """The chat-completions body asking for `output`'s JSON in response format `fmt`."""
    schema = output.model_json_schema()
    body: dict[str, Any] = {"model": model, "temperature": temperature or 0, "stream": False}
    if fmt != "json_schema":  # the schema goes into the prompt
        hint = _SCHEMA_HINT.format(json.dumps(schema, separators=(",", ":")))
        messages = [{"role": "system", "content": messages[0]["content"] + hint}, *messages[1:]]
    body["messages"] = messages
    if fmt == "json_schema":
        name = "".join(c if c in _SCHEMA_NAME_CHARS else "_" for c in output.__name__[:64])
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": name,
                "schema": strict_schema(schema) if strict else schema,
                "strict": strict,
            },
        }
    elif fmt == "json_object_schema":
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif fmt == "json_object":
        body["response_format"] = {"type": "json_object"}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if seed is not None:
        body["seed"] = seed
    return body


def section(value: Any, cls: type[Any]) -> Any:
    """A settings section given as an instance or as a mapping of its fields."""
    return value if isinstance(value, cls) else cls(**dict(value or {}))


def endpoint(
    base_url: str,
    model: str,
    api_key: SecretStr | str | None,
    azure: Mapping[str, str] | None,
    extra_headers: Mapping[str, str] | None,
    extra_query: Mapping[str, str] | None,
) -> tuple[str, dict[str, str], dict[str, str]]:
    """URL, headers and query of the chat-completions endpoint (OpenAI or Azure style)."""
    key = SecretStr(api_key) if isinstance(api_key, str) else api_key
    headers = {"User-Agent": "ragpulse-judge"}
    query = dict(extra_query or {})
    url = f"{base_url}/chat/completions"
    if azure is not None:  # deployment path, api-version query, api-key header
        deployment = azure.get("deployment", model)
        url = f"{base_url}/openai/deployments/{deployment}/chat/completions"
        query.setdefault("api-version", azure.get("api_version", "2024-10-21"))
        if key is not None:
            headers["api-key"] = key.get_secret_value()
    elif key is not None:
        headers["Authorization"] = f"Bearer {key.get_secret_value()}"
    headers.update(extra_headers or {})
    return url, headers, query
