"""``enterpriseval demo``: the product's main job on the bundled examples.

Loads ``examples/credit_memo/`` (seed 003 Use Case B, both models) through the services the
web app calls: runs imported and judged, a grading session graded, adjudicated and closed, an
oversight study, a decision per σ recorded by ``decision_create`` and its scorecard signed off;
then a practice session and study for a person to try in the browser (no decision rests on
them), the paper's Table 4 figures gated in point and conservative mode, the refusal of the
paper's printed inverted pair, and one decision PDF per model under ``out/``. Then the second
example, seed 003 Use Case A (``demo.use_case_a``): one σ executed against the loopback fake
model, the other imported, both decided and their scorecards signed off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.selectors import audit_verify
from demo.decisions import demo_decisions
from demo.grading import demo_grading, demo_oversight, demo_practice, demo_sequential
from demo.loaders import demo_evaluation_object, demo_runs
from demo.scorecards import demo_scorecards
from demo.use_case_a import demo_use_case_a
from gates.decision_file import DecisionFileError, load_decision_file
from gates.formatting import format_gate_result, format_number, format_table
from gates.services import decision_report_write

MODEL_NAMES = {"gemini-2.5": "Gemini 2.5", "llama-4": "Llama 4"}
EXAMPLE_MODELS = tuple(MODEL_NAMES)


class Command(BaseCommand):
    help = "Run the bundled credit-memo example end to end and write decision PDFs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--example-dir",
            type=Path,
            default=Path(settings.BASE_DIR) / "examples" / "credit_memo",
        )
        parser.add_argument("--out", type=Path, default=Path(settings.OUT_DIR))

    def handle(self, *args: Any, **options: Any) -> None:
        example_dir: Path = options["example_dir"]
        out_dir: Path = options["out"]
        self.stdout.write("══ The evaluation object (use case, charter, σ, task set) ══")
        objects = demo_evaluation_object(example_dir=example_dir, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write("══ Runs (imported offline) and the built-in judge ══")
        judged = demo_runs(objects=objects, example_dir=example_dir, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write("══ Blinded expert grading (simulated graders with known error rates) ══")
        grading = demo_grading(objects=objects, runs=judged, log=self.stdout.write)
        oversight = demo_oversight(objects=objects, runs=judged, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write("══ Grade until decided (a sequential session on one σ, SPEC §5.5) ══")
        demo_sequential(objects=objects, runs=judged, fixed=grading.session, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write("══ Model capability evidence (EGI-Bench: seed 000 roster) ══")
        call_command("egi_load_roster", stdout=self.stdout)
        self.stdout.write("")
        self.stdout.write("══ Decisions on the evidence (estimates beside the planted truth) ══")
        decisions = demo_decisions(
            objects=objects,
            runs=judged,
            session=grading.session,
            study=oversight.study,
            example_dir=example_dir,
            log=self.stdout.write,
        )
        self.stdout.write("")
        self.stdout.write("══ Scorecards (signed off by the second line) and evidence packs ══")
        scorecards = demo_scorecards(decisions=decisions, out_dir=out_dir, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write("══ Left for you in the browser (no decision rests on these) ══")
        demo_practice(objects=objects, runs=judged, log=self.stdout.write)
        self.stdout.write("")
        self.stdout.write(
            "══ The paper's Table 4 figures (illustrative decision inputs, not the evidence) ══"
        )
        summary = []
        for model in EXAMPLE_MODELS:
            try:
                report = decision_report_write(
                    input_path=example_dir / f"{model}.yaml",
                    output_path=out_dir / f"credit_memo_{model}_decision.pdf",
                    title=f"Gate decision — credit-memo drafting — {MODEL_NAMES[model]}",
                )
            except DecisionFileError as error:
                raise CommandError(str(error)) from None
            for result in (report.point, report.conservative):
                self.stdout.write(format_gate_result(result, title=f"══ {MODEL_NAMES[model]} ══"))
                self.stdout.write("")
            summary.append(
                (
                    MODEL_NAMES[model],
                    report.point,
                    report.conservative,
                    out_dir / f"credit_memo_{model}_decision.pdf",
                )
            )

        self.stdout.write("══ The pilot's printed thresholds ══")
        try:
            load_decision_file(example_dir / "table4_as_printed.yaml")
        except DecisionFileError as error:
            self.stdout.write(f"refused, as it must be: {error}")
        else:
            raise CommandError("the printed inverted irrelevance-rate pair was not refused")

        self.stdout.write("")
        self.stdout.write("══ Summary (seed 003 Table 4, Use Case B) ══")
        header = [
            "model",
            "point",
            "binding",
            "EI",
            "conservative",
            "binding",
            "EI",
            "weight-sensitivity range",
        ]
        rows = [
            [
                name,
                point.decision,
                point.binding_metric or "—",
                format_number(point.ei),
                conservative.decision,
                conservative.binding_metric or "—",
                format_number(conservative.ei),
                "—"
                if conservative.ei_band is None
                else f"{conservative.ei_band[0]:.2f} to {conservative.ei_band[1]:.2f}",
            ]
            for name, point, conservative, _ in summary
        ]
        self.stdout.write(format_table(rows, header))
        self.stdout.write("")
        for name, *_, pdf in summary:
            self.stdout.write(f"wrote {pdf}  ({name}, Table 4 illustration)")
        for scorecard, pdf, pack in scorecards:
            sigma = scorecard.decision.configuration.name
            self.stdout.write(f"wrote {pdf}  (scorecard of σ {sigma})")
            self.stdout.write(f"wrote {pack}  (evidence pack of σ {sigma})")
        self.stdout.write("")
        self.stdout.write(
            "══ Second example: seed 003 Use Case A, control design effectiveness (A2/C3/E3) ══"
        )
        use_case_a = demo_use_case_a(
            example_dir=Path(settings.BASE_DIR) / "examples" / "use_case_a",
            out_dir=out_dir,
            log=self.stdout.write,
        )
        for scorecard, pdf, pack in use_case_a.scorecards:
            sigma = scorecard.decision.configuration.name
            self.stdout.write(f"wrote {pdf}  (Use Case A scorecard of σ {sigma})")
            self.stdout.write(f"wrote {pack}  (Use Case A evidence pack of σ {sigma})")
        self.stdout.write(
            "decisions: "
            + "; ".join(
                f"{d.use_case.key} σ {d.configuration.name} {d.status}"
                for d in (*decisions, *use_case_a.decisions)
            )
        )
        verification = audit_verify()
        if not verification.ok:
            raise CommandError(
                f"audit log BROKEN at entry #{verification.first_broken_sequence}: "
                f"{verification.reason}"
            )
        self.stdout.write(
            f"audit log OK: {verification.entries_checked} entries, chain intact "
            f"(head {verification.head_hash[:12] if verification.head_hash else '—'})"
        )
