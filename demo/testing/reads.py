"""Test helpers of the read commands: a command's answer beside the API's for the same user.

:func:`assert_answers_as_the_api` is the check every read command passes: where the API
answers 200 the command's ``--format json`` prints the same JSON; where it refuses (403, 404)
the command exits with status 2 naming ``--as`` and prints nothing.
"""

from __future__ import annotations

import io
import json
from typing import Any

from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from demo.testing.grading import GradingWorld

#: The API's links start with the test client's host; the commands' with the site's address.
SITE = override_settings(ENTERPRISEVAL_SITE_URL="http://testserver")

#: The personas of a grading world every read is checked for.
PERSONAS = ("owner", "model_owner", "reviewer", "adjudicator", "grader", "outsider")


def persona(world: GradingWorld, name: str) -> Any:
    """Return the user of ``name`` in ``world`` (``grader``: its first grader)."""
    return world.graders[0] if name == "grader" else getattr(world, name)


def read(command: str, *args: str) -> str:
    """Return what ``command`` prints."""
    out = io.StringIO()
    call_command(command, *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def queries(command: str, *args: str) -> int:
    """Return how many queries ``command`` makes printing its table (the API's read and the
    rows built from it)."""
    with CaptureQueriesContext(connection) as captured:
        read(command, *args)
    return len(captured)


def refused(command: str, *args: str) -> str:
    """Return the refusal of ``command``, checking it exits 2 and prints nothing."""
    out = io.StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=io.StringIO())
    except CommandError as error:
        assert error.returncode == 2, error
        assert out.getvalue() == ""
        return str(error)
    raise AssertionError(f"{command} was not refused: {out.getvalue()[:200]}")


def api_answer(user: Any, path: str) -> tuple[int, Any]:
    """Return the status and JSON of ``GET path`` as ``user``, through the DRF test client."""
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(path)
    return response.status_code, response.json()


def assert_answers_as_the_api(user: Any, path: str, command: str, *args: str) -> int:
    """Check ``command`` answers ``user`` as ``GET path`` does; return the API's status."""
    status, api = api_answer(user, path)
    cli = [*args, "--as", user.username, "--format", "json"]
    if status == 200:
        assert json.loads(read(command, *cli)) == api
    else:
        assert status in (403, 404), api
        assert refused(command, *cli).startswith("--as: ")
    return status


def refusals_for_personas(world: GradingWorld, path: str, command: str, *args: str) -> dict:
    """Check ``command`` answers every persona as the API; return ``{persona: status}`` of
    those the API refuses."""
    statuses = {
        name: assert_answers_as_the_api(persona(world, name), path, command, *args)
        for name in PERSONAS
    }
    return {name: status for name, status in statuses.items() if status != 200}
