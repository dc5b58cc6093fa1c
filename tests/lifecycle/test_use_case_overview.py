"""The use-case overview: its page and endpoint, and the members page, per persona."""

import pytest
from django.urls import reverse

from charters.services.use_cases import use_case_create

MEMBERS = ("owner", "model_owner", "grader", "adjudicator", "reviewer")


def test_membership_on_one_use_case_gives_nothing_on_another(client, personas):
    other = use_case_create(
        actor=personas.outsider,
        key="OTHER",
        name="Other",
        business_outcome="x",
        value_hypothesis="x",
        autonomy=0,
        consequence=1,
    )
    client.force_login(personas.owner)
    response = client.get(f"/api/v1/use-cases/{other.key}/")
    assert response.status_code == 404


@pytest.mark.parametrize("name", [*MEMBERS, "outsider"])
def test_use_case_detail_is_404_for_an_outsider_and_200_for_every_member(client, personas, name):
    client.force_login(personas.by_name(name))
    response = client.get("/api/v1/use-cases/CREDIT-MEMO-B/")
    if name == "outsider":
        assert response.status_code == 404
    else:
        assert response.status_code == 200
        assert response.data["intensity"] == "E2"
        assert response.data["stages"][0]["entered_at"] is not None


@pytest.mark.parametrize("name", [*MEMBERS, "outsider"])
def test_the_use_case_page_is_404_for_an_outsider(client, personas, name):
    client.force_login(personas.by_name(name))
    response = client.get(reverse("use-case-detail", args=["CREDIT-MEMO-B"]))
    assert response.status_code == (404 if name == "outsider" else 200)


def test_the_use_case_page_shows_lifecycle_intensity_and_what_is_missing(client, personas):
    client.force_login(personas.owner)
    html = client.get(reverse("use-case-detail", args=["CREDIT-MEMO-B"])).content.decode()
    assert "evaluation intensity <strong>E2</strong>" in html
    assert "Write the charter" in html
    assert "Upload and freeze the configuration" in html
    assert "human grading with ≥ 2 graders" in html


def test_graders_see_no_link_to_configurations(client, personas):
    client.force_login(personas.grader)
    html = client.get(reverse("use-case-detail", args=["CREDIT-MEMO-B"])).content.decode()
    assert "Configurations σ" not in html


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("owner", 200),
        ("model_owner", 403),
        ("grader", 403),
        ("reviewer", 403),
        ("adjudicator", 403),
        ("outsider", 404),
    ],
)
def test_the_members_page_is_for_charter_owners(client, personas, name, expected):
    client.force_login(personas.by_name(name))
    assert client.get(reverse("use-case-members", args=["CREDIT-MEMO-B"])).status_code == expected


def test_the_members_page_reads_only_the_members(client, personas, django_assert_num_queries):
    client.force_login(personas.owner)
    # Session, user, use case, the owner's roles, the memberships with their users.
    with django_assert_num_queries(5):
        html = client.get(reverse("use-case-members", args=["CREDIT-MEMO-B"])).content.decode()
    for name in MEMBERS:
        assert f'value="{name}|' in html, name
