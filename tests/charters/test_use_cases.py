"""Use cases, memberships and stage moves: services, API, dashboard and creation, per persona."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.models import Membership, Role, Stage, StageEvent, UseCase
from charters.services.use_cases import (
    membership_grant,
    membership_revoke,
    use_case_advance,
    use_case_create,
)
from enterpriseval.errors import ConflictError

MEMBERS = ("owner", "model_owner", "grader", "adjudicator", "reviewer")


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_creating_a_use_case_derives_intensity_and_makes_the_creator_its_owner(personas):
    use_case = personas.use_case
    assert use_case.intensity == 2  # ⌈(1 + 3) / 2⌉, SPEC §2: A1/C3 → E2
    assert use_case.stage == Stage.CHARTER
    assert Membership.objects.filter(
        use_case=use_case, user=personas.owner, role=Role.CHARTER_OWNER
    ).exists()
    assert StageEvent.objects.filter(use_case=use_case, stage=Stage.CHARTER).count() == 1
    created = AuditEntry.objects.get(action="usecase.create")
    assert created.payload["intensity"] == "E2"
    assert created.use_case_id == use_case.pk


@pytest.mark.parametrize(
    ("autonomy", "consequence", "intensity"),
    [(2, 3, 3), (1, 3, 2), (1, 2, 2), (0, 1, 1), (4, 4, 4), (3, 2, 3)],
)
def test_intensity_is_the_ceiling_of_the_mean_of_autonomy_and_consequence(
    autonomy, consequence, intensity
):
    assert UseCase(autonomy=autonomy, consequence=consequence).intensity == intensity


def test_a_duplicate_key_is_refused_naming_the_key(personas):
    with pytest.raises(ConflictError) as raised:
        use_case_create(
            actor=personas.owner,
            key="CREDIT-MEMO-B",
            name="x",
            business_outcome="x",
            value_hypothesis="x",
            autonomy=1,
            consequence=1,
        )
    assert raised.value.field == "key"


def test_stages_only_move_forward_and_each_entry_is_timestamped(personas):
    use_case = personas.use_case
    use_case_advance(actor=personas.owner, use_case=use_case, stage=Stage.GOLD_SET)
    use_case_advance(actor=personas.model_owner, use_case=use_case, stage=Stage.CONFIGURE)
    use_case_advance(actor=personas.owner, use_case=use_case, stage=Stage.CONFIGURE)
    use_case_advance(actor=personas.owner, use_case=use_case, stage=Stage.GOLD_SET)
    use_case.refresh_from_db()
    assert use_case.stage == Stage.GOLD_SET
    # The stage passed over gets its entry once, late, by whoever took its step.
    assert list(
        StageEvent.objects.filter(use_case=use_case).values_list("stage", "actor__username")
    ) == [
        (Stage.CHARTER, "owner"),
        (Stage.GOLD_SET, "owner"),
        (Stage.CONFIGURE, "model_owner"),
    ]


def test_a_grader_cannot_also_hold_a_role_that_sees_provenance(personas):
    with pytest.raises(ConflictError, match="blind to provenance"):
        membership_grant(
            actor=personas.owner,
            use_case=personas.use_case,
            user=personas.grader,
            role=Role.MODEL_OWNER,
        )
    with pytest.raises(ConflictError, match="blind to provenance"):
        membership_grant(
            actor=personas.owner,
            use_case=personas.use_case,
            user=personas.reviewer,
            role=Role.GRADER,
        )


def test_the_last_charter_owner_cannot_be_removed(personas):
    with pytest.raises(ConflictError, match="at least one charter owner"):
        membership_revoke(
            actor=personas.owner,
            use_case=personas.use_case,
            user=personas.owner,
            role=Role.CHARTER_OWNER,
        )


# ---------------------------------------------------------------- API, per persona


def test_the_use_case_list_shows_only_use_cases_the_user_belongs_to(personas):
    for name in MEMBERS:
        keys = [row["key"] for row in api(personas.by_name(name)).get("/api/v1/use-cases/").data]
        assert keys == ["CREDIT-MEMO-B"], name
    assert api(personas.outsider).get("/api/v1/use-cases/").data == []


def test_the_api_requires_authentication():
    response = api().get("/api/v1/use-cases/")
    assert response.status_code in (401, 403)
    assert "error" in response.json()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("owner", 201),
        ("model_owner", 403),
        ("grader", 403),
        ("adjudicator", 403),
        ("reviewer", 403),
        ("outsider", 404),
    ],
)
def test_only_the_charter_owner_grants_roles(personas, django_user_model, name, expected):
    django_user_model.objects.create_user(username="newcomer")
    response = api(personas.by_name(name)).post(
        "/api/v1/use-cases/CREDIT-MEMO-B/members/",
        {"username": "newcomer", "role": "grader"},
        format="json",
    )
    # A grant answers 202 whether or not the user name exists (issue 17, finding 10).
    assert response.status_code == (202 if expected == 201 else expected)
    granted = Membership.objects.filter(user__username="newcomer").exists()
    assert granted is (expected == 201)


def test_creating_a_use_case_through_the_api_returns_it_with_its_intensity(personas):
    response = api(personas.owner).post(
        "/api/v1/use-cases/",
        {
            "key": "CTRL-A",
            "name": "Control assessment",
            "business_outcome": "b",
            "value_hypothesis": "v",
            "autonomy": 2,
            "consequence": 3,
        },
        format="json",
    )
    assert response.status_code == 201
    assert response.data["intensity"] == "E3"


def test_bad_api_input_names_the_field(personas):
    response = api(personas.owner).post(
        "/api/v1/use-cases/", {"key": "bad key!", "name": "x"}, format="json"
    )
    assert response.status_code == 400


def test_revoking_a_role_is_audited(personas):
    response = api(personas.owner).delete("/api/v1/use-cases/CREDIT-MEMO-B/members/grader/grader/")
    assert response.status_code == 204
    assert not Membership.objects.filter(user=personas.grader).exists()
    assert AuditEntry.objects.filter(action="membership.revoke").count() == 1


def test_the_use_case_list_uses_a_fixed_number_of_queries(personas, django_assert_num_queries):
    for index in range(5):
        use_case_create(
            actor=personas.owner,
            key=f"UC-{index}",
            name="x",
            business_outcome="x",
            value_hypothesis="x",
            autonomy=1,
            consequence=2,
        )
    client = api(personas.owner)
    with django_assert_num_queries(2):
        response = client.get("/api/v1/use-cases/")
    assert len(response.data) == 6


# ---------------------------------------------------------------- pages


def test_pages_redirect_anonymous_users_to_sign_in(client):
    response = client.get(reverse("dashboard"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_dashboard_escapes_untrusted_text(client, personas):
    use_case_create(
        actor=personas.owner,
        key="XSS",
        name="<script>alert(1)</script>",
        business_outcome="x",
        value_hypothesis="x",
        autonomy=1,
        consequence=1,
    )
    client.force_login(personas.owner)
    html = client.get(reverse("dashboard")).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_creating_a_use_case_in_the_browser_form(client, personas):
    client.force_login(personas.owner)
    response = client.post(
        reverse("use-case-new"),
        {
            "key": "UC-C",
            "name": "Procedure transformation",
            "business_outcome": "b",
            "value_hypothesis": "v",
            "autonomy": 1,
            "consequence": 2,
        },
    )
    assert response.status_code == 302
    assert UseCase.objects.get(key="UC-C").intensity == 2


def test_a_grader_sees_no_stage_of_a_use_case_on_the_dashboard_or_the_list_api(client, personas):
    personas.use_case.stage = Stage.DECIDE
    personas.use_case.save(update_fields=["stage"])
    client.force_login(personas.owner)
    assert Stage.DECIDE.label in client.get(reverse("dashboard")).content.decode()
    owner_rows = {row["key"]: row for row in api(personas.owner).get("/api/v1/use-cases/").data}
    assert owner_rows[personas.use_case.key]["stage_label"] == Stage.DECIDE.label

    client.force_login(personas.grader)
    html = client.get(reverse("dashboard")).content.decode()
    assert personas.use_case.key in html
    assert Stage.DECIDE.label not in html
    assert "Decide and monitor" not in html
    rows = {row["key"]: row for row in api(personas.grader).get("/api/v1/use-cases/").data}
    assert "stage" not in rows[personas.use_case.key]
    assert "stage_label" not in rows[personas.use_case.key]
