"""The security suite's browser tests use the e2e suite's Chromium fixtures (one definition).

Loaded by path: a package named ``tests`` in site-packages shadows this folder's name.
"""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "e2e_conftest", Path(__file__).resolve().parents[1] / "e2e" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)
browser = _e2e.browser
page = _e2e.page
sign_in = _e2e.sign_in
