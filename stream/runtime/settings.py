"""One settings model: YAML file + `RAGPULSE_*` environment (nested with `__`), validated at start.

Precedence (highest first): explicit overrides, environment, the YAML file, defaults.
The same names are used in the Helm values (`config:` block).
"""

from __future__ import annotations

import json
import os
import tempfile
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from exporters.alert_settings import AlertSettings
from exporters.slo_settings import DEFAULT_SLOS, SloSpec, seconds
from monitors.drift.monitor import DriftSettings
from monitors.judges.settings import JudgeSettings
from monitors.metrics.gates import GateSettings
from stream.contract.errors import RagpulseError
from stream.contract.events import EventLimits
from stream.contract.sections import Component, ComponentSpec, Section, deprecated_key
from stream.runtime.progress import ProgressSettings
from stream.runtime.sampler import SamplerSettings
from stream.runtime.settings_sources import EnvSource, bad_json_env, explain, unknown_env

__all__ = [
    "AdminSettings",
    "ConfigError",
    "DedupeSettings",
    "DetectorSettings",
    "HeapSettings",
    "KafkaSettings",
    "LabelSettings",
    "ScorecardSettings",
    "ServerSettings",
    "Settings",
    "load_settings",
    "settings_reference",
]

CONFIG_ENV = "RAGPULSE_CONFIG"
_config_file: ContextVar[str | None] = ContextVar("ragpulse_config_file", default=None)


class KafkaSettings(Section):
    bootstrap_servers: str = Field(
        "localhost:9092",
        description="host:port[,host:port...]",
        json_schema_extra={"pattern": r"^[^,\s]+:[0-9]+(,\s*[^,\s]+:[0-9]+)*$"},
    )
    input_topic: str = Field("rag.interactions", min_length=1, description="RAG interaction events")
    dlq_topic: str = Field(
        "rag.interactions.dlq", min_length=1, description="dead letters: bytes + reason"
    )
    scores_topic: str = Field(
        "rag.scores",
        min_length=1,
        description="one scorecard per valid event, one judge update per judged turn (same key)",
    )
    alarms_topic: str = Field(
        "rag.alarms", min_length=1, description="drift alarm transitions (JSON)"
    )
    observations_topic: str = Field(
        "rag.monitor.observations",
        min_length=1,
        description="internal: each replica's per-interval drift observations, keyed by series"
        " (the series' owner runs its detectors; docs/scaling.md)",
    )
    state_topic: str = Field(
        "rag.monitor.drift-changelog",
        min_length=1,
        description="internal: drift series state as versioned JSON, compacted, partitioned"
        " like the observations topic",
    )
    observation_partitions: int = Field(
        0,
        ge=0,
        le=10_000,
        description="partitions of the observations and state topics when"
        " ragpulse creates them (0: as many as the input topic)",
    )
    max_record_bytes: int = Field(
        1_048_588,
        ge=65_536,
        le=1 << 30,
        description="every record ragpulse publishes (scorecards, judge updates, dead letters,"
        " alarms, drift records) fits this many bytes: key + value + headers + 128 bytes of"
        " batch framing + 10 per header (Kafka's default message.max.bytes); a scorecard"
        " over it sheds parts (docs/reliability.md)",
    )
    group_id: str = Field("ragpulse", min_length=1, description="consumer group (and faust app id)")
    client_id: str = Field("ragpulse", min_length=1, description="Kafka client id")
    auto_offset_reset: Literal["earliest", "latest"] = Field(
        "earliest", description="where a new consumer group starts"
    )
    isolation_level: Literal["read_committed", "read_uncommitted"] = Field(
        "read_committed",
        description="read_committed: records of aborted transactions are never scored",
    )
    dlq_max_value_bytes: int = Field(
        1_000_000,
        ge=1024,
        description="a dead letter (key, value and headers) is kept within this many bytes"
        " (at most kafka.max_record_bytes): the value is cut first"
        " (`ragpulse.error.value_bytes` keeps its size), then a key over 1 KiB"
        " (`ragpulse.error.key_bytes`), then the source headers are dropped"
        " (`ragpulse.error.headers_dropped`)",
    )
    create_topics: bool = Field(True, description="declare missing topics at start")
    topic_partitions: int = Field(4, ge=1, description="partitions for topics ragpulse creates")
    commit_interval_s: float = Field(
        2.0,
        gt=0,
        description="faust engine: offset commit period (the aiokafka engine commits after"
        " every batch; set there, it is refused)",
    )
    fetch_max_wait_ms: int = Field(
        100,
        ge=1,
        le=60_000,
        description="aiokafka engine: the longest the broker may hold a fetch when it has"
        " nothing new (a latency bound); a broker that cannot answer within it may answer"
        " empty: raise it if the consumer stalls with lag (docs/reliability.md); refused,"
        " set, on the faust engine",
    )
    session_timeout_s: float = Field(10.0, gt=0, description="group session timeout")
    rebalance_timeout_s: float = Field(10.0, gt=0, description="group rebalance timeout")
    heartbeat_interval_s: float = Field(3.0, gt=0, description="group heartbeat period")
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    sasl_username: str | None = None
    sasl_password: SecretStr | None = Field(None, description="secret: from env / a Secret")
    ssl_cafile: Path | None = Field(None, description="CA bundle for SSL / SASL_SSL")
    ssl_certfile: Path | None = Field(None, description="client certificate (mTLS)")
    ssl_keyfile: Path | None = Field(None, description="client key (mTLS)")

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers(cls, v: str) -> str:
        servers = [s.strip() for s in v.split(",") if s.strip()]
        if not servers or any(":" not in s for s in servers):
            raise ValueError("expected host:port[,host:port...]")
        return ",".join(servers)

    @model_validator(mode="after")
    def _dlq_fits_records(self) -> KafkaSettings:
        # a dead letter is a record too: one the broker refuses would have nowhere to go
        if self.dlq_max_value_bytes > self.max_record_bytes:
            raise ValueError(
                f"kafka.dlq_max_value_bytes ({self.dlq_max_value_bytes}) must not exceed"
                f" kafka.max_record_bytes ({self.max_record_bytes})"
            )
        return self


class ScorecardSettings(Section):
    """What a scorecard carries beyond ragpulse's own fields (docs/reliability.md)."""

    extra: Literal["all", "none"] | list[str] = Field(
        "all",
        description="the event's unknown top-level fields copied under `extra`: all, none, or"
        " an allow-list of field names; they may carry user data (docs/security.md)",
    )

    @field_validator("extra")
    @classmethod
    def _names(cls, v: Literal["all", "none"] | list[str]) -> Literal["all", "none"] | list[str]:
        if isinstance(v, list) and any(not name or len(name) > 256 for name in v):
            raise ValueError("expected field names of 1 to 256 characters")
        return v


class DetectorSettings(Section):
    enabled: list[ComponentSpec] = Field(
        description="detectors to run on every event: a registered name, or"
        " {type: name, ...options} (e.g. {type: policy, pack_dirs: [/etc/packs]})",
        default_factory=lambda: [
            Component(type=name)
            for name in ("refusal", "policy", "pii", "citations", "identifiers", "source_policy")
        ],
    )
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        exclude=True,
        description="deprecated (read for one more release): options per detector name;"
        " write them in detectors.enabled as {type: name, ...options}",
    )
    plugins: list[str] = Field(
        default_factory=list, description="modules imported at start to register more detectors"
    )

    @model_validator(mode="after")
    def _fold_options(self) -> DetectorSettings:
        """The deprecated `options` map goes into the components it names."""
        if not self.options:
            return self
        deprecated_key("detectors.options", "detectors.enabled: [{type: name, ...options}]")
        names = [c.type for c in self.enabled]
        unknown = sorted(set(self.options) - set(names))
        if unknown:
            raise ValueError(f"detectors.options names detectors that are not enabled: {unknown}")
        self.enabled = [c.with_options(**self.options.get(c.type, {})) for c in self.enabled]
        self.options = {}
        return self

    def names(self) -> list[str]:
        """The enabled detectors' registered names, in order."""
        return [c.type for c in self.enabled]


class LabelSettings(Section):
    """Bounded label values for `service`, `model`, `prompt_version` (allow-list or top-N)."""

    max_values: int = Field(20, ge=1, le=1000, description="first N distinct values, rest 'other'")
    allow: dict[str, list[str]] = Field(
        default_factory=dict, description="explicit allow-lists; values outside become 'other'"
    )

    @field_validator("allow")
    @classmethod
    def _known_labels(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(v) - {"service", "model", "prompt_version"})
        if unknown:
            raise ValueError(f"allow-lists exist for service, model, prompt_version; not {unknown}")
        return v


#: a bearer token: printable ASCII without spaces (what an HTTP header carries unchanged)
_TOKEN_MIN_CHARS = 16


def _is_token(text: str) -> bool:
    """At least 16 characters, each in 0x21..0x7e (string operations, no regex engine)."""
    return len(text) >= _TOKEN_MIN_CHARS and all("\x21" <= c <= "\x7e" for c in text)


class AdminSettings(Section):
    """State-changing HTTP actions (POST /drift/rebaseline): off by default; enabled, every
    request needs `Authorization: Bearer <token>`. With `port` they get a listener of their
    own on `host` (loopback by default: reached by `kubectl port-forward` / `exec` only)."""

    enabled: bool = Field(
        False, description="serve POST actions (/drift/rebaseline); off: they answer 404"
    )
    token: SecretStr | None = Field(
        None,
        validate_default=True,
        description="secret: bearer token the actions require, 16+ printable ASCII characters",
    )
    host: str = Field(
        "127.0.0.1", description="listen address of the separate admin listener (with `port`)"
    )
    port: int | None = Field(
        None, ge=0, le=65535, description="separate listener for the actions; null: server.port"
    )

    @field_validator("token")
    @classmethod
    def _token(cls, v: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        # never echo the value: the messages below name the field and the rule only
        text = v.get_secret_value().strip() if v is not None else ""
        if not text:
            if info.data.get("enabled"):
                raise ValueError(
                    "required when server.admin.enabled is true"
                    " (from a Secret; make one with `openssl rand -hex 32`)"
                )
            return None
        if not _is_token(text):
            raise ValueError("expected 16 or more printable ASCII characters, no spaces")
        return SecretStr(text)


class ServerSettings(Section):
    host: str = Field("0.0.0.0", description="listen address of the HTTP endpoint")
    port: int = Field(9108, ge=0, le=65535, description="/metrics, /healthz, /readyz")
    max_connections: int = Field(
        64,
        ge=4,
        le=4096,
        description="connections served at once per listener; one more is closed at once "
        "and counted (ragpulse_http_client_errors_total{reason=over_capacity})",
    )
    admin: AdminSettings = Field(default_factory=AdminSettings)

    @model_validator(mode="after")
    def _admin_port_differs(self) -> ServerSettings:
        admin = self.admin
        if admin.enabled and admin.port and admin.port == self.port:
            raise ValueError(
                "server.admin.port must differ from server.port"
                " (leave it null to serve the actions on server.port)"
            )
        return self


class DedupeSettings(Section):
    window_size: int = Field(100_000, ge=0, description="event ids remembered; 0 disables")


class HeapSettings(Section):
    """glibc malloc tuning for a long-running process (stream.platform.heap). A fixed mmap
    threshold (e.g. 131072) held RSS lower in a 35-minute soak but cost ~12 % of the
    detector path's throughput (page faults on every fetch buffer), so it is off by
    default; BENCHMARKS.md "Soak"."""

    arena_max: int = Field(
        2, ge=0, le=64, description="malloc arenas at most (0: glibc's 8 per core)"
    )
    mmap_threshold_bytes: int = Field(
        0,
        ge=0,
        le=32 << 20,
        description="blocks this large get their own mapping, unmapped on free "
        "(0: glibc's dynamic threshold, which rises to the largest block freed)",
    )
    trim_every_s: float = Field(
        60.0, ge=0, description="return free heap pages to the OS this often (0: never)"
    )


#: settings only one engine reads: {kafka field: that engine}
ENGINE_ONLY = {"commit_interval_s": "faust", "fetch_max_wait_ms": "aiokafka"}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAGPULSE_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    engine: Literal["faust", "aiokafka"] = Field(
        "aiokafka",
        description="stream engine: aiokafka (batches, manual commit) or faust (per-event agent)",
    )
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    limits: EventLimits = Field(default_factory=EventLimits)
    scorecard: ScorecardSettings = Field(default_factory=ScorecardSettings)
    detectors: DetectorSettings = Field(default_factory=DetectorSettings)
    labels: LabelSettings = Field(default_factory=LabelSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    dedupe: DedupeSettings = Field(default_factory=DedupeSettings)
    heap: HeapSettings = Field(default_factory=HeapSettings)
    progress: ProgressSettings = Field(default_factory=ProgressSettings)
    drift: DriftSettings = Field(default_factory=DriftSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    sampling: SamplerSettings = Field(default_factory=SamplerSettings)
    gates: GateSettings = Field(default_factory=GateSettings)
    slos: list[SloSpec] = Field(
        default_factory=lambda: [SloSpec.model_validate(d) for d in DEFAULT_SLOS],
        description="quality SLOs (docs/slo.md): name, sli, objective, period, ...; [] for none",
    )
    data_dir: Path = Field(
        Path(tempfile.gettempdir()) / "ragpulse",
        description="writable working directory of the stream engine (faust datadir)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="DEBUG also shows faust/aiokafka internals"
    )
    shutdown_timeout_s: float = Field(20.0, gt=0, description="drain deadline after SIGTERM")

    @model_validator(mode="after")
    def _engine_settings_apply(self) -> Settings:
        """A setting that only one engine reads is refused, set, on the other engine."""
        for name, engine in ENGINE_ONLY.items():
            default = KafkaSettings.model_fields[name].default
            if self.engine != engine and getattr(self.kafka, name) != default:
                raise ValueError(
                    f"kafka.{name} is read by the {engine} engine only, and engine is"
                    f" {self.engine}: remove it, or set engine: {engine}"
                )
        return self

    @field_validator("slos")
    @classmethod
    def _unique_slos(cls, v: list[SloSpec], info: ValidationInfo) -> list[SloSpec]:
        names = [s.name for s in v]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"SLO names must be unique: {twice}")
        alerts = info.data.get("alerts")
        longest = max(alerts.slo_burn.windows, key=lambda w: seconds(w.long)) if alerts else None
        for i, slo in enumerate(v):
            if longest is not None and seconds(slo.period) < seconds(longest.long):
                raise ValueError(
                    f"slos.{i}.period {slo.period} is shorter than the {longest.long} window of"
                    " alerts.slo_burn.windows"
                )
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        env = EnvSource(settings_cls)  # + `a,b` lists of strings
        return (init_settings, env, _YamlSource(settings_cls), file_secret_settings)

    def masked(self) -> dict[str, Any]:
        """The effective configuration as plain data, secrets shown as '**********'."""
        return self.model_dump(mode="json")


class _YamlSource(PydanticBaseSettingsSource):
    """The YAML file given to `load_settings` (`--config`), else the one in RAGPULSE_CONFIG."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = _config_file.get() or os.environ.get(CONFIG_ENV)
        if not path:
            return {}
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path}: top level must be a mapping")
        return data


def _yaml_data(path: str | None) -> Any:
    """The config file's data again, to tell which errors it holds (None: unreadable)."""
    if not path:
        return None
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None


class ConfigError(RagpulseError):
    """A configuration that cannot start; the message names the field."""


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Build and validate Settings, turning validation errors into one readable ConfigError."""
    token = _config_file.set(str(config_file) if config_file is not None else None)
    environ = dict(os.environ)
    unknown = unknown_env(Settings, environ)
    if unknown:
        raise ConfigError("unknown settings in the environment:\n" + "\n".join(unknown))
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        path = _config_file.get() or environ.get(CONFIG_ENV)
        lines = explain(exc, Settings, environ, path, _yaml_data(path))
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from None
    except SettingsError as exc:  # a list or mapping in a variable that is not JSON
        field = str(exc).partition('field "')[2].partition('"')[0]
        lines = bad_json_env(field, environ) or [f"  {field}: {exc}"]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from None
    finally:
        _config_file.reset(token)


def settings_reference(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    """Markdown table rows (setting, env variable, default, meaning) for every setting."""
    rows: list[str] = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            rows.extend(settings_reference(ann, f"{prefix}{name}."))
            continue
        path = f"{prefix}{name}"
        env = "RAGPULSE_" + path.upper().replace(".", "__")
        default = field.get_default(call_default_factory=True)
        if isinstance(default, list) and default and isinstance(default[0], BaseModel):
            items = [m.model_dump(mode="json", exclude_defaults=True) for m in default]
            shown = json.dumps(items, separators=(", ", ": "))
        else:
            shown = "(secret)" if ann is SecretStr or "SecretStr" in str(ann) else repr(default)
        rows.append(f"| `{path}` | `{env}` | `{shown}` | {field.description or ''} |")
    return rows
