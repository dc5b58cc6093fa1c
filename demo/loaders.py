"""The evaluation object of the bundled credit-memo example, set up through the services.

``make demo`` calls :func:`demo_evaluation_object` before it runs the gate: it creates the
use case and its demo users, signs the charter with three distinct users, freezes both σ
and imports the task set. Every step goes through the same services as the web app and
the API, so every step is validated and in the audit log. Running it again changes
nothing: each step finds what the previous run made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission

from charters.charter_document import document_from_text
from charters.models import Charter, Configuration, Role, TaskSet, UseCase
from charters.models.charters import SIGNING_ROLES, Treatment
from charters.selectors.charters import charter_content_sha256
from charters.selectors.configurations import configuration_latest, configuration_parity
from charters.services.charters import charter_create, charter_sign
from charters.services.configurations import configuration_upload
from charters.services.task_sets import task_set_import
from charters.services.use_cases import membership_grant, use_case_create
from enterpriseval.stats import cohens_kappa
from runs.models import JudgeScore, JudgingStatus, Run, Unit, UnitKind
from runs.services.judging import judge_get_or_create, run_judge_execute, run_judge_start
from runs.services.outputs import output_import

USE_CASE_KEY = "CREDIT-MEMO-B"
DEMO_USERS = {
    "demo-owner": Role.CHARTER_OWNER,
    "demo-model-owner": Role.MODEL_OWNER,
    "demo-reviewer": Role.REVIEWER,
    "demo-grader": Role.GRADER,
    "demo-grader-2": Role.GRADER,
    "demo-grader-3": Role.GRADER,
    "demo-adjudicator": Role.ADJUDICATOR,
}
CONFIGURATIONS = {"gemini-2-5": "sigma-gemini-2.5.yaml", "llama-4": "sigma-llama-4.yaml"}
TASK_SET_NAME = "credit-memo-tasks"
PASSWORD_VARIABLE = "ENTERPRISEVAL_DEMO_PASSWORD"  # noqa: S105 - a variable name


@dataclass(frozen=True)
class DemoObjects:
    use_case: UseCase
    charter: Charter
    configurations: dict[str, Configuration]
    task_set: TaskSet


@dataclass(frozen=True)
class JudgedRun:
    sigma: str
    run: Run
    units: int
    scores: int
    supported_agreement: float
    supported_kappa: float


def demo_users() -> dict[str, AbstractBaseUser]:
    """Return the demo users, creating them; passwords come only from the environment."""
    password = os.environ.get(PASSWORD_VARIABLE)
    users = {}
    for username in DEMO_USERS:
        user, created = get_user_model().objects.get_or_create(username=username)
        if created or password:
            if password:
                user.set_password(password)
            else:
                user.set_unusable_password()
            user.save()
        users[username] = user
    # The demo's charter owner may create use cases in the web UI too (docs/operations.md).
    users["demo-owner"].user_permissions.add(
        Permission.objects.get(content_type__app_label="charters", codename="add_usecase")
    )
    return users


def demo_evaluation_object(*, example_dir: Path, log: Callable[[str], None]) -> DemoObjects:
    """Create (or find) the credit-memo use case with its signed charter, σ and task set."""
    use_case, users = demo_use_case(
        key=USE_CASE_KEY,
        name="Credit-memo drafting (seed 003, Use Case B)",
        business_outcome=(
            "Credit analysts draft the 13 sections of a credit memo from filings, research "
            "and spreads with inline citations, then edit; a guidance-verification step "
            "checks each draft against credit-policy items."
        ),
        value_hypothesis=(
            "Drafting time per section falls substantially while hallucination stays "
            "below 5% and mandatory guidance items are flagged at least 80% of the time."
        ),
        autonomy=1,
        consequence=3,
        log=log,
    )
    charter = signed_charter(use_case, users, example_dir, log)
    configurations = {
        name: _frozen_configuration(use_case, users["demo-model-owner"], name, example_dir / file)
        for name, file in CONFIGURATIONS.items()
    }
    for name, configuration in configurations.items():
        log(f"σ {name} v{configuration.version} frozen: sha256 {configuration.sha256[:16]}…")
    parity = configuration_parity(a=configurations["gemini-2-5"], b=configurations["llama-4"])
    log(f"parity gemini-2-5 vs llama-4: {parity.label}")
    task_set = demo_task_set(
        use_case=use_case,
        model_owner=users["demo-model-owner"],
        path=example_dir / "tasks.jsonl",
        name=TASK_SET_NAME,
        log=log,
    )
    return DemoObjects(
        use_case=use_case, charter=charter, configurations=configurations, task_set=task_set
    )


def demo_use_case(
    *,
    key: str,
    name: str,
    business_outcome: str,
    value_hypothesis: str,
    autonomy: int,
    consequence: int,
    log: Callable[[str], None],
) -> tuple[UseCase, dict[str, AbstractBaseUser]]:
    """Create (or find) a demo use case and grant the demo users their roles on it."""
    users = demo_users()
    owner = users["demo-owner"]
    use_case = UseCase.objects.filter(key=key).first()
    if use_case is None:
        use_case = use_case_create(
            actor=owner,
            key=key,
            name=name,
            business_outcome=business_outcome,
            value_hypothesis=value_hypothesis,
            autonomy=autonomy,
            consequence=consequence,
        )
        log(f"created use case {use_case.key} (A{autonomy}/C{consequence} → E{use_case.intensity})")
    else:
        log(f"found use case {use_case.key}")
    for username, role in DEMO_USERS.items():
        membership_grant(actor=owner, use_case=use_case, user=users[username], role=role)
    return use_case, users


def signed_charter(
    use_case: UseCase,
    users: dict[str, AbstractBaseUser],
    example_dir: Path,
    log: Callable[[str], None],
) -> Charter:
    """Create (or find) the use case's charter from ``charter.yaml``, signed three times."""
    charter = Charter.objects.filter(use_case=use_case).order_by("-version").first()
    if charter is None:
        path = example_dir / "charter.yaml"
        document = document_from_text(
            path.read_text(encoding="utf-8"), fmt="yaml", source=str(path)
        )
        charter = charter_create(actor=users["demo-owner"], use_case=use_case, document=document)
    if not charter.is_frozen:
        signers = {
            Role.CHARTER_OWNER: "demo-owner",
            Role.MODEL_OWNER: "demo-model-owner",
            Role.REVIEWER: "demo-reviewer",
        }
        current = charter_content_sha256(charter=charter)
        signed = set(
            charter.signatures.filter(content_sha256=current).values_list("role", flat=True)
        )
        for role in SIGNING_ROLES:
            if role not in signed:
                charter_sign(actor=users[signers[role]], charter=charter, role=role)
        charter.refresh_from_db()
    log(
        f"charter v{charter.version} signed by owner, model owner and reviewer; "
        f"frozen sha256 {charter.sha256[:16]}…"
    )
    return charter


def _frozen_configuration(
    use_case: UseCase, model_owner: AbstractBaseUser, name: str, path: Path
) -> Configuration:
    return frozen_configuration(
        use_case=use_case,
        model_owner=model_owner,
        name=name,
        content=path.read_bytes(),
        filename=str(path),
    )


def frozen_configuration(
    *,
    use_case: UseCase,
    model_owner: AbstractBaseUser,
    name: str,
    content: bytes,
    filename: str,
) -> Configuration:
    """Return σ ``name``'s latest version if it is ``content``, else upload it as a new one."""
    from charters.configurations import configuration_load

    parsed = configuration_load(content, filename=filename)
    latest = configuration_latest(use_case=use_case, name=name)
    if latest is not None and latest.sha256 == parsed.sha256:
        return latest
    return configuration_upload(
        actor=model_owner, use_case=use_case, name=name, content=content, filename=filename
    )


def demo_task_set(
    *,
    use_case: UseCase,
    model_owner: AbstractBaseUser,
    path: Path,
    name: str,
    log: Callable[[str], None],
) -> TaskSet:
    """Import the task set at ``path`` (or find the import of the same bytes) and report it."""
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    task_set = TaskSet.objects.filter(use_case=use_case, name=name, manifest_sha256=digest).first()
    if task_set is None:
        with path.open("rb") as fileobj:
            task_set = task_set_import(
                actor=model_owner,
                use_case=use_case,
                name=name,
                fileobj=fileobj,
                filename=path.name,
            )
    counts = ", ".join(f"{split} {n}" for split, n in sorted(task_set.split_counts.items()))
    log(
        f"task set {task_set.name} v{task_set.version}: {task_set.line_count} tasks ({counts}); "
        f"manifest sha256 {task_set.manifest_sha256[:16]}…"
    )
    return task_set


def demo_runs(
    *, objects: DemoObjects, example_dir: Path, log: Callable[[str], None]
) -> list[JudgedRun]:
    """Import both σ's outputs (offline), score every unit with the built-in judge, and
    compare the judge with the planted truth on "supported"."""

    model_owner = get_user_model().objects.get(username="demo-model-owner")
    judged = []
    for sigma, configuration in objects.configurations.items():
        run = imported_run(
            configuration=configuration,
            task_set=objects.task_set,
            split="graded",
            repeats=objects.charter.repeats_k,
            model_owner=model_owner,
            path=example_dir / f"outputs-{sigma}.jsonl",
        )
        judged.append(
            judged_run(
                sigma=sigma,
                run=run,
                truth_path=example_dir / f"truth-{sigma}.jsonl",
                how="imported",
                log=log,
            )
        )
    return judged


def imported_run(
    *,
    configuration: Configuration,
    task_set: TaskSet,
    split: str,
    repeats: int,
    model_owner: AbstractBaseUser,
    path: Path,
) -> Run:
    """Return σ's run imported from the outputs file at ``path``, importing it the first time."""
    import hashlib

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    run = Run.objects.filter(configuration=configuration, source_sha256=digest).first()
    if run is not None:
        return run
    with path.open("rb") as fileobj:
        return output_import(
            actor=model_owner,
            use_case=configuration.use_case,
            configuration=configuration,
            task_set=task_set,
            split=split,
            repeats=repeats,
            fileobj=fileobj,
            filename=path.name,
        )


def judged_run(
    *, sigma: str, run: Run, truth_path: Path, how: str, log: Callable[[str], None]
) -> JudgedRun:
    """Score every unit of ``run`` with the built-in judge, as "Judge this run" does but
    in-process, and compare the judge with the planted truth on "supported"."""
    judge = judge_get_or_create(kind="offline")
    complete = offline_judged(run)
    units = Unit.objects.filter(output__run=run).count()
    agreement, kappa = _supported_against_truth(run, judge, truth_path)
    scores = JudgeScore.objects.filter(judge=judge, unit__output__run=run).count()
    log(
        f"run {run.pk} (σ {sigma}, {how}): {run.items_done} outputs, {units} units; "
        f"offline judge {judge.version}: {scores} scores "
        f"({'complete' if complete else 'incomplete'})"
    )
    log(
        f"  offline judge vs planted truth on 'supported' (assertive sentences): "
        f"agreement {agreement:.1%}, Cohen's κ {kappa:.2f} — the built-in judge is weak; "
        "calibration against human grades corrects it"
    )
    return JudgedRun(sigma, run, units, scores, agreement, kappa)


def offline_judged(run: Run) -> bool:
    """Score every unit of ``run`` not yet scored by the built-in judge, as "Judge this run"
    does but in-process; return whether every unit is scored."""
    model_owner = get_user_model().objects.get(username="demo-model-owner")
    judge = judge_get_or_create(kind="offline")
    units = Unit.objects.filter(output__run=run).count()
    scored = (
        JudgeScore.objects.filter(judge=judge, unit__output__run=run)
        .values("unit")
        .distinct()
        .count()
    )
    if scored == units:
        return True
    # What "Judge this run" does, run in-process instead of by a worker.
    judging = run_judge_start(
        actor=model_owner,
        run=run,
        kind="offline",
        purpose=Treatment.GATED,
        enqueue=False,
    )
    judging = run_judge_execute(judging_id=judging.pk)
    if judging.status == JudgingStatus.FAILED:
        raise RuntimeError(f"judging {judging.pk} of run {run.pk} failed: {judging.error}")
    return judging.status == JudgingStatus.COMPLETED


def _supported_against_truth(run: Run, judge: object, truth_path: Path) -> tuple[float, float]:
    import json

    truth = {}
    for line in truth_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for sentence in record["sentences"]:
            if sentence["assertive"]:
                key = (record["task_id"], record["repeat"], f"s{sentence['position']}")
                truth[key] = int(sentence["supported"])
    scored = JudgeScore.objects.filter(
        judge=judge,
        criterion="supported",
        unit__kind=UnitKind.SENTENCE,
        unit__output__run=run,
    ).values_list(
        "unit__output__task__external_id", "unit__output__repeat_index", "unit__key", "score"
    )
    pairs = [(truth[(t, r, k)], int(score)) for t, r, k, score in scored if (t, r, k) in truth]
    human = [h for h, _ in pairs]
    machine = [m for _, m in pairs]
    agreement = sum(h == m for h, m in pairs) / len(pairs)
    return agreement, cohens_kappa(human, machine, categories=[0, 1])
