"""``charters.management.cli``: the options every use-case command adds, and the shared lookups."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from charters.management.charter_files import charter_file
from charters.management.cli import (
    UseCaseCommand,
    add_charter,
    charter_named,
    progress_file,
    read_bytes,
    read_text,
    write_lines,
)
from charters.models import Charter, Configuration, Role
from charters.permissions import use_case_for
from charters.services.charters import charter_create
from enterpriseval.limits import UploadKind

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "credit_memo" / "charter.yaml"


class Probe(UseCaseCommand):
    """A use-case command with one option of its own, checked as charter owners are."""

    help = "Print the use case's name."
    who = "a charter owner of the use case"

    def add_options(self, parser: Any) -> None:
        add_charter(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        actor, use_case = self.actor_and_use_case(options, use_case_for, roles=[Role.CHARTER_OWNER])
        self.stdout.write(f"{actor.get_username()} on {use_case.name}")


class TableOnly(Probe):
    formats = False


def options_of(command: UseCaseCommand) -> list[tuple[str, str | None]]:
    """Return the command's own options, in the order ``--help`` lists them, with their help."""
    parser = command.create_parser("manage.py", "probe")
    common = {"--help", "--version", "--verbosity", "--settings", "--pythonpath", "--traceback"}
    common |= {"--no-color", "--force-color", "--skip-checks"}
    return [
        (action.option_strings[-1], action.help)
        for action in parser._actions
        if action.option_strings and action.option_strings[-1] not in common
    ]


def refused(call: Any) -> str:
    with pytest.raises(CommandError) as error:
        call()
    assert error.value.returncode == 2
    return str(error.value)


def test_options_are_listed_use_case_then_the_commands_own_then_as_and_format():
    assert options_of(Probe()) == [
        ("--use-case", "Use-case key."),
        ("--charter", "Charter version."),
        ("--as", "User name of a charter owner of the use case."),
        ("--format", "Output format."),
    ]


def test_a_command_without_json_has_no_format_option():
    assert [name for name, _ in options_of(TableOnly())] == ["--use-case", "--charter", "--as"]


def test_the_actor_and_use_case_come_through_the_access_check(personas):
    out = io.StringIO()
    call_command(
        Probe(), "--use-case", "CREDIT-MEMO-B", "--charter", "1", "--as", "owner", stdout=out
    )
    assert out.getvalue() == f"owner on {personas.use_case.name}\n"


@pytest.mark.parametrize(
    ("key", "actor", "message"),
    [
        ("CREDIT-MEMO-B", "nobody", "--as: no user 'nobody'"),
        ("NO-SUCH", "owner", "--use-case: no use case 'NO-SUCH'"),
        ("CREDIT-MEMO-B", "outsider", "--as: outsider holds no role on CREDIT-MEMO-B"),
    ],
)
def test_an_unknown_user_or_use_case_or_an_outsider_is_refused(personas, key, actor, message):
    args = ("--use-case", key, "--charter", "1", "--as", actor)
    assert refused(lambda: call_command(Probe(), *args, stdout=io.StringIO())) == message


def test_a_member_without_the_role_is_refused_naming_as(personas):
    args = ("--use-case", "CREDIT-MEMO-B", "--charter", "1", "--as", "reviewer")
    message = refused(lambda: call_command(Probe(), *args, stdout=io.StringIO()))
    assert message.startswith("--as: This needs one of these roles on CREDIT-MEMO-B")


def test_charter_named_returns_that_version_or_refuses_naming_charter(personas):
    document, _line_of = charter_file(str(EXAMPLE), stderr=io.StringIO())
    created = charter_create(actor=personas.owner, use_case=personas.use_case, document=document)
    assert charter_named(personas.use_case, 1).pk == created.pk
    assert Charter.objects.filter(use_case=personas.use_case).count() == 1
    message = refused(lambda: charter_named(personas.use_case, 2))
    assert message == "--charter: CREDIT-MEMO-B has no charter v2"


def test_write_lines_writes_the_file_and_counts_its_lines(tmp_path):
    lines = [b'{"a": 1}\n', b'{"a": "\xc3\xa9"}\n', b'{"a": 3}\n']
    target = tmp_path / "out.jsonl"
    count = write_lines(io.StringIO(), iter(lines), str(target), refused=str)
    assert count == 3
    assert target.read_bytes() == b"".join(lines)


def test_write_lines_without_a_file_writes_standard_output_as_is():
    buffer = io.StringIO()

    class Wrapped:
        _out = buffer

    assert write_lines(Wrapped(), [b"x\n", "é\n".encode()], None, refused=str) is None
    assert buffer.getvalue() == "x\né\n"


def test_write_lines_refuses_with_the_callers_message(tmp_path):
    missing = tmp_path / "no-such-dir" / "out.jsonl"
    message = refused(
        lambda: write_lines(
            io.StringIO(),
            [b"x\n"],
            str(missing),
            refused=lambda error: f"--output: {missing}: {error.strerror}",
        )
    )
    assert message == f"--output: {missing}: No such file or directory"


def test_progress_file_reads_the_file_and_closes_it(tmp_path):
    content = b"".join(f'{{"line": {n}}}\n'.encode() for n in range(1, 6))
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    with progress_file(str(path), "--file", stderr=io.StringIO(), passes=("checking",)) as read:
        lines = [read.readline() for _ in range(5)]
        opened = read._file
    assert b"".join(lines) == content
    assert opened.closed


def test_progress_file_refuses_a_missing_file_naming_the_option(tmp_path):
    missing = tmp_path / "missing.jsonl"

    def open_it() -> None:
        with progress_file(str(missing), "--file", stderr=io.StringIO(), passes=("x",)):
            pass

    assert refused(open_it) == f"--file: {missing}: No such file or directory"


def test_a_file_over_its_kinds_cap_is_refused_by_its_size_before_it_is_read(
    tmp_path, settings, monkeypatch
):
    settings.ENTERPRISEVAL_UPLOAD_LIMITS = {**settings.ENTERPRISEVAL_UPLOAD_LIMITS, "sigma": 10}
    small, large = tmp_path / "small.yaml", tmp_path / "large.yaml"
    small.write_bytes(b"model: x\n")  # 9 bytes, under the cap of 10
    large.write_bytes(b"model: xyz\n")  # 11 bytes
    assert read_bytes(str(small), "--file", kind=UploadKind.SIGMA) == b"model: x\n"
    with pytest.raises(CommandError) as refused:
        read_bytes(str(large), "--file", kind=UploadKind.SIGMA)
    assert refused.value.returncode == 2
    assert str(refused.value) == (
        f"--file: {large}: the σ document is 11 bytes; the limit is 10 bytes "
        "(raise ENTERPRISEVAL_MAX_SIGMA_BYTES to accept larger files)"
    )
    # Refused from the size on disk: not a byte of it is read.
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"{self} was read"))
    with pytest.raises(CommandError, match="the limit is 10 bytes"):
        read_text(str(large), "--file", kind=UploadKind.SIGMA)


def test_configuration_upload_refuses_a_sigma_over_its_cap_and_writes_nothing(
    personas, settings, tmp_path
):
    settings.ENTERPRISEVAL_UPLOAD_LIMITS = {**settings.ENTERPRISEVAL_UPLOAD_LIMITS, "sigma": 100}
    sigma = tmp_path / "sigma.yaml"
    sigma.write_bytes(b"#" * 101)
    with pytest.raises(CommandError) as refused:
        call_command(
            "configuration_upload",
            "--use-case",
            personas.use_case.key,
            "--name",
            "big",
            "--file",
            str(sigma),
            "--as",
            personas.model_owner.username,
            stdout=io.StringIO(),
        )
    assert "the σ document is 101 bytes; the limit is 100 bytes" in str(refused.value)
    assert not Configuration.objects.filter(name="big").exists()
