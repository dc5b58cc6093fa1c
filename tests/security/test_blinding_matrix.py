"""Blinding is a property of a person on a use case (docs/security.md, issue 17 findings 1, 3).

The route × persona matrix: every GET route of the URL conf, with every argument a curious
person would try, requested as each person who holds the grader role together with another
role. Whatever else they hold, nothing that names provenance (σ names and hashes, models,
"baseline", strata, run/output/artefact ids, other graders' names, another artefact's text
outside the blind adjudication pages) reaches them, and no request answers 500. Two such
people:

* a grader who is also a named adjudicator of the session (the one combination the policy
  allows): the adjudication pages admit them, and only those;
* a grader whose membership rows also say charter owner, model owner, reviewer and
  adjudicator (rows written before the policy, behind the services): they act as a grader.

Then the combinations the policy refuses are refused by the grant service, the API and the
admin's membership form, leaving no row and no audit entry.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from audit.models import AuditEntry
from charters.models import Membership, Role
from charters.permissions import ROLES_EXCLUDED_FOR_GRADERS, user_roles
from charters.services.use_cases import membership_grant
from demo.testing.grading import GradingWorld, grade_apart, make_world
from enterpriseval.errors import ConflictError


def _blinding_scan() -> ModuleType:
    # The scanner of tests/grading/test_blinding.py, loaded by path: the test folders are
    # not packages.
    path = Path(__file__).resolve().parents[1] / "grading" / "test_blinding.py"
    spec = importlib.util.spec_from_file_location("_blinding_scan", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_scan = _blinding_scan()
Forbidden, Scan, routes, scan_gets = _scan.Forbidden, _scan.Scan, _scan.routes, _scan.scan_gets

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(db) -> GradingWorld:
    return make_world(include_baselines=True, sample_size=12)


def scan_everything(world: GradingWorld, person) -> Scan:
    """Request every route as ``person``; return the scan (leaks, reachable pages)."""
    kinds = {a.kind: a for a in world.session.artefacts.order_by("kind", "pk")}
    for artefact in kinds.values():
        grade_apart(artefact)  # so the adjudication queue has something to show
    scan = Scan(world, person)
    # The person's grading peers and the named adjudicator are co-graders' identities too.
    scan.forbidden += [
        Forbidden(f"user name {user.username!r}", re.compile(re.escape(user.username), re.I))
        for user in (*world.graders, world.adjudicator, world.owner, world.model_owner)
        if user != person
    ]
    # The adjudication pages show artefacts' content by design (never their provenance).
    scan.artefact_texts = {}
    statuses: list[str] = []
    original_get = scan.get

    def get(path: str) -> None:
        response = scan.client.get(path)
        if response.status_code >= 500:
            statuses.append(f"GET {path} answered {response.status_code}")
        original_get(path)

    scan.get = get  # type: ignore[method-assign]
    scan_gets(scan, world, person, lambda _name: True)
    scan.leaks += statuses
    return scan


def test_a_grader_who_adjudicates_sees_no_provenance_anywhere(world):
    person = world.graders[1]
    membership_grant(actor=world.owner, use_case=world.use_case, user=person, role=Role.ADJUDICATOR)
    world.session.adjudicators.add(person)
    assert user_roles(person, world.use_case) == {Role.GRADER}
    assert user_roles(person, world.use_case, blind=True) == {Role.GRADER, Role.ADJUDICATOR}

    scan = scan_everything(world, person)

    assert not scan.leaks, "\n".join(scan.leaks)
    adjudication = [path for path in scan.reachable if "/adjudication/" in path]
    assert any(world.session.public_id in path for path in adjudication), scan.reachable
    assert f"/use-cases/{world.use_case.key}/audit/" not in scan.reachable


def test_a_grader_with_every_other_role_on_record_still_acts_as_a_grader_only(world):
    person = world.graders[2]
    for role in (*ROLES_EXCLUDED_FOR_GRADERS, Role.ADJUDICATOR):
        # Rows written behind the grant service (before the policy existed).
        Membership.objects.create(use_case=world.use_case, user=person, role=role)
    world.session.adjudicators.add(person)

    scan = scan_everything(world, person)

    assert not scan.leaks, "\n".join(scan.leaks)
    key = world.use_case.key
    sighted = [
        path
        for path in scan.reachable
        if path.startswith(f"/use-cases/{key}/")
        and "/adjudication/" not in path  # blind by design; they are a named adjudicator
        and path != f"/use-cases/{key}/"
    ]
    assert not sighted, f"pages outside adjudication answered a grader: {sighted}"


def test_the_matrix_covers_every_route_of_the_url_conf():
    names = {route.name for route in routes()}
    for expected in (
        "use-case-audit",
        "charter-detail",
        "run-detail",
        "configuration",
        "decision-list",
        "scorecard-detail",
        "grading-adjudication-item",
    ):
        assert any(expected in name for name in names), expected


# -- membership combinations ------------------------------------------------------------------

REFUSED = [(Role.GRADER, role) for role in ROLES_EXCLUDED_FOR_GRADERS] + [
    (role, Role.GRADER) for role in ROLES_EXCLUDED_FOR_GRADERS
]


@pytest.mark.parametrize(("held", "added"), REFUSED, ids=lambda r: str(r))
def test_the_grant_service_refuses_a_grader_a_sighted_role(personas, held, added):
    user = personas.outsider
    membership_grant(actor=personas.owner, use_case=personas.use_case, user=user, role=held)
    entries = AuditEntry.objects.count()
    with pytest.raises(ConflictError, match="blind to provenance"):
        membership_grant(actor=personas.owner, use_case=personas.use_case, user=user, role=added)
    assert not Membership.objects.filter(user=user, role=added).exists()
    assert AuditEntry.objects.count() == entries


@pytest.mark.parametrize("role", ROLES_EXCLUDED_FOR_GRADERS, ids=str)
def test_the_api_refuses_a_grader_a_sighted_role(personas, role):
    client = APIClient()
    client.force_authenticate(personas.owner)
    response = client.post(
        "/api/v1/use-cases/CREDIT-MEMO-B/members/",
        {"username": personas.grader.username, "role": str(role)},
        format="json",
    )
    assert response.status_code == 409, response.content
    assert "blind to provenance" in response.content.decode()
    assert not Membership.objects.filter(user=personas.grader, role=role).exists()


@pytest.mark.parametrize("role", ROLES_EXCLUDED_FOR_GRADERS, ids=str)
def test_the_admin_membership_form_refuses_a_grader_a_sighted_role(admin_client, personas, role):
    response = admin_client.post(
        reverse("admin:charters_membership_add"),
        {"use_case": personas.use_case.pk, "user": personas.grader.pk, "role": str(role)},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "blind to provenance" in response.content.decode()
    assert not Membership.objects.filter(user=personas.grader, role=role).exists()


def test_the_admin_grants_an_allowed_role_through_the_audited_service(admin_client, personas):
    response = admin_client.post(
        reverse("admin:charters_membership_add"),
        {"use_case": personas.use_case.pk, "user": personas.grader.pk, "role": "adjudicator"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Membership.objects.filter(user=personas.grader, role=Role.ADJUDICATOR).exists()
    last = AuditEntry.objects.order_by("-sequence").first()
    assert last.action == "membership.grant"
    assert last.payload == {"user": personas.grader.username, "role": "adjudicator"}


def test_the_admin_cannot_edit_a_membership_row(admin_client, personas):
    membership = Membership.objects.get(user=personas.grader)
    response = admin_client.post(
        reverse("admin:charters_membership_change", args=[membership.pk]),
        {"use_case": personas.use_case.pk, "user": personas.grader.pk, "role": "reviewer"},
    )
    assert response.status_code == 403
    membership.refresh_from_db()
    assert membership.role == Role.GRADER
