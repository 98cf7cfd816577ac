"""OpenAI-compatible chat-completions judge (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp).

One logical call = `complete(system, user, output, prompt_version)`: POST
/chat/completions at temperature 0, ask for JSON constrained by `output`'s JSON schema,
validate the content with pydantic. Failures are classified by `stream.retry.classify`
(timeouts, connect errors, 5xx → retry with jittered exponential backoff; 429 → retry
after the server's Retry-After; other 4xx → give up) and content failures (not JSON →
`invalid_json`, JSON that fails the model → `schema_violation`) are retried with a
correction message. Bounded by `max_attempts` and `max_total_s`; after that `JudgeError`
with a bounded reason and the call's accounting — never a made-up answer.

`response_format`: `json_schema` (OpenAI structured outputs; vLLM, Ollama, llama.cpp's
llama-server), `json_object_schema` (`{"type": "json_object", "schema": ...}`:
llama-cpp-python's server), `json_object` (JSON mode; the schema goes into the system
prompt) or `none`. A 400/422/500 naming the response format downgrades once per step
(json_schema → json_object_schema → json_object) and the client remembers it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import time
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from monitors.judges.base import JudgeCall, JudgeError, JudgeReply, register_judge
from monitors.judges.breaker import CircuitBreaker
from stream.retry import Backoff, classify, retry_after_s

__all__ = ["OpenAIJudge", "ResponseFormat", "is_loopback", "redact", "strict_schema"]

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
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


def _section(value: Any, cls: type[Any]) -> Any:
    return value if isinstance(value, cls) else cls(**dict(value or {}))


@register_judge("openai")
class OpenAIJudge:
    """An LLMJudge over an OpenAI-compatible `/chat/completions` endpoint (see docs/judges.md)."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: SecretStr | str | None = None,
        timeout_s: float = 30.0,
        max_attempts: int = 3,
        max_total_s: float = 90.0,
        concurrency: int = 4,
        breaker: CircuitBreaker | Mapping[str, Any] | None = None,
        backoff: Backoff | Mapping[str, Any] | None = None,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        response_format: ResponseFormat = "json_schema",
        strict: bool = True,
        max_tokens: int | None = 1024,
        seed: int | None = None,
        azure: Mapping[str, str] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, str] | None = None,
        redact_pii: bool | None = None,
    ) -> None:
        if max_attempts < 1 or concurrency < 1 or timeout_s <= 0 or max_total_s <= 0:
            raise ValueError("max_attempts, concurrency, timeout_s, max_total_s must be > 0")
        if response_format not in ("json_schema", "json_object_schema", "json_object", "none"):
            raise ValueError(f"unknown response_format {response_format!r}")
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url.rstrip("/")
        self.timeout_s, self.max_attempts, self.max_total_s = timeout_s, max_attempts, max_total_s
        self.breaker: CircuitBreaker = _section(breaker, CircuitBreaker)
        self.backoff: Backoff = _section(backoff, Backoff)
        self.prices = {m: dict(p) for m, p in (prices or {}).items()}
        self.response_format: ResponseFormat = response_format
        self.strict, self.max_tokens, self.seed = strict, max_tokens, seed
        self.redact_pii = not is_loopback(base_url) if redact_pii is None else redact_pii
        key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        headers = {"User-Agent": "ragpulse-judge"}
        query = dict(extra_query or {})
        self._url = f"{self.base_url}/chat/completions"
        if azure is not None:  # deployment path, api-version query, api-key header
            deployment = azure.get("deployment", model)
            self._url = f"{self.base_url}/openai/deployments/{deployment}/chat/completions"
            query.setdefault("api-version", azure.get("api_version", "2024-10-21"))
            if key is not None:
                headers["api-key"] = key.get_secret_value()
        elif key is not None:
            headers["Authorization"] = f"Bearer {key.get_secret_value()}"
        headers.update(extra_headers or {})
        self._sem = asyncio.Semaphore(concurrency)
        self._http = httpx.AsyncClient(
            headers=headers,
            params=query,
            timeout=timeout_s,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    def __repr__(self) -> str:  # never the key
        return f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.prices.get(self.model)
        if price is None:
            return 0.0
        return (
            prompt_tokens * price.get("prompt_per_1k", 0.0)
            + completion_tokens * price.get("completion_per_1k", 0.0)
        ) / 1000.0

    async def complete(
        self, system: str, user: str, output: type[M], prompt_version: str
    ) -> JudgeReply[M]:
        call = JudgeCall(judge=self.name, model=self.model, prompt_version=prompt_version)
        if self.breaker.state == "open":  # fail fast, without queueing for a slot
            raise JudgeError("circuit_open", f"retry in {self.breaker.retry_in_s:.1f}s", call)
        async with self._sem:
            if not self.breaker.allow():
                raise JudgeError("circuit_open", "breaker open or probing", call)
            started = time.monotonic()
            try:
                parsed = await self._attempts(system, user, output, call, started)
            except JudgeError as err:
                status = err.status if isinstance(err, _HTTPError) else None
                if err.reason in _ENDPOINT_FAILURES or status in _ENDPOINT_STATUSES:
                    self.breaker.record_failure()
                else:  # the endpoint answered; the request or the model was at fault
                    self.breaker.record_success()
                raise
            except BaseException:
                self.breaker.release()
                raise
            finally:
                call.latency_s = time.monotonic() - started
                call.cost_usd = self.cost_usd(call.prompt_tokens, call.completion_tokens)
            self.breaker.record_success()
        return JudgeReply(parsed=parsed, call=call)

    async def _attempts(
        self, system: str, user: str, output: type[M], call: JudgeCall, started: float
    ) -> M:
        if self.redact_pii:
            system, user = redact(system), redact(user)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        deadline = started + self.max_total_s
        delays = self.backoff.delays()
        last = JudgeError("timeout", f"no attempt within max_total_s={self.max_total_s}", call)
        tries = 0
        while tries < self.max_attempts:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise last
            tries += 1
            call.attempts += 1
            try:
                fmt = self.response_format
                data = await self._post(self._payload(messages, output, fmt), fmt, remaining)
            except _FormatUnsupported as exc:
                tries -= 1  # a downgrade does not use up the budget (at most twice per client)
                last = JudgeError("client_error", exc.detail, call)
                continue
            except Exception as exc:
                last = _error_for(exc, call)
                decision = classify(exc)
                if decision == "give_up" or tries >= self.max_attempts:
                    raise last from exc
                response = getattr(exc, "response", None)
                after = retry_after_s(response.headers) if response is not None else None
                after = after if decision == "rate_limit" else None
                await self._wait(next(delays), after, deadline, last)
                continue
            usage = data.get("usage") or {}
            call.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            call.completion_tokens += int(usage.get("completion_tokens") or 0)
            content, problem = _content(data)
            if problem is None:
                try:
                    return output.model_validate(json.loads(content))
                except json.JSONDecodeError as exc:
                    problem = ("invalid_json", f"{exc.msg} at char {exc.pos}")
                except ValidationError as exc:
                    problem = ("schema_violation", _summarise(exc))
            last = JudgeError(problem[0], problem[1], call)
            messages = [*messages[:2], {"role": "assistant", "content": content[:2000]}]
            messages.append({"role": "user", "content": _CORRECTION.format(problem[1])})
        raise last

    async def _wait(
        self, delay: float, retry_after: float | None, deadline: float, last: JudgeError
    ) -> None:
        """Back off (Retry-After wins when longer), unless that would pass the deadline."""
        if time.monotonic() + max(delay, (retry_after or 0.0) * Backoff.scale) >= deadline:
            raise last
        await Backoff.sleep(delay, retry_after)

    def _payload(
        self, messages: list[dict[str, str]], output: type[BaseModel], fmt: ResponseFormat
    ) -> dict[str, Any]:
        schema = output.model_json_schema()
        body: dict[str, Any] = {"model": self.model, "temperature": 0, "stream": False}
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
                    "schema": strict_schema(schema) if self.strict else schema,
                    "strict": self.strict,
                },
            }
        elif fmt == "json_object_schema":
            body["response_format"] = {"type": "json_object", "schema": schema}
        elif fmt == "json_object":
            body["response_format"] = {"type": "json_object"}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    async def _post(
        self, payload: dict[str, Any], fmt: ResponseFormat, remaining: float
    ) -> dict[str, Any]:
        budget = min(self.timeout_s, remaining)
        async with asyncio.timeout(budget):  # bounds a server that trickles bytes too
            resp = await self._http.post(self._url, json=payload, timeout=budget)
            await resp.aread()
        if resp.status_code in _FORMAT_REJECTED and fmt in _DOWNGRADE:
            text = resp.text.lower()
            if "response_format" in text or "json_schema" in text or "response format" in text:
                if fmt != self.response_format:  # a concurrent call has stepped down already
                    raise _FormatUnsupported(f"{fmt} rejected")
                old, self.response_format = fmt, _DOWNGRADE[fmt]
                log.warning(
                    "judge %s: response_format %s rejected (%s); using %s from now on",
                    self.name,
                    old,
                    resp.status_code,
                    self.response_format,
                )
                raise _FormatUnsupported(f"{old} rejected: {resp.text[:200]}")
        resp.raise_for_status()
        try:
            data = resp.json()
        except ValueError as exc:
            raise _BadBody(f"body is not JSON: {resp.text[:200]!r}") from exc
        if not isinstance(data, dict):
            raise _BadBody("body is not a JSON object")
        return data


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

    response = httpx.Response(502)


class _HTTPError(JudgeError):
    """A JudgeError that came with an HTTP status (the breaker weighs 401/403/404)."""

    def __init__(self, reason: str, detail: str, call: JudgeCall, status: int) -> None:
        super().__init__(reason, detail, call)
        self.status = status


def _error_for(exc: BaseException, call: JudgeCall) -> JudgeError:
    """The bounded judge_error reason of a failed HTTP attempt."""
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
