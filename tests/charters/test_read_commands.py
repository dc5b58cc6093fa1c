"""The charter stage's read commands answer as the API answers the same user.

``use_cases_list``, ``members_list``, ``audit_log``, ``charters_list``, ``charter_show``,
``configurations_list``, ``configuration_show``, ``configuration_parity``, ``task_sets_list``;
and the reader they share (``charters/management/api_reads.py``): refusals, site links, throttles.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import UserRateThrottle

from audit.models import AuditEntry
from charters.api.use_cases import MembershipListApi
from charters.models import Charter, Configuration, Membership, Role, Task
from charters.services.charters import charter_revise
from charters.services.configurations import configuration_upload
from charters.services.use_cases import membership_grant
from demo.testing.grading import EXAMPLES, make_world
from demo.testing.reads import (
    SITE,
    queries,
    read,
    refusals_for_personas,
    refused,
)


@pytest.fixture
def world(db):
    return make_world()


def reads(world) -> dict[str, tuple[str, list[str]]]:
    """Each command's API path and arguments, on ``world``."""
    key = world.use_case.key
    base = f"/api/v1/use-cases/{key}"
    uc = ["--use-case", key]
    return {
        "use_cases_list": ("/api/v1/use-cases/", []),
        "members_list": (f"{base}/members/", uc),
        "audit_log": (f"{base}/audit/?limit=3&offset=2", [*uc, "--limit", "3", "--offset", "2"]),
        "charters_list": (f"{base}/charters/", uc),
        "charter_show": (f"{base}/charters/1/", [*uc, "--charter", "1"]),
        "configurations_list": (f"{base}/configurations/", uc),
        "configuration_show": (
            f"{base}/configurations/gemini-2-5/1/",
            [*uc, "--configuration", "gemini-2-5:1"],
        ),
        "configuration_parity": (
            f"{base}/configurations/parity/?a=gemini-2-5:1&b=llama-4:1",
            [*uc, "--a", "gemini-2-5:1", "--b", "llama-4:1"],
        ),
        "task_sets_list": (f"{base}/task-sets/", uc),
    }


# Who the API refuses (the session is open, so the use case is blinded to its graders).
REFUSED = {
    "use_cases_list": {},
    "members_list": {"outsider": 404},
    "audit_log": {"grader": 403, "outsider": 404},
    "charters_list": {"grader": 403, "outsider": 404},
    "charter_show": {"grader": 403, "outsider": 404},
    "configurations_list": {"grader": 403, "outsider": 404},
    "configuration_show": {"grader": 403, "outsider": 404},
    "configuration_parity": {"grader": 403, "outsider": 404},
    "task_sets_list": {"grader": 403, "outsider": 404},
}


@SITE
@pytest.mark.parametrize("command", list(REFUSED))
def test_json_is_the_api_answer_and_refusals_are_the_apis(world, command):
    path, args = reads(world)[command]
    assert refusals_for_personas(world, path, command, *args) == REFUSED[command]


def test_an_outsider_is_refused_naming_as_and_nothing_is_printed(world):
    key = world.use_case.key
    for command, (_path, args) in reads(world).items():
        if command != "use_cases_list":
            message = refused(command, *args, "--as", "outsider")
            assert message == f"--as: outsider holds no role on {key}", command
    assert read("use_cases_list", "--as", "outsider").startswith("0 use case(s) of outsider.")


def test_a_grader_is_refused_with_the_apis_reason(world):
    grader = world.graders[0].username
    message = refused("configurations_list", "--use-case", world.use_case.key, "--as", grader)
    assert message.startswith("--as: Graders do not see")


def test_unknown_use_case_object_and_user_are_named(world):
    key = world.use_case.key
    assert refused("members_list", "--use-case", "NOPE", "--as", "demo-owner") == (
        "--use-case: no use case 'NOPE'"
    )
    assert refused("members_list", "--use-case", key, "--as", "nobody") == "--as: no user 'nobody'"
    assert refused("charter_show", "--use-case", key, "--charter", "9", "--as", "demo-owner") == (
        f"--charter: {key} has no charter v9."
    )
    missing = refused(
        "configuration_show", "--use-case", key, "--configuration", "gemini-2-5:9",
        "--as", "demo-owner",
    )  # fmt: skip
    assert missing == f"--configuration: {key} has no σ gemini-2-5 version 9."
    bad = refused(
        "configuration_parity", "--use-case", key, "--a", "gemini", "--b", "llama-4:1",
        "--as", "demo-owner",
    )  # fmt: skip
    assert bad == "--a: a must be name:version of a σ, e.g. gemini-2-5-pro:1 (got 'gemini')"


def test_use_cases_list_gives_roles_and_hides_the_stage_from_a_grader(world):
    membership_grant(
        actor=world.owner, use_case=world.use_case, user=world.outsider, role=Role.REVIEWER
    )
    membership_grant(
        actor=world.owner, use_case=world.use_case, user=world.outsider, role=Role.ADJUDICATOR
    )
    lines = read("use_cases_list", "--as", "outsider").splitlines()
    assert lines[0] == "1 use case(s) of outsider."
    assert lines[3].split()[0] == world.use_case.key
    assert "adjudicator, reviewer" in lines[3] and lines[3].endswith(
        world.use_case.get_stage_display()
    )
    grader = read("use_cases_list", "--as", world.graders[0].username).splitlines()[3]
    assert grader.endswith("grader  E2         —")


def test_members_list_counts_every_member_and_a_grader_sees_themself(world):
    key = world.use_case.key
    count = Membership.objects.filter(use_case=world.use_case).count()
    lines = read("members_list", "--use-case", key, "--as", "demo-reviewer").splitlines()
    assert lines[0] == f"{count} membership(s) of {key}."
    assert len(lines) == 3 + count
    names = {line.split()[0] for line in lines[3:]}
    assert {"demo-owner", "demo-reviewer", "grader-two"} <= names
    grader = read("members_list", "--use-case", key, "--as", "grader-two").splitlines()
    assert grader[0] == f"1 membership(s) of {key}."
    assert grader[3].split()[:2] == ["grader-two", "grader"]


@SITE
def test_audit_log_pages_as_the_api_and_links_start_with_the_site(world, settings):
    key = world.use_case.key
    entries = AuditEntry.objects.filter(use_case_id=world.use_case.pk).order_by("-sequence")
    total = entries.count()
    lines = read(
        "audit_log", "--use-case", key, "--limit", "2", "--offset", "1", "--as", "demo-owner"
    ).splitlines()
    assert lines[0] == (
        f"{total} audit entries of {key}; 2–3 shown, newest first; chain verified "
        f"({AuditEntry.objects.count()} entries)."
    )
    assert [int(line.split()[0]) for line in lines[3:]] == [e.sequence for e in entries[1:3]]
    assert lines[3].split()[-1] == entries[1].entry_hash
    settings.ENTERPRISEVAL_SITE_URL = "https://ev.bank.example/ev/"
    page = json.loads(
        read("audit_log", "--use-case", key, "--limit", "2", "--as", "demo-owner", "--format=json")
    )
    assert (
        page["next"] == f"https://ev.bank.example/ev/api/v1/use-cases/{key}/audit/?limit=2&offset=2"
    )
    assert page["previous"] is None and page["count"] == total


def test_charters_list_and_show_give_the_signed_sha256_from_the_database(world):
    key = world.use_case.key
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    charter_revise(actor=world.owner, charter=charter, reason="tighten θ")
    lines = read("charters_list", "--use-case", key, "--as", "demo-model-owner").splitlines()
    assert lines[0] == f"2 charter version(s) of {key}."
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["v1"][1:3] == ["signed", charter.sha256]
    assert rows["v2"][1:3] == ["draft", "—"] and "v1" in rows["v2"]
    shown = read("charter_show", "--use-case", key, "--charter", "1", "--as", "demo-reviewer")
    assert f"\nSHA-256 {charter.sha256}\n" in shown
    for metric in charter.metrics.all():
        row = next(line for line in shown.splitlines() if line.startswith(metric.metric_id + " "))
        assert row.split()[1] == metric.treatment
        if metric.theta_out is not None:
            assert row.split()[3:5] == [str(metric.theta_out), str(metric.theta_in)]
    assert "signing role" in shown and "demo-reviewer" in shown


def test_configurations_are_listed_and_shown_with_the_sha256_of_their_canonical_json(world):
    key = world.use_case.key
    sigmas = Configuration.objects.filter(use_case=world.use_case).order_by("name")
    lines = read("configurations_list", "--use-case", key, "--as", "demo-owner").splitlines()
    assert lines[0] == f"{sigmas.count()} σ version(s) of {key}."
    assert [line.split()[:2] for line in lines[3:]] == [
        [f"{s.name}:{s.version}", s.sha256] for s in sigmas
    ]
    shown = read(
        "configuration_show", "--use-case", key, "--configuration", "llama-4:1", "--as",
        "demo-adjudicator",
    ).splitlines()  # fmt: skip
    llama = sigmas.get(name="llama-4")
    assert shown[1] == f"SHA-256 {llama.sha256}"
    assert hashlib.sha256(shown[2].encode()).hexdigest() == llama.sha256


def test_configuration_parity_names_the_model_as_the_only_difference(world):
    printed = read(
        "configuration_parity", "--use-case", world.use_case.key, "--a", "gemini-2-5:1", "--b",
        "llama-4:1", "--as", "demo-owner",
    ).splitlines()  # fmt: skip
    assert printed[0] == "σ gemini-2-5:1 vs llama-4:1: attributable to the model alone."
    column = printed[1].index("differs")
    differs = {line.split()[0]: line[column:].split()[0] for line in printed[3:]}
    assert differs.pop("M") == "yes" and set(differs.values()) == {"no"} and len(differs) >= 4
    model = next(line for line in printed if line.startswith("M "))
    assert "model.provider: gemini → together_ai" in model


def test_task_sets_list_gives_the_task_count_from_the_database(world):
    key = world.use_case.key
    lines = read("task_sets_list", "--use-case", key, "--as", "demo-owner").splitlines()
    task_set = world.runs[0].task_set
    assert lines[0] == f"1 task set(s) of {key}."
    row = lines[3].split()
    assert row[:3] == [f"{task_set.name}:1", task_set.manifest_sha256, str(Task.objects.count())]


def test_list_queries_do_not_grow_with_the_rows(world):
    key = world.use_case.key
    uc = ["--use-case", key, "--as", "demo-owner"]
    before = {
        "members_list": queries("members_list", *uc),
        "configurations_list": queries("configurations_list", *uc),
        "charters_list": queries("charters_list", *uc),
        "audit_log": queries("audit_log", *uc, "--limit", "1"),
    }
    for name in ("extra-1", "extra-2", "extra-3"):
        user = world.outsider.__class__.objects.create_user(username=name)
        membership_grant(actor=world.owner, use_case=world.use_case, user=user, role=Role.REVIEWER)
    sigma = (EXAMPLES / "sigma-llama-4.yaml").read_text(encoding="utf-8")
    for name in ("copy-1", "copy-2"):
        configuration_upload(
            actor=world.model_owner, use_case=world.use_case, name=name, content=sigma
        )
    charter_revise(
        actor=world.owner, charter=Charter.objects.get(use_case=world.use_case), reason="v2"
    )
    after = {
        "members_list": queries("members_list", *uc),
        "configurations_list": queries("configurations_list", *uc),
        "charters_list": queries("charters_list", *uc),
        "audit_log": queries("audit_log", *uc, "--limit", "20"),
    }
    assert after == before


class TwoAMinute(UserRateThrottle):
    rate = "2/min"


def test_command_reads_are_not_throttled_and_spend_none_of_a_users_api_limit(world, monkeypatch):
    monkeypatch.setattr(MembershipListApi, "throttle_classes", [TwoAMinute])
    cache.clear()
    path = reverse("api-membership-list", args=[world.use_case.key])
    client = APIClient()
    client.force_authenticate(world.owner)
    assert client.get(path).status_code == 200
    for _ in range(3):
        read("members_list", "--use-case", world.use_case.key, "--as", "demo-owner")
    assert client.get(path).status_code == 200
    assert client.get(path).status_code == 429
