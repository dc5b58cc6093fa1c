"""A local LiteLLM proxy for EGI-Bench harnesses: start, status, logs, stop.

Pure: no Django import. ``start`` launches LiteLLM's own server (the ``litellm`` console
script of the installed package: ``litellm --config FILE --host 127.0.0.1 --port P``) as a
detached process in its own session, listening on 127.0.0.1 only, and records its pid, port,
config and log under a state directory (default ``var/egi-proxy/``):

- ``proxy.json``: pid, port, config, log, command, start time;
- ``master_key``: the proxy's key (mode 0600) when egi-bench generated it. LiteLLM refuses to
  start without a master key; harnesses get it as their API key;
- ``proxy.log``: the server's stdout and stderr (kept after ``stop``).

Every proxy process gets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so it never fetches the price
list from the internet, and never the caller's ``DATABASE_URL`` (LiteLLM would take it for
its own spend-tracking database).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from enterpriseval.documents import config_data

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_PORT",
    "DEFAULT_STATE_DIR",
    "HOST",
    "ProxyError",
    "ProxyState",
    "ProxyStatus",
    "api_key",
    "check_config",
    "log_tail",
    "read_state",
    "start",
    "status",
    "stop",
]

HOST = "127.0.0.1"
DEFAULT_PORT = 8008  # seed 000 Appendix A: http://localhost:8008/v1
DEFAULT_STATE_DIR = Path("var/egi-proxy")
DEFAULT_CONFIG = Path("litellm_proxy/litellm_config.yaml")
STATE_DIR_ENV = "EGI_PROXY_STATE_DIR"
STATE_FILE = "proxy.json"
KEY_FILE = "master_key"
LOG_FILE = "proxy.log"
HEALTH_PATH = "/health/liveliness"


class ProxyError(Exception):
    """The proxy cannot be started, found or stopped; the message says why."""


@dataclass(frozen=True)
class ProxyState:
    """What ``start`` recorded about a proxy process."""

    pid: int
    port: int
    config: str
    log: str
    command: list[str]
    started_at: str

    @property
    def api_base(self) -> str:
        """Return the OpenAI-compatible base URL clients use."""
        return f"http://{HOST}:{self.port}/v1"


@dataclass(frozen=True)
class ProxyStatus:
    """The proxy as ``status`` finds it."""

    state: ProxyState | None
    alive: bool
    healthy: bool
    detail: str

    @property
    def running(self) -> bool:
        """Return whether the recorded process is alive and answers its health check."""
        return self.alive and self.healthy


def check_config(path: Path) -> list[str]:
    """Return the model names a LiteLLM model-list config serves; refuse a malformed one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ProxyError(f"--config {path}: cannot read ({error.strerror})") from None
    data = config_data(text, f"--config {path}", error=ProxyError)
    models = data.get("model_list") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models:
        raise ProxyError(f"{path}: key model_list: expected a non-empty list of models")
    names = []
    for index, entry in enumerate(models):
        where = f"model_list[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("model_name"), str):
            raise ProxyError(f"{path}: key {where}.model_name: expected a string")
        params = entry.get("litellm_params")
        if not isinstance(params, dict) or not isinstance(params.get("model"), str):
            raise ProxyError(f"{path}: key {where}.litellm_params.model: expected a string")
        names.append(entry["model_name"])
    return names


def _config_master_key(path: Path) -> str | None:
    data = config_data(path.read_text(encoding="utf-8"), f"--config {path}", error=ProxyError)
    settings = data.get("general_settings") if isinstance(data, dict) else None
    key = settings.get("master_key") if isinstance(settings, dict) else None
    return key if isinstance(key, str) and key else None


def _litellm_command(config: Path, port: int) -> list[str]:
    script = Path(sys.executable).with_name("litellm")
    found = str(script) if script.is_file() else shutil.which("litellm")
    if found is None:
        raise ProxyError(
            "the litellm console script is not installed next to this Python "
            f"({sys.executable}); install the project's dependencies (pyproject.toml)"
        )
    return [found, "--config", str(config), "--host", HOST, "--port", str(port)]


def read_state(state_dir: Path) -> ProxyState | None:
    """Return the recorded proxy, or ``None`` if none is recorded."""
    path = state_dir / STATE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ProxyState(
            pid=int(data["pid"]),
            port=int(data["port"]),
            config=str(data["config"]),
            log=str(data["log"]),
            command=[str(a) for a in data["command"]],
            started_at=str(data["started_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ProxyError(f"{path}: unreadable proxy state ({error}); remove it") from None


def api_key(state_dir: Path) -> str | None:
    """Return the running proxy's key: the generated one, else ``LITELLM_MASTER_KEY``."""
    path = state_dir / KEY_FILE
    if path.is_file():
        return path.read_text(encoding="utf-8").strip() or None
    return os.environ.get("LITELLM_MASTER_KEY") or None


def start(
    *,
    config: Path,
    port: int = DEFAULT_PORT,
    state_dir: Path = DEFAULT_STATE_DIR,
    wait_seconds: float = 120.0,
    environ: Mapping[str, str] | None = None,
) -> ProxyState:
    """Start the proxy in the background and wait until its health check answers."""
    if not 0 < port < 65536:
        raise ProxyError(f"--port {port}: expected 1..65535")
    config = config.resolve()
    check_config(config)
    current = status(state_dir)
    if current.alive and current.state is not None:
        raise ProxyError(
            f"a proxy is already running (pid {current.state.pid}, port {current.state.port}); "
            "run `egi-bench proxy stop` first"
        )
    _clear(state_dir)
    if not _port_free(port):
        raise ProxyError(f"--port {port}: {HOST}:{port} is already in use")

    state_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if environ is None else environ)
    # LiteLLM reads DATABASE_URL as its own (Prisma) database; the app's is not for it.
    env.pop("DATABASE_URL", None)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    if not env.get("LITELLM_MASTER_KEY") and _config_master_key(config) is None:
        key = "sk-" + secrets.token_hex(32)
        key_path = state_dir / KEY_FILE
        key_path.touch(mode=0o600)
        key_path.write_text(key + "\n", encoding="utf-8")
        env["LITELLM_MASTER_KEY"] = key
    command = _litellm_command(config, port)
    log_path = (state_dir / LOG_FILE).resolve()
    with log_path.open("ab") as log:
        process = subprocess.Popen(  # noqa: S603 - argv list, no shell
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    state = ProxyState(
        pid=process.pid,
        port=port,
        config=str(config),
        log=str(log_path),
        command=command,
        started_at=dt.datetime.now(dt.UTC).isoformat(),
    )
    partial = state_dir / (STATE_FILE + ".part")
    partial.write_text(json.dumps(asdict(state), indent=2) + "\n", encoding="utf-8")
    partial.replace(state_dir / STATE_FILE)

    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _clear(state_dir)
            raise ProxyError(
                f"the proxy exited with status {process.returncode} while starting; "
                f"its log {log_path} ends:\n{log_tail(log_path, 15)}"
            )
        if _healthy(port, timeout=1.0):
            return state
        time.sleep(0.25)
    _stop_pid(process.pid, grace_seconds=5.0)
    _clear(state_dir)
    raise ProxyError(
        f"the proxy did not answer {HEALTH_PATH} on {HOST}:{port} within {wait_seconds:g} s; "
        f"stopped it; see {log_path}"
    )


def status(state_dir: Path) -> ProxyStatus:
    """Return whether the recorded proxy process is alive and healthy."""
    state = read_state(state_dir)
    if state is None:
        return ProxyStatus(None, alive=False, healthy=False, detail="no proxy recorded")
    if not _alive(state.pid):
        return ProxyStatus(state, alive=False, healthy=False, detail=f"pid {state.pid} is gone")
    if not _healthy(state.port, timeout=2.0):
        return ProxyStatus(
            state, alive=True, healthy=False, detail=f"{HEALTH_PATH} does not answer"
        )
    return ProxyStatus(state, alive=True, healthy=True, detail="healthy")


def stop(state_dir: Path, *, grace_seconds: float = 10.0) -> ProxyState | None:
    """Stop the recorded proxy (SIGTERM, then SIGKILL after ``grace_seconds``); clear state."""
    state = read_state(state_dir)
    if state is None:
        return None
    if _alive(state.pid):
        _stop_pid(state.pid, grace_seconds=grace_seconds)
    _clear(state_dir)
    return state


def log_tail(path: Path, lines: int) -> str:
    """Return the last ``lines`` lines of ``path`` (decoded leniently)."""
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - max(lines, 1) * 400 - 4096))
        text = handle.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:]) if lines > 0 else ""


def _clear(state_dir: Path) -> None:
    for name in (STATE_FILE, KEY_FILE):
        (state_dir / name).unlink(missing_ok=True)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _healthy(port: int, *, timeout: float) -> bool:
    # No environment proxies for a loopback call.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{HOST}:{port}{HEALTH_PATH}", timeout=timeout) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _alive(pid: int) -> bool:
    try:
        # Reap it if it is our own finished child (the CLI run in-process).
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    if stat.rpartition(")")[2].split()[:1] == ["Z"]:
        return False
    # A recycled pid that is no longer a litellm process is not our proxy.
    return b"litellm" in cmdline


def _stop_pid(pid: int, *, grace_seconds: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            os.kill(pid, sig)
        deadline = time.monotonic() + grace_seconds
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.1)
