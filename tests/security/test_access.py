"""Issue 17 finding 10: who creates use cases, who grants roles, who reads the benchmarks.

The rules (docs/operations.md, "Access"):
- creating a use case needs the site permission ``charters.add_usecase``, which an
  administrator grants to a user or a group;
- only a use case's charter owner grants roles on it, and a grant answers the same whether
  or not the user name exists;
- an anonymous API call is answered 401 with a ``WWW-Authenticate`` challenge;
- the benchmark pages are for staff and for members of a use case, never for anyone who
  grades on any use case.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from charters.models import Membership, Role, UseCase
from charters.services.use_cases import membership_grant

KEY = "CREDIT-MEMO-B"
PERSONA_NAMES = ("owner", "model_owner", "grader", "adjudicator", "reviewer", "outsider")
NEW_USE_CASE = {
    "key": "CTRL-A",
    "name": "Control assessment",
    "business_outcome": "b",
    "value_hypothesis": "v",
    "autonomy": 2,
    "consequence": 3,
}


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --------------------------------------------------------------------------- creating use cases


@pytest.mark.parametrize("name", [n for n in PERSONA_NAMES if n != "owner"])
def test_a_user_without_the_site_permission_cannot_create_a_use_case(personas, name):
    user = personas.by_name(name)
    response = api(user).post("/api/v1/use-cases/", NEW_USE_CASE, format="json")
    assert response.status_code == 403
    assert "charters.add_usecase" in response.json()["error"]["message"]
    page = browser(user).get(reverse("use-case-new"))
    assert page.status_code == 403
    posted = browser(user).post(reverse("use-case-new"), NEW_USE_CASE)
    assert posted.status_code == 403
    assert not UseCase.objects.filter(key="CTRL-A").exists()


def test_the_permission_granted_to_a_group_lets_its_members_create_use_cases(personas):
    creators = Group.objects.create(name="use-case creators")
    creators.permissions.add(Permission.objects.get(codename="add_usecase"))
    personas.outsider.groups.add(creators)
    outsider = get_user_model().objects.get(pk=personas.outsider.pk)  # fresh permission cache
    assert browser(outsider).get(reverse("use-case-new")).status_code == 200
    response = api(outsider).post("/api/v1/use-cases/", NEW_USE_CASE, format="json")
    assert response.status_code == 201
    assert Membership.objects.filter(
        use_case__key="CTRL-A", user=outsider, role=Role.CHARTER_OWNER
    ).exists()


def test_the_dashboard_offers_a_new_use_case_only_to_those_who_may_create_one(personas):
    link = reverse("use-case-new")
    assert link in browser(personas.owner).get(reverse("dashboard")).content.decode()
    assert link not in browser(personas.reviewer).get(reverse("dashboard")).content.decode()


# --------------------------------------------------------------------------- granting roles


def grant(user, username: str, role: str = "reviewer"):
    return api(user).post(
        f"/api/v1/use-cases/{KEY}/members/", {"username": username, "role": role}, format="json"
    )


def test_a_grant_answers_alike_for_an_unknown_user_name_and_a_real_non_member(personas):
    get_user_model().objects.create_user("real-person")
    real = grant(personas.owner, "real-person")
    made_up = grant(personas.owner, "made-up-person")
    assert real.status_code == made_up.status_code == 202
    assert real.json().keys() == made_up.json().keys()
    assert real.json()["message"].replace("real-person", "X") == made_up.json()["message"].replace(
        "made-up-person", "X"
    )
    assert Membership.objects.filter(user__username="real-person", role=Role.REVIEWER).exists()
    assert not Membership.objects.filter(user__username="made-up-person").exists()


def test_a_grant_to_an_inactive_account_is_answered_alike_and_grants_nothing(personas):
    get_user_model().objects.create_user("left-the-bank", is_active=False)
    response = grant(personas.owner, "left-the-bank")
    assert response.status_code == 202
    assert not Membership.objects.filter(user__username="left-the-bank").exists()


def test_the_members_page_answers_alike_for_an_unknown_user_name(personas):
    get_user_model().objects.create_user("real-person")
    client = browser(personas.owner)
    url = reverse("use-case-members", args=[KEY])
    real = client.post(url, {"username": "real-person", "role": "reviewer"}, follow=True)
    made_up = client.post(url, {"username": "made-up-person", "role": "reviewer"}, follow=True)
    assert real.status_code == made_up.status_code == 200
    assert [str(m) for m in real.context["messages"]] == [
        "If an active account has the user name real-person, it now holds the role "
        f"{Role.REVIEWER.label}; the members list shows every role held."
    ]
    assert [
        str(m).replace("made-up-person", "real-person") for m in made_up.context["messages"]
    ] == [str(m) for m in real.context["messages"]]
    assert "No user with this user name" not in made_up.content.decode()


@pytest.mark.parametrize(
    ("name", "status"),
    [("model_owner", 403), ("grader", 403), ("adjudicator", 403), ("reviewer", 403)],
)
def test_only_the_charter_owner_grants_roles_on_a_use_case(personas, name, status):
    assert grant(personas.by_name(name), "made-up-person").status_code == status
    assert grant(personas.by_name(name), "outsider").status_code == status
    assert not Membership.objects.filter(user=personas.outsider).exists()
    assert grant(personas.outsider, "outsider").status_code == 404


# --------------------------------------------------------------------------- anonymous API


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/use-cases/",
        f"/api/v1/use-cases/{KEY}/members/",
        "/api/v1/schemas/configuration.json",
    ],
)
def test_an_anonymous_api_call_is_401_with_a_challenge(db, url):
    response = APIClient().get(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "not_authenticated"


# --------------------------------------------------------------------------- benchmarks

BENCHMARK_PAGES = ("egi-roster",)


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("owner", 200),
        ("model_owner", 200),
        ("adjudicator", 200),
        ("reviewer", 200),
        ("grader", 403),
        ("outsider", 403),
    ],
)
def test_the_benchmark_pages_are_for_members_who_do_not_grade(personas, name, status):
    for page in BENCHMARK_PAGES:
        assert browser(personas.by_name(name)).get(reverse(page)).status_code == status
    missing = browser(personas.by_name(name)).get(reverse("egi-result", args=[999]))
    assert missing.status_code == (404 if status == 200 else 403)


def test_staff_read_the_benchmarks_unless_they_grade_somewhere(personas):
    staff = get_user_model().objects.create_user("risk-officer", is_staff=True)
    assert browser(staff).get(reverse("egi-roster")).status_code == 200
    membership_grant(actor=personas.owner, use_case=personas.use_case, user=staff, role=Role.GRADER)
    assert browser(staff).get(reverse("egi-roster")).status_code == 403


def test_a_grader_who_holds_another_role_elsewhere_still_cannot_read_the_benchmarks(personas):
    from charters.services.use_cases import use_case_create

    other = use_case_create(
        actor=personas.owner,
        key="OTHER",
        name="Other",
        business_outcome="b",
        value_hypothesis="v",
        autonomy=1,
        consequence=1,
    )
    membership_grant(actor=personas.owner, use_case=other, user=personas.grader, role=Role.REVIEWER)
    assert browser(personas.grader).get(reverse("egi-roster")).status_code == 403
