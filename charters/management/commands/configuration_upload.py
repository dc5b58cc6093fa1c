"""``enterpriseval configuration_upload``: freeze a σ file as the next version of its name.

The file is the σ document the upload page and ``POST …/configurations/`` take (YAML or JSON,
docs/formats.md). Every problem is printed as ``FILE:LINE: FIELD: MESSAGE``; nothing is frozen
unless the whole document is valid. ``--format json`` prints the σ as the API returns it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from charters.api.configurations import ConfigurationDetailOutput
from charters.management.cli import UseCaseCommand, read_bytes, refusals, write_json
from charters.selectors.configurations import configuration_use_case_for
from charters.services.configurations import configuration_upload
from enterpriseval.limits import UploadKind


class Command(UseCaseCommand):
    help = (
        "Validate a σ document (YAML or JSON) and freeze it as version n + 1 of --name; "
        "refused, naming each problem's line and field, if it is invalid."
    )
    who = "a charter owner or model owner of the use case"

    def add_options(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="σ name, e.g. gemini-2-5.")
        parser.add_argument("--file", required=True, help="σ document (.yaml, .yml or .json).")

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, configuration_use_case_for, upload=True)
        path = options["file"]
        content = read_bytes(path, "--file", kind=UploadKind.SIGMA)
        with refusals({"name": "--name"}, source=path, stderr=self.stderr):
            configuration = configuration_upload(
                actor=actor,
                use_case=use_case,
                name=options["name"],
                content=content,
                filename=Path(path).name,
            )
        if options["format"] == "json":
            write_json(self.stdout, ConfigurationDetailOutput(configuration).data)
            return
        self.stdout.write(
            f"σ {configuration.name} v{configuration.version} of {use_case.key} frozen from "
            f"{path}: model {configuration.model_ref}, SHA-256 {configuration.sha256}."
        )
