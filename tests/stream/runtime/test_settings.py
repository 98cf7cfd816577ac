from __future__ import annotations

from pathlib import Path

import pytest

from stream.runtime.settings import ConfigError, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("RAGPULSE_"):
            monkeypatch.delenv(key)


def test_defaults_match_design() -> None:
    s = load_settings()
    assert s.kafka.input_topic == "rag.interactions"
    assert s.kafka.dlq_topic == "rag.interactions.dlq"
    assert s.kafka.scores_topic == "rag.scores"
    assert "refusal" in s.detectors.names()


def test_yaml_then_env_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "kafka:\n  group_id: from-yaml\n  input_topic: yaml-topic\nserver:\n  port: 9200\n"
    )
    monkeypatch.setenv("RAGPULSE_KAFKA__GROUP_ID", "from-env")
    s = load_settings(cfg)
    assert s.kafka.group_id == "from-env"
    assert s.kafka.input_topic == "yaml-topic"
    assert s.server.port == 9200


def test_bad_value_names_field_and_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_SERVER__PORT", "not-a-port")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "server.port" in str(info.value)
    assert "RAGPULSE_SERVER__PORT" in str(info.value)


def test_unknown_key_in_yaml_is_rejected(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kafka:\n  bootstrap: x:1\n")
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap"):
        load_settings(cfg)


def test_bad_bootstrap_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_KAFKA__BOOTSTRAP_SERVERS", "localhost")
    with pytest.raises(ConfigError, match="bootstrap_servers"):
        load_settings()


def test_secret_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_KAFKA__SASL_PASSWORD", "hunter2")
    s = load_settings()
    assert s.kafka.sasl_password is not None
    assert s.kafka.sasl_password.get_secret_value() == "hunter2"
    assert "hunter2" not in str(s.masked())
    assert "hunter2" not in repr(s)


def test_missing_config_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(tmp_path / "nope.yaml")


def test_configuration_doc_lists_every_setting() -> None:
    from stream.runtime.settings import settings_reference

    doc = (Path(__file__).resolve().parents[3] / "docs" / "configuration.md").read_text()
    missing = [row for row in settings_reference() if row not in doc]
    assert missing == [], "regenerate with `ragpulse config --reference`"


ADMIN_TOKEN = "adm1n-t0ken-0123456789abcdef"


def test_admin_actions_are_off_by_default() -> None:
    admin = load_settings().server.admin
    assert admin.enabled is False and admin.token is None
    assert (admin.host, admin.port) == ("127.0.0.1", None)


def test_admin_enabled_without_token_fails_naming_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("server:\n  admin:\n    enabled: true\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg)
    assert "server.admin.token (RAGPULSE_SERVER__ADMIN__TOKEN)" in str(info.value)
    assert "required when server.admin.enabled is true" in str(info.value)
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__TOKEN", "   ")  # blank counts as missing
    with pytest.raises(ConfigError, match=r"server\.admin\.token"):
        load_settings(cfg)


def test_admin_enabled_in_yaml_token_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How the Helm chart does it: `enabled` in config.yaml, the token from a Secret."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("server:\n  port: 9200\n  admin:\n    enabled: true\n    port: 9201\n")
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__TOKEN", ADMIN_TOKEN + "\n")  # newline stripped
    s = load_settings(cfg)
    assert s.server.port == 9200 and s.server.admin.port == 9201
    assert s.server.admin.token is not None
    assert s.server.admin.token.get_secret_value() == ADMIN_TOKEN
    assert ADMIN_TOKEN not in str(s.masked()) and ADMIN_TOKEN not in repr(s)
    assert s.masked()["server"]["admin"]["token"] == "**********"


@pytest.mark.parametrize("token", ["short-token", "has a space 0123456789", "ünïcode-0123456789"])
def test_admin_token_must_be_a_long_header_safe_string(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__ENABLED", "true")
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__TOKEN", token)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "server.admin.token" in str(info.value)
    assert token not in str(info.value)  # a bad secret is not echoed either


def test_admin_port_must_differ_from_the_metrics_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__TOKEN", ADMIN_TOKEN)
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__ENABLED", "true")
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__PORT", "9108")
    with pytest.raises(ConfigError, match=r"server\.admin\.port must differ from server\.port"):
        load_settings()
    monkeypatch.setenv("RAGPULSE_SERVER__ADMIN__PORT", "9109")
    assert load_settings().server.admin.port == 9109


def test_fetch_max_wait_is_bounded_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().kafka.fetch_max_wait_ms == 100
    monkeypatch.setenv("RAGPULSE_KAFKA__FETCH_MAX_WAIT_MS", "2000")
    assert load_settings().kafka.fetch_max_wait_ms == 2000
    monkeypatch.setenv("RAGPULSE_KAFKA__FETCH_MAX_WAIT_MS", "0")
    with pytest.raises(ConfigError, match="RAGPULSE_KAFKA__FETCH_MAX_WAIT_MS"):
        load_settings()


def test_a_setting_the_running_engine_ignores_is_refused_naming_it_and_its_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RAGPULSE_KAFKA__COMMIT_INTERVAL_S", "5")
    where = r"kafka\.commit_interval_s \(RAGPULSE_KAFKA__COMMIT_INTERVAL_S\)"
    with pytest.raises(ConfigError, match=where + ".*faust engine only, and engine is aiokafka"):
        load_settings()
    monkeypatch.setenv("RAGPULSE_ENGINE", "faust")
    assert load_settings().kafka.commit_interval_s == 5.0
    monkeypatch.delenv("RAGPULSE_KAFKA__COMMIT_INTERVAL_S")
    path = tmp_path / "c.yaml"
    path.write_text("kafka:\n  fetch_max_wait_ms: 500\n")
    with pytest.raises(ConfigError, match=rf"kafka\.fetch_max_wait_ms \(in {path}\).*aiokafka"):
        load_settings(path)
    monkeypatch.delenv("RAGPULSE_ENGINE")
    assert load_settings(path).kafka.fetch_max_wait_ms == 500
    assert load_settings().kafka.commit_interval_s == 2.0  # the default is no setting
