"""Judge configuration (`judge:` section of the settings, same names in Helm values)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from monitors.judges.health_settings import JudgeHealthSettings
from stream.contract.sections import Component, ComponentSpec, Section, deprecated_key

__all__ = [
    "BUNDLED_METRICS",
    "DEFAULT_METRICS",
    "CompoundSettings",
    "JudgeSettings",
    "default_metrics",
    "looks_like_credential",
]

#: the embedded judge's default: each metric on its own (it makes no LLM calls)
DEFAULT_METRICS = [
    "faithfulness",
    "context_relevance",
    "answer_relevance",
    "case_aware",
    "citation_accuracy",
    "citation_coverage",
    "source_policy_usage",
    "answer_correctness",
]
#: the default of every other judge (LLM judges): the same outputs in at most 3 LLM calls
#: per turn (`rag_triad`, `case_aware` and `citation_policy` one call each; no LLM call
#: for `citation_coverage`), see docs/metrics-judge.md
#: `answer_correctness` and `dece` run on reference turns only (labels.expected_answer):
#: no LLM call on other turns
BUNDLED_METRICS = [
    "rag_triad",
    "case_aware",
    "citation_policy",
    "citation_coverage",
    "answer_correctness",
    "dece",
]


def default_metrics(judge_type: str) -> list[str]:
    """`judge.metrics` when not configured: DEFAULT_METRICS for the embedded judge,
    BUNDLED_METRICS for any other."""
    return list(DEFAULT_METRICS if judge_type == "embedded" else BUNDLED_METRICS)


#: what the Helm values schema accepts as an environment variable name
_ENV_NAME_SCHEMA: dict[str, JsonValue] = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}


class CompoundSettings(BaseModel):
    """A weighted mean of judge scores (``ragpulse weights fit`` writes the weights)."""

    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float] = Field(
        default_factory=dict,
        json_schema_extra={"additionalProperties": {"type": "number", "minimum": 0}},
        description="{metric output: weight >= 0}; empty: no compound score. Written by "
        "`ragpulse weights fit`",
    )

    @model_validator(mode="after")
    def _check(self) -> CompoundSettings:
        bad = [m for m, w in self.weights.items() if not (w >= 0.0 and w < float("inf"))]
        if bad:
            raise ValueError(f"weights must be finite and >= 0: {bad}")
        if self.weights and sum(self.weights.values()) <= 0:
            raise ValueError("at least one weight must be > 0")
        return self

    def score(self, scores: Mapping[str, float]) -> float | None:
        """Σ w·score / Σ w over the weighted metrics, or None when one of them (with a
        weight > 0) has no score on this turn."""
        used = {m: w for m, w in self.weights.items() if w > 0}
        if not used or any(m not in scores for m in used):
            return None
        return sum(w * scores[m] for m, w in used.items()) / sum(used.values())


#: option names (lower case, `-` as `_`) that carry credentials, whatever their depth
_CREDENTIAL_NAMES = frozenset(
    {"authorization", "proxy_authorization", "cookie", "key", "apikey", "password", "passwd"}
)
_CREDENTIAL_WORDS = ("secret", "password", "passwd", "credential")
_WHERE_SECRETS_GO = (
    "secrets never go into judge.backend (`ragpulse config --print` shows them and the "
    "Helm chart renders them into a ConfigMap): the API key goes into RAGPULSE_JUDGE__API_KEY, "
    "a secret header into judge.headers_from_env ({header: NAME_OF_AN_ENV_VAR}), a secret "
    "query parameter into judge.query_from_env; in Kubernetes the variables come from a "
    "Secret (Helm: secrets.judgeApiKeyKey, secrets.judgeHeaders, secrets.judgeQuery)"
)
#: characters of an HTTP header name (RFC 9110 token)
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_WHAT = {"headers_from_env": "header", "query_from_env": "query parameter"}
_ENV_CHARS = frozenset("_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def looks_like_credential(name: str) -> bool:
    """Does an option / header / query parameter named `name` carry a credential?
    Case-insensitive, `-` and `_` alike: `api_key`, `API-Key`, `x-api-key`,
    `Ocp-Apim-Subscription-Key`, `authorization`, `password`, anything with `secret`,
    `credential` or `token` in it (`max_tokens`, a count, is not one), any `…_key`."""
    n = name.strip().lower().replace("-", "_")
    if n in _CREDENTIAL_NAMES or n.endswith(("_key", "apikey")):
        return True
    if any(word in n for word in _CREDENTIAL_WORDS):
        return True
    parts = n.split("_")
    return any(p.startswith("auth") for p in parts) or any(
        "token" in p and p != "tokens" for p in parts
    )


def _credentials(value: Any, path: str) -> Iterator[str]:
    """Paths under `path` whose key looks like a credential, or whose value is a literal
    `Bearer …` / `Basic …` authorization."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            where = f"{path}.{key}"
            if looks_like_credential(str(key)):
                yield where
            else:
                yield from _credentials(sub, where)
    elif isinstance(value, list | tuple):
        for i, sub in enumerate(value):
            yield from _credentials(sub, f"{path}.{i}")
    elif isinstance(value, str) and value.strip().lower().startswith(("bearer ", "basic ")):
        yield path


def _from_env(field: str, names: Mapping[str, str], what: str) -> dict[str, SecretStr]:
    """{header or parameter: the value of its environment variable}; ValueError naming
    `field.<name>` for a bad name, a variable that is not set or is empty."""
    out: dict[str, SecretStr] = {}
    for name, var in names.items():
        where = f"{field}.{name}"
        if not name or (what == "header" and not set(name) <= _TOKEN_CHARS):
            raise ValueError(f"{where}: {name!r} is not a valid HTTP {what} name")
        if not var or var[0].isdigit() or not set(var) <= _ENV_CHARS:
            raise ValueError(f"{where}: {var!r} is not an environment variable name")
        value = os.environ.get(var)
        if value is None or not value.strip():
            raise ValueError(
                f"{where}: environment variable {var} is not set (or empty); it holds the "
                f"value of the {what} {name}"
            )
        if any(c in value for c in "\r\n\0"):
            raise ValueError(f"{where}: the value of {var} has a line break or NUL")
        out[name] = SecretStr(value)
    return out


class JudgeSettings(Section):
    backend: ComponentSpec = Field(
        default_factory=lambda: Component(type="embedded"),
        description="the judge: {type: embedded} (local, default), {type: openai, base_url,"
        " model, timeout_s, concurrency, ...} or none",
    )
    type: str | None = Field(
        None,
        exclude=True,
        description="deprecated (read for one more release): write judge.backend.type",
    )
    options: dict[str, Any] | None = Field(
        None,
        exclude=True,
        description="deprecated (read for one more release): write the options in"
        " judge.backend beside its type",
    )
    api_key: SecretStr | None = Field(None, description="secret: RAGPULSE_JUDGE__API_KEY")
    headers_from_env: dict[str, str] = Field(
        default_factory=dict,
        json_schema_extra={"additionalProperties": _ENV_NAME_SCHEMA},
        description="secret HTTP headers of the judge requests: {header name: name of the "
        "environment variable holding its value}, read at start (e.g. {api-key: "
        "AZURE_OPENAI_KEY}); the values are never shown",
    )
    query_from_env: dict[str, str] = Field(
        default_factory=dict,
        json_schema_extra={"additionalProperties": _ENV_NAME_SCHEMA},
        description="secret query parameters of the judge requests: {parameter: name of the "
        "environment variable holding its value}, read at start (e.g. {subscription-key: "
        "APIM_KEY})",
    )
    allow_insecure_http: bool = Field(
        False,
        validate_default=True,
        description="allow a key (api_key, headers_from_env, query_from_env) over plain "
        "http:// to a host that is not loopback (logged as a warning)",
    )
    metrics: list[ComponentSpec] = Field(
        default_factory=lambda: [Component(type=m) for m in DEFAULT_METRICS],
        description="judge metrics to run: a registered name, or {type: name, ...options};"
        " default with a judge other than embedded: rag_triad, case_aware, citation_policy,"
        " citation_coverage (same outputs, at most 3 LLM calls per turn)",
    )
    metric_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        exclude=True,
        description="deprecated (read for one more release): options per metric name;"
        " write them in judge.metrics as {type: name, ...options}",
    )
    queue_size: int = Field(200, ge=1, description="sampled events waiting for a judge, max")
    concurrency: int = Field(2, ge=1, le=256, description="events judged at once")
    compound: CompoundSettings = Field(
        default_factory=CompoundSettings,
        description="compound score from fitted weights (ragpulse_compound_score)",
    )
    health: JudgeHealthSettings = Field(
        default_factory=JudgeHealthSettings,
        description="canaries and self-consistency of the judge (docs/judges.md)",
    )
    windows_s: dict[str, float] = Field(
        default_factory=lambda: {"5m": 300.0, "1h": 3600.0},
        description="rolling windows of ragpulse_metric_mean / ragpulse_gate_pass_ratio",
    )

    _secret_headers: dict[str, SecretStr] = PrivateAttr(default_factory=dict)
    _secret_query: dict[str, SecretStr] = PrivateAttr(default_factory=dict)

    @field_validator("backend")
    @classmethod
    def _no_secrets_in_options(cls, backend: Component) -> Component:
        options = backend.options
        found = list(_credentials(options, "judge.backend"))
        base_url = options.get("base_url")
        if isinstance(base_url, str):
            parts = urlsplit(base_url)
            if "@" in parts.netloc:
                found.append("judge.backend.base_url (user info)")
            for pair in parts.query.split("&"):
                name = pair.partition("=")[0]
                if name and looks_like_credential(name):
                    found.append(f"judge.backend.base_url (query parameter {name})")
        if found:
            raise ValueError(
                f"{', '.join(found)} looks like a credential (the value is not shown); "
                + _WHERE_SECRETS_GO
            )
        return backend

    @field_validator("headers_from_env", "query_from_env")
    @classmethod
    def _env_is_set(cls, names: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        _from_env(f"judge.{info.field_name}", names, _WHAT[info.field_name or ""])
        return names

    @field_validator("allow_insecure_http")
    @classmethod
    def _no_key_over_http(cls, allow: bool, info: ValidationInfo) -> bool:
        """A key (api_key, headers_from_env, query_from_env) over plain http:// to a host
        that is not loopback only with allow_insecure_http."""
        data = info.data
        keyed = [
            f"judge.{name}"
            for name in ("api_key", "headers_from_env", "query_from_env")
            if data.get(name)
        ]
        backend = data.get("backend")
        base_url = backend.options.get("base_url") if isinstance(backend, Component) else None
        if allow or not keyed or not isinstance(base_url, str):
            return allow
        from monitors.judges.openai_wire import is_loopback, public_url

        if base_url.strip().lower().startswith("http://") and not is_loopback(base_url):
            raise ValueError(
                f"judge.backend.base_url {public_url(base_url)} is plain http:// to a host "
                f"that is not loopback, and {' and '.join(keyed)} would send a key over it: "
                "use https://, or set judge.allow_insecure_http: true to accept that"
            )
        return allow

    @model_validator(mode="after")
    def _secrets_from_env(self) -> JudgeSettings:
        """The values of headers_from_env / query_from_env, read once at start."""
        self._secret_headers = _from_env("judge.headers_from_env", self.headers_from_env, "header")
        self._secret_query = _from_env(
            "judge.query_from_env", self.query_from_env, "query parameter"
        )
        return self

    def metric_names(self) -> list[str]:
        """The enabled judge metrics' registered names, in order."""
        return [m.type for m in self.metrics]

    def secret_headers(self) -> dict[str, SecretStr]:
        """The headers of headers_from_env with their values (read at validation)."""
        return dict(self._secret_headers)

    def secret_query(self) -> dict[str, SecretStr]:
        """The query parameters of query_from_env with their values (read at validation)."""
        return dict(self._secret_query)

    @model_validator(mode="before")
    @classmethod
    def _aliases_and_defaults(cls, data: Any) -> Any:
        """The deprecated `type` / `options` / `metric_options` are folded into `backend`
        and `metrics`; unset `metrics` follows the judge (the bundles for LLM judges)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        old_type, old_options = data.pop("type", None), data.pop("options", None)
        if old_type is not None or old_options is not None:
            deprecated_key("judge.type / judge.options", "judge.backend: {type: name, ...options}")
            backend = data.get("backend")
            base = _as_dict(backend) if backend is not None else {"type": "embedded"}
            if old_type is not None:
                base["type"] = old_type
            if isinstance(old_options, dict):
                base.update(old_options)
            elif old_options is not None:
                raise ValueError("judge.options: expected a mapping of options")
            data["backend"] = base
        kind = _as_dict(data.get("backend") or {"type": "embedded"}).get("type")
        if data.get("metrics") is None:
            data["metrics"] = default_metrics(kind if isinstance(kind, str) else "")
        extra = data.pop("metric_options", None)
        if extra:
            deprecated_key("judge.metric_options", "judge.metrics: [{type: name, ...options}]")
            if not isinstance(extra, dict):
                raise ValueError("judge.metric_options: expected {metric: {option: value}}")
            data["metrics"] = _fold(data["metrics"], extra)
        return data


def _as_dict(spec: Any) -> dict[str, Any]:
    if isinstance(spec, Component):
        return {"type": spec.type, **spec.options}
    if isinstance(spec, str):
        return {"type": spec}
    return dict(spec) if isinstance(spec, dict) else {"type": spec}


def _fold(metrics: Any, options: dict[str, Any]) -> list[dict[str, Any]]:
    """`metric_options` (deprecated) into the metrics it names."""
    specs = [_as_dict(m) for m in metrics] if isinstance(metrics, list) else []
    names = [s.get("type") for s in specs]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ValueError(
            f"judge.metric_options names metrics that are not enabled: {unknown} (a metric"
            " inside an enabled bundle takes the bundle's options: list the metric itself in"
            " judge.metrics to give it its own)"
        )
    out = []
    for spec in specs:
        more = options.get(str(spec.get("type")), {})
        if not isinstance(more, dict):
            raise ValueError(f"judge.metric_options.{spec.get('type')}: expected a mapping")
        out.append({**spec, **more})
    return out
