"""One use case from an empty database to a signed-off scorecard, by the command line only.

The README's worked sequence ("Command line"), run through ``call_command``: accounts, the use
case and its members, a charter signed by three people, σ, a task set, a run (an outputs
import), the built-in judge, a grading session (one grader grading with the grader's commands,
the other's grades imported from a grading tool's file), one disagreement adjudicated, the
decision, and the scorecard drafted, filled in, signed off, printed to PDF and packed as
evidence. The only thing written outside the commands is the second grader's grades file, as
a grading tool would write it.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command

from audit.canonical import canonical_json, sha256_hex
from audit.models import AuditEntry
from charters.models import Charter, Stage, UseCase
from demo.testing.grading import grade_queue_by_command
from grading.models import GradingSession
from grading.rubric import FIELDS_BY_KIND, is_asked
from grading.selectors.artefacts import units_of
from scorecards.models import Scorecard, ScorecardStatus

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "credit_memo"
#: Where the dissenting grader's values differ: fields no other field depends on.
DISSENT = {("s1", "relevant"): "N", ("artefact", "value_add"): "2"}
KEY = "CREDIT-MEMO-B"


def cli(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def graded(template: Path, target: Path, *, dissenting: tuple[str, str], grader: str) -> None:
    """Write ``grader``'s grading tool's file: every asked field of each of their lines of the
    export's template, the first value of each; ``dissenting`` = (grader, artefact) disagrees."""
    session = GradingSession.objects.get()
    artefacts = {a.public_id: a for a in session.artefacts.all()}
    units = units_of(list(artefacts.values()))
    lines = []
    for raw in template.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if line["grader"] != grader:
            continue
        dissent = (line["grader"], line["artefact"]) == dissenting
        grades: dict[str, dict[str, str]] = {}
        for unit in units[artefacts[line["artefact"]].pk]:
            values = grades.setdefault(unit.key, {})
            for spec in FIELDS_BY_KIND[unit.kind]:
                if is_asked(spec.name, values):
                    choice = DISSENT.get((unit.key, spec.name)) if dissent else None
                    values[spec.name] = choice or spec.values[0]
        lines.append(
            json.dumps({"artefact": line["artefact"], "grader": line["grader"], "grades": grades})
        )
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_use_case_reaches_a_signed_scorecard_by_the_command_line_only(db, tmp_path, monkeypatch):
    assert not get_user_model().objects.exists() and not UseCase.objects.exists()
    monkeypatch.setenv("EV_PASSWORD", "correct-Horse-battery-7")

    # Accounts: the charter owner may create use cases; the others get roles on one.
    cli(
        "user_create",
        "--username=olivia",
        "--password-env=EV_PASSWORD",
        "--permission=charters.add_usecase",
    )
    for name in ("mo", "rita", "gina", "gabe", "adam"):
        cli("user_create", f"--username={name}", "--password-env=EV_PASSWORD")

    # Stage 1: the use case, its members, the charter signed by three people.
    cli(
        "use_case_create",
        f"--key={KEY}",
        "--name=Credit-memo drafting",
        "--business-outcome=Analysts draft credit-memo sections faster.",
        "--value-hypothesis=Drafting time halves with no rise in unsupported statements.",
        "--autonomy=A1",
        "--consequence=C3",
        "--as=olivia",
    )
    for user, role in (
        ("mo", "model_owner"),
        ("rita", "reviewer"),
        ("gina", "grader"),
        ("gabe", "grader"),
        ("adam", "adjudicator"),
    ):
        cli("member_grant", f"--use-case={KEY}", f"--user={user}", f"--role={role}", "--as=olivia")
    charter_file = EXAMPLES / "charter.yaml"
    cli("charter_create", f"--use-case={KEY}", f"--file={charter_file}", "--as=olivia")
    cli("charter_validate", f"--use-case={KEY}", "--as=rita")
    for user, role in (("olivia", "charter_owner"), ("mo", "model_owner"), ("rita", "reviewer")):
        signed = cli(
            "charter_sign", f"--use-case={KEY}", "--charter=1", f"--role={role}", f"--as={user}"
        )
    charter = Charter.objects.get()
    assert charter.is_frozen and f"frozen: SHA-256 {charter.sha256}" in signed

    # Stages 2–4: σ, the task set, a run of σ on the graded split, judged by the built-in judge.
    sigma = EXAMPLES / "sigma-gemini-2.5.yaml"
    cli(
        "configuration_upload",
        f"--use-case={KEY}",
        "--name=gemini-2-5",
        f"--file={sigma}",
        "--as=mo",
    )
    tasks = EXAMPLES / "tasks.jsonl"
    cli("task_set_import", f"--use-case={KEY}", "--name=credit-memo", f"--file={tasks}", "--as=mo")
    run = json.loads(
        cli(
            "run_import",
            f"--use-case={KEY}",
            "--configuration=gemini-2-5:1",
            "--task-set=credit-memo:1",
            "--split=graded",
            f"--file={EXAMPLES / 'outputs-gemini-2-5.jsonl'}",
            "--as=mo",
            "--format=json",
        )
    )
    assert run["status"] == "completed"
    judged = cli(
        "judge", f"--use-case={KEY}", f"--run={run['id']}", "--judge=offline", "--as=mo", "--inline"
    )
    judge_id = judged.rsplit("Judge id ", 1)[1].split(" ", 1)[0]

    # Stage 5: a grading session; gina grades at her terminal with the grader's commands,
    # gabe's grades come from his grading tool's file; one disagreement.
    session = json.loads(
        cli(
            "session_create",
            f"--use-case={KEY}",
            "--name=Round 1",
            f"--run={run['id']}",
            "--grader=gina",
            "--grader=gabe",
            "--adjudicator=adam",
            "--sample-size=4",
            "--seed=7",
            "--as=olivia",
            "--format=json",
        )
    )
    public_id = session["public_id"]
    assert session["sample_size"] == 4 and len(session["artefacts"]) == 4
    template, grades = tmp_path / "template.jsonl", tmp_path / "grades.jsonl"
    cli(
        "grades_export",
        f"--use-case={KEY}",
        f"--session={public_id}",
        f"--output={template}",
        "--as=olivia",
    )
    disputed = min(a["public_id"] for a in session["artefacts"])
    assert grade_queue_by_command("gina", public_id) == 4  # one assignment per sampled output
    graded(template, grades, dissenting=("gabe", disputed), grader="gabe")
    cli(
        "grades_import",
        f"--use-case={KEY}",
        f"--session={public_id}",
        f"--file={grades}",
        "--as=olivia",
    )
    status = json.loads(
        cli(
            "session_status",
            f"--use-case={KEY}",
            f"--session={public_id}",
            "--as=adam",
            "--format=json",
        )
    )
    assert status["open"] and status["assignments_not_submitted"] == 0
    [row] = status["awaiting_adjudication"]
    assert row["artefact"] == disputed
    assert set(row["pending"]) == {f"{unit}.{field}" for unit, field in DISSENT}
    cli(
        "adjudication_take",
        f"--session={public_id}",
        f"--artefact={disputed}",
        "--grader=1",
        "--as=adam",
    )
    status = json.loads(
        cli(
            "session_status",
            f"--use-case={KEY}",
            f"--session={public_id}",
            "--as=olivia",
            "--format=json",
        )
    )
    assert not status["open"] and status["disagreements_pending"] == 0, json.dumps(status)

    # Stage 6: the decision, and the scorecard drafted, filled in and signed off.
    decision = json.loads(
        cli(
            "decide",
            f"--use-case={KEY}",
            "--charter=1",
            f"--run={run['id']}",
            f"--session={public_id}",
            f"--judge={judge_id}",
            "--as=olivia",
            "--format=json",
        )
    )
    draft = json.loads(
        cli(
            "scorecard_draft",
            f"--use-case={KEY}",
            f"--decision={decision['id']}",
            "--as=olivia",
            "--format=json",
        )
    )
    committee = tmp_path / "committee.yaml"
    committee.write_text(
        "failure_modes: Unsupported figures in a few sentences.\n"
        "conditions_of_use: An analyst edits every section before it is filed.\n"
        "compensating_controls: Figures are checked against the spreads.\n",
        encoding="utf-8",
    )
    cli(
        "scorecard_fill",
        f"--use-case={KEY}",
        f"--scorecard={draft['id']}",
        f"--file={committee}",
        "--as=rita",
    )
    cli("scorecard_sign_off", f"--use-case={KEY}", f"--scorecard={draft['id']}", "--as=rita")
    pdf, pack = tmp_path / "scorecard.pdf", tmp_path / "evidence.zip"
    cli(
        "scorecard_pdf",
        f"--use-case={KEY}",
        f"--scorecard={draft['id']}",
        f"--out={pdf}",
        "--as=rita",
    )
    cli("evidence_pack", f"--scorecard={draft['id']}", f"--out={pack}", "--as=rita")
    verified = cli("verify_evidence", str(pack))

    scorecard = Scorecard.objects.get()
    assert scorecard.status == ScorecardStatus.FINAL
    assert scorecard.sha256 == sha256_hex(canonical_json(scorecard.content))
    assert hashlib.sha256(pdf.read_bytes()).hexdigest() == scorecard.pdf_sha256
    with zipfile.ZipFile(pack) as members:
        assert members.read("scorecard.pdf") == pdf.read_bytes()
    assert "evidence pack OK" in verified
    assert UseCase.objects.get().stage == Stage.DECIDE
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {
        "usecase.create",
        "membership.grant",
        "charter.freeze",
        "configuration.freeze",
        "taskset.import",
        "grading_session.create",
        "scorecard.sign_off",
    } <= actions
    cli("verify_audit")
