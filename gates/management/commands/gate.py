"""``enterpriseval gate``: run the two-tier gate on a decision input file."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from gates.algorithm import GateInputError, gate_evaluate
from gates.decision_file import DecisionFileError, load_decision_file
from gates.formatting import format_gate_result

INVALID_INPUT = 2


class Command(BaseCommand):
    help = (
        "Evaluate the two-tier gate (SPEC §6.1–6.2) on a decision input (YAML or JSON) and "
        "print the decision, ν per metric, EI, EI_G and the weight-sensitivity band."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--input", required=True, help="decision input file (.yaml or .json)")
        parser.add_argument(
            "--mode",
            choices=["conservative", "point"],
            default="conservative",
            help="conservative CI bounds (default) or point estimates (illustration only)",
        )
        parser.add_argument("--format", choices=["table", "json"], default="table")
        parser.add_argument("--seed", type=int, default=0, help="seed of the Dirichlet band")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["input"]
        try:
            decision_file = load_decision_file(path)
            result = gate_evaluate(
                decision_file.gate_input, mode=options["mode"], seed=options["seed"]
            )
        except DecisionFileError as error:
            raise CommandError(str(error), returncode=INVALID_INPUT) from None
        except GateInputError as error:
            raise CommandError(f"{path}: {error}", returncode=INVALID_INPUT) from None
        if options["format"] == "json":
            payload = result.to_dict()
            payload["input"] = {"path": str(decision_file.path), "sha256": decision_file.sha256}
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(format_gate_result(result, title=str(decision_file.path)))
