"""``egi-bench proxy start|status|logs|stop`` (egibench/proxy.py, egibench/cli.py).

The end-to-end test starts LiteLLM's real proxy server in front of the loopback fake
OpenAI-compatible server and sends a chat completion through it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from demo.testing.fakellm import FakeLLMServer
from egibench import cli, proxy


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening_addresses(port: int) -> set[str]:
    """Return the local addresses of the TCP sockets listening on ``port`` (from /proc)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                found.add(address)
    return found


def model_list(path: Path, api_base: str) -> Path:
    path.write_text(
        "model_list:\n"
        "  - model_name: fake\n"
        "    litellm_params:\n"
        "      model: openai/fake\n"
        f"      api_base: {api_base}\n"
        "      api_key: x\n",
        encoding="utf-8",
    )
    return path


# A harness that asks the model through the proxy, as the benchmarks do (OpenAI-compatible
# base URL and key from its environment), and scores the answer in CRMArena's format.
HARNESS = """\
import json, os, sys, urllib.request
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps({"model": sys.argv[2], "messages": [{"role": "user", "content": "q"}]})
    .encode(),
    headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
             "Content-Type": "application/json"})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
answer = json.loads(opener.open(request, timeout=30).read())["choices"][0]["message"]["content"]
reward = 1 if answer == "hello from the fake model" else 0
json.dump([{"task_id": 1, "task_type": "case_routing", "reward": reward}],
          open(os.path.join(sys.argv[1], "results_fake_react_all.json"), "w"))
"""


def proxy_cli(state: Path, action: str, *extra: str) -> int:
    return cli.main(["proxy", action, "--state-dir", str(state), *extra])


def test_proxy_serves_the_model_list_on_loopback_and_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LITELLM_MASTER_KEY", raising=False)
    state = tmp_path / "state"
    port = free_port()
    with FakeLLMServer(responder=lambda request: "hello from the fake model") as server:
        config = model_list(tmp_path / "models.yaml", server.base_url)
        try:
            assert proxy_cli(state, "start", "--config", str(config), "--port", str(port)) == 0
            out = capsys.readouterr().out
            assert f"http://127.0.0.1:{port}/v1" in out

            assert proxy_cli(state, "status") == 0
            assert "Proxy running" in capsys.readouterr().out
            # Bound to loopback only: 127.0.0.1 in /proc/net/tcp's little-endian hex.
            assert listening_addresses(port) == {"0100007F"}

            key = (state / proxy.KEY_FILE).read_text().strip()
            assert key.startswith("sk-") and (state / proxy.KEY_FILE).stat().st_mode & 0o077 == 0
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                data=json.dumps(
                    {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}
                ).encode(),
                headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            )
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(request, timeout=30) as answer:
                body = json.loads(answer.read())
            assert body["choices"][0]["message"]["content"] == "hello from the fake model"
            assert server.calls == 1

            # `run` finds the running proxy and gives its harness the proxy's URL and key.
            (tmp_path / "harness.py").write_text(HARNESS, encoding="utf-8")
            registry = tmp_path / "h.yaml"
            registry.write_text(
                "benchmarks:\n"
                f"  crmarena: {{command: '{sys.executable} {tmp_path / 'harness.py'} "
                "{output_dir} {model}', output: .}\n",
                encoding="utf-8",
            )
            argv = ["run", "--model", "fake", "--mode", "quick", "--harnesses", str(registry)]
            argv += ["--results-dir", str(tmp_path / "agg"), "--raw-dir", str(tmp_path / "raw")]
            assert cli.main([*argv, "--proxy-state-dir", str(state)]) == 0
            (artifact,) = [json.loads(p.read_text()) for p in (tmp_path / "agg").glob("*.json")]
            assert artifact["benchmarks"]["crmarena"] == {"case_routing": 1.0}
            assert server.calls == 2
            capsys.readouterr()

            assert proxy_cli(state, "logs", "--lines", "200") == 0
            logs = capsys.readouterr().out
            assert f"Uvicorn running on http://127.0.0.1:{port}" in logs
            assert key not in logs

            recorded = proxy.read_state(state)
            assert recorded is not None
            assert proxy_cli(state, "stop") == 0
            assert "Proxy stopped: pid" in capsys.readouterr().out
            assert proxy_cli(state, "status") == 3
            assert "Proxy stopped" in capsys.readouterr().out
            assert not (state / proxy.KEY_FILE).exists()
            assert not proxy._alive(recorded.pid)
            assert listening_addresses(port) == set()
        finally:
            proxy.stop(state, grace_seconds=5)


def test_status_without_a_proxy_reports_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert proxy_cli(tmp_path, "status") == 3
    assert "Proxy stopped (no proxy recorded" in capsys.readouterr().out
    assert proxy_cli(tmp_path, "stop") == 0
    assert proxy_cli(tmp_path, "logs") == 2
    assert "no log at" in capsys.readouterr().err


def test_a_stale_record_is_not_running_and_stop_clears_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / proxy.STATE_FILE).write_text(
        json.dumps(
            {"pid": dead.pid, "port": free_port(), "config": "c.yaml", "log": "x.log",
             "command": ["litellm"], "started_at": "2026-01-01T00:00:00+00:00"}
        )
    )  # fmt: skip
    assert proxy_cli(tmp_path, "status") == 3
    assert f"pid {dead.pid} is gone" in capsys.readouterr().out
    assert proxy_cli(tmp_path, "stop") == 0
    assert not (tmp_path / proxy.STATE_FILE).exists()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (None, "cannot read"),
        ("model_list: []\n", "key model_list"),
        ("model_list: [{litellm_params: {model: x}}]\n", "model_list[0].model_name"),
        ("model_list: [{model_name: a}]\n", "model_list[0].litellm_params.model"),
        ("model_list: [\n", "not valid YAML"),
        (
            "model_list: []\nmodel_list: []\n",
            "not valid YAML (line 2: key 'model_list' appears twice, first on line 1;",
        ),
    ],
)
def test_start_refuses_a_bad_model_list_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, named: str
) -> None:
    config = tmp_path / "models.yaml"
    if text is not None:
        config.write_text(text, encoding="utf-8")
    assert proxy_cli(tmp_path / "s", "start", "--config", str(config)) == 2
    err = capsys.readouterr().err
    assert err.startswith("egi-bench: error: proxy start:") and named in err
    assert str(config) in err and err.count("\n") == 1
    assert not (tmp_path / "s" / proxy.STATE_FILE).exists()


def test_start_refuses_a_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = model_list(tmp_path / "models.yaml", "http://127.0.0.1:9/v1")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert proxy_cli(tmp_path / "s", "start", "--config", str(config), "--port", str(port)) == 2
    assert f"127.0.0.1:{port} is already in use" in capsys.readouterr().err
