"""OpenAI-compatible chat-completions judge (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp).

One logical call = `complete(system, user, output, prompt_version)`: POST
/chat/completions at temperature 0 (option `temperature`), ask for JSON constrained by
`output`'s JSON schema,
validate the content with pydantic. Failures are classified by `stream.platform.retry.classify`
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
import logging
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, SecretStr, ValidationError

from monitors.judges.base import JudgeCall, JudgeError, JudgeReply, register_judge
from monitors.judges.breaker import CircuitBreaker
from monitors.judges.openai_wire import (
    _CORRECTION,
    _DOWNGRADE,
    _ENDPOINT_FAILURES,
    _ENDPOINT_STATUSES,
    _FORMAT_REJECTED,
    MAX_RESPONSE_BYTES,
    ResponseFormat,
    Scrubber,
    _BadBody,
    _content,
    _error_for,
    _FormatUnsupported,
    _HTTPError,
    _summarise,
    buffered,
    build_payload,
    endpoint,
    is_loopback,
    parse_json,
    public_url,
    quiet_url_logging,
    read_capped,
    redact,
    section,
    snippet,
    strict_schema,
    tokens,
)
from stream.platform.retry import Backoff, classify, retry_after_s

__all__ = ["OpenAIJudge", "ResponseFormat", "is_loopback", "redact", "strict_schema"]

log = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)
#: bounds of max_response_bytes: a completion fits in 1 KiB at least; 64 MiB per reply
#: (times `concurrency`) is already a lot for a sidecar with a 512 MiB limit
MIN_RESPONSE_BYTES, MAX_RESPONSE_BYTES_LIMIT = 1 << 10, 64 << 20


def _secret(value: SecretStr | str) -> SecretStr:
    return value if isinstance(value, SecretStr) else SecretStr(value)


def insecure_transport(base_url: str) -> bool:
    """Plain http:// to a host that is not loopback: anyone on the path reads the key."""
    return base_url.strip().lower().startswith("http://") and not is_loopback(base_url)


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
        temperature: float = 0.0,
        azure: Mapping[str, str] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        extra_query: Mapping[str, str] | None = None,
        redact_pii: bool | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        secret_headers: Mapping[str, SecretStr | str] | None = None,
        secret_query: Mapping[str, SecretStr | str] | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        if max_attempts < 1 or concurrency < 1 or timeout_s <= 0 or max_total_s <= 0:
            raise ValueError("max_attempts, concurrency, timeout_s, max_total_s must be > 0")
        if not (isinstance(temperature, int | float) and 0.0 <= temperature <= 2.0):
            raise ValueError(f"temperature must be a number from 0 to 2, got {temperature!r}")
        if response_format not in ("json_schema", "json_object_schema", "json_object", "none"):
            raise ValueError(f"unknown response_format {response_format!r}")
        if not (
            type(max_response_bytes) is int
            and MIN_RESPONSE_BYTES <= max_response_bytes <= MAX_RESPONSE_BYTES_LIMIT
        ):
            raise ValueError(
                f"max_response_bytes must be an integer from {MIN_RESPONSE_BYTES} to "
                f"{MAX_RESPONSE_BYTES_LIMIT}, got {max_response_bytes!r}"
            )
        header_secrets = {k: _secret(v) for k, v in (secret_headers or {}).items()}
        query_secrets = {k: _secret(v) for k, v in (secret_query or {}).items()}
        keyed = api_key is not None or bool(header_secrets) or bool(query_secrets)
        if insecure_transport(base_url) and keyed:
            if not allow_insecure_http:
                raise ValueError(
                    f"base_url {public_url(base_url)} is plain http:// to a host that is not "
                    "loopback, and the requests carry a key: use https://, or set "
                    "allow_insecure_http (judge.allow_insecure_http) to send it anyway"
                )
            log.warning(
                "judge %s: sending its key over plain http:// to %s (allow_insecure_http)",
                model,
                public_url(base_url),
            )
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url.rstrip("/")
        self.timeout_s, self.max_attempts, self.max_total_s = timeout_s, max_attempts, max_total_s
        self.breaker: CircuitBreaker = section(breaker, CircuitBreaker)
        self.backoff: Backoff = section(backoff, Backoff)
        self.prices = {m: dict(p) for m, p in (prices or {}).items()}
        self.response_format: ResponseFormat = response_format
        self.strict, self.max_tokens, self.seed = strict, max_tokens, seed
        self.temperature = float(temperature)
        self.redact_pii = not is_loopback(base_url) if redact_pii is None else redact_pii
        self.max_response_bytes = max_response_bytes
        self._url, headers, query = endpoint(
            self.base_url, model, api_key, azure, extra_headers, extra_query
        )
        headers["Accept-Encoding"] = "identity"  # replies are small; read_capped inflates
        headers.update({k: v.get_secret_value() for k, v in header_secrets.items()})
        query.update({k: v.get_secret_value() for k, v in query_secrets.items()})
        key = _secret(api_key) if api_key is not None else None
        self._scrub = Scrubber(
            [v.get_secret_value() for v in (*header_secrets.values(), *query_secrets.values())]
            + ([key.get_secret_value()] if key is not None else [])
        )
        self._sem = asyncio.Semaphore(concurrency)
        quiet_url_logging()
        import httpx  # here, not at module level: registering this judge must not load it

        self._http = httpx.AsyncClient(
            headers=headers,
            params=query,
            timeout=timeout_s,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    def __repr__(self) -> str:  # never the key
        return f"OpenAIJudge(model={self.model!r}, base_url={public_url(self.base_url)!r})"

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
                data = await self._post(self._body(messages, output, fmt), fmt, remaining)
            except _FormatUnsupported as exc:
                tries -= 1  # a downgrade does not use up the budget (at most twice per client)
                last = JudgeError("client_error", exc.detail, call)
                continue
            except Exception as exc:
                last = _error_for(exc, call, self._scrub)
                decision = classify(exc)
                if decision == "give_up" or tries >= self.max_attempts:
                    raise last from exc
                response = getattr(exc, "response", None)
                after = retry_after_s(response.headers) if response is not None else None
                after = after if decision == "rate_limit" else None
                await self._wait(next(delays), after, deadline, last)
                continue
            usage = data.get("usage")
            call.prompt_tokens += tokens(usage, "prompt_tokens")
            call.completion_tokens += tokens(usage, "completion_tokens")
            content, problem = _content(data)
            if problem is None:
                value, why = parse_json(content)
                if why is not None:
                    problem = ("invalid_json", why)
                else:
                    try:
                        return output.model_validate(value)
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

    def _body(
        self, messages: list[dict[str, str]], output: type[BaseModel], fmt: ResponseFormat
    ) -> dict[str, Any]:
        return build_payload(
            self.model,
            messages,
            output,
            fmt,
            self.strict,
            self.max_tokens,
            self.seed,
            self.temperature,
        )

    async def _post(
        self, payload: dict[str, Any], fmt: ResponseFormat, remaining: float
    ) -> dict[str, Any]:
        budget = min(self.timeout_s, remaining)
        async with asyncio.timeout(budget):  # bounds a server that trickles bytes too
            async with self._http.stream(
                "POST", self._url, json=payload, timeout=budget
            ) as streamed:  # read at most max_response_bytes, then hang up
                body = await read_capped(streamed, self.max_response_bytes)
        resp = buffered(streamed, body)
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
                raise _FormatUnsupported(self._scrub(f"{old} rejected: {snippet(resp)}"))
        resp.raise_for_status()
        data, why = parse_json(body.decode("utf-8", "replace"))
        if why is not None:
            raise _BadBody(self._scrub(f"body is not JSON ({why}): {snippet(resp)!r}"))
        if not isinstance(data, dict):
            raise _BadBody("body is not a JSON object")
        return data
