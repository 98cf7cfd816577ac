"""Wire helpers of the OpenAI-compatible judge: request bodies, reply parsing, failure
classification, PII redaction (see :mod:`monitors.judges.openai`)."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
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
_ENDPOINT_FAILURES = frozenset({"timeout", "connect_error", "rate_limited", "server_error"})
_ENDPOINT_STATUSES = frozenset({401, 403, 404})  # wrong key / URL: every call would fail
#: statuses a server uses to reject a response_format (llama-cpp-python's server: 500)
_FORMAT_REJECTED = frozenset({400, 422, 500})
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


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


class _HTTPError(JudgeError):
    """A JudgeError that came with an HTTP status (the breaker weighs 401/403/404)."""

    def __init__(self, reason: str, detail: str, call: JudgeCall, status: int) -> None:
        super().__init__(reason, detail, call)
        self.status = status


def _error_for(exc: BaseException, call: JudgeCall) -> JudgeError:
    """The bounded judge_error reason of a failed HTTP attempt."""
    import httpx  # the attempt was an httpx request: already imported

    status: int | None = None
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        reason = "connect_error"
    elif isinstance(exc, httpx.TimeoutException | TimeoutError):
        reason = "timeout"
    elif isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        detail = f"HTTP {status}: {exc.response.text[:200]}"
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
    if status is not None:
        return _HTTPError(reason, detail[:300], call, status)
    return JudgeError(reason, detail[:300], call)


def _content(data: Mapping[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """The message content with any ```json fence removed, or the problem with it."""
    try:
        choice = data["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        return "", ("invalid_json", "no choices[0].message in the completion")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        refusal = message.get("refusal")
        return "", ("invalid_json", f"empty content (refusal: {refusal!r})"[:300])
    content = content.strip()
    fenced = _FENCE.match(content)
    if fenced:
        content = fenced.group(1)
    if choice.get("finish_reason") == "length":
        try:
            json.loads(content)
        except json.JSONDecodeError:
            return content, ("invalid_json", "truncated at max_tokens (finish_reason=length)")
    return content, None


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
) -> dict[str, Any]:
    """The chat-completions body asking for `output`'s JSON in response format `fmt`."""
    schema = output.model_json_schema()
    body: dict[str, Any] = {"model": model, "temperature": 0, "stream": False}
    if fmt != "json_schema":  # the schema goes into the prompt
        hint = _SCHEMA_HINT.format(json.dumps(schema, separators=(",", ":")))
        messages = [{"role": "system", "content": messages[0]["content"] + hint}, *messages[1:]]
    body["messages"] = messages
    if fmt == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", output.__name__)[:64]
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
