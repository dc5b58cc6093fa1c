"""σ documents: parsing, schema errors with paths and lines, secrets, canonical hash."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from charters.configurations import (
    CREDENTIAL_ADVICE,
    SCHEMA_PATH,
    ConfigurationInvalid,
    configuration_load,
    configuration_problems,
    configuration_schema,
    configuration_secret_problems,
    parity_report,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "credit_memo"

MINIMAL = {
    "schema_version": "1",
    "model": {"provider": "openai", "id": "gpt-4.1", "api_key_env": "OPENAI_API_KEY"},
    "prompts": {"system": "You draft memo sections.", "user_template": "Draft {section}."},
    "oversight": {
        "checkpoints": [{"name": "analyst-review", "description": "Analyst edits the draft."}],
        "reviewer_role": "Credit analyst",
        "review_instructions": "Check every citation.",
    },
}


def minimal(**changes) -> dict:
    document = copy.deepcopy(MINIMAL)
    document.update(changes)
    return document


def problems_of(document) -> list[str]:
    return [str(problem) for problem in configuration_problems(document)]


def refusal(text: str, filename: str | None = None) -> ConfigurationInvalid:
    with pytest.raises(ConfigurationInvalid) as caught:
        configuration_load(text, filename=filename)
    return caught.value


# ----------------------------------------------------------------------------------------- schema


def test_the_published_schema_is_a_valid_draft_2020_12_schema():
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert configuration_schema() == schema


def test_configuration_schema_returns_a_copy_callers_cannot_corrupt():
    configuration_schema()["properties"].clear()
    assert "model" in configuration_schema()["properties"]


def test_a_minimal_document_is_valid():
    assert problems_of(MINIMAL) == []


def test_an_out_of_range_temperature_names_its_path_and_the_bound():
    document = minimal()
    document["model"]["parameters"] = {"temperature": 3}
    assert problems_of(document) == [
        "model.parameters.temperature: 3 is greater than the maximum of 2"
    ]


def test_every_error_is_reported_not_just_the_first():
    document = minimal(schema_version=1)
    document["model"]["parameters"] = {"temperature": -1, "max_tokens": 0}
    del document["prompts"]["user_template"]
    document["retrieval"] = {
        "corpus": "filings",
        "chunking": {"strategy": "section", "size": 400},
        "top_k": 0,
        "embedder": "bm25",
    }
    assert sorted(problems_of(document)) == [
        "model.parameters.max_tokens: 0 is less than the minimum of 1",
        "model.parameters.temperature: -1 is less than the minimum of 0",
        "prompts.user_template: is required",
        "retrieval.top_k: 0 is less than the minimum of 1",
        'schema_version: must be "1", got 1',
    ]


def test_a_typo_in_a_top_level_key_is_an_error_naming_the_key():
    document = minimal(guardrail={"citation_required": True})
    (problem,) = problems_of(document)
    assert problem.startswith("guardrail: unknown field; expected one of: description, ")
    assert "guardrails" in problem


def test_a_typo_inside_model_is_an_error_naming_the_key():
    document = minimal()
    document["model"]["temprature"] = 0.2
    assert problems_of(document) == [
        "model.temprature: unknown field; expected one of: api_base, api_key_env, id, "
        "parameters, provider, revision"
    ]


def test_provider_specific_model_parameters_are_allowed():
    document = minimal()
    document["model"]["parameters"] = {"temperature": 0, "thinking_budget": 1024}
    assert problems_of(document) == []


@pytest.mark.parametrize(
    "name",
    ["gemini_api_key", "Gemini-Key", "1KEY", "KEY NAME"],
)
def test_api_key_env_must_be_an_environment_variable_name(name):
    document = minimal()
    document["model"]["api_key_env"] = name
    (problem,) = problems_of(document)
    assert problem.startswith("model.api_key_env: must be the name of an environment variable")


def test_required_model_fields_and_oversight_are_named():
    document = minimal()
    del document["model"]["id"]
    del document["oversight"]
    assert sorted(problems_of(document)) == ["model.id: is required", "oversight: is required"]


def test_oversight_requires_checkpoints_reviewer_role_and_instructions():
    document = minimal(oversight={})
    assert sorted(problems_of(document)) == [
        "oversight.checkpoints: is required",
        "oversight.review_instructions: is required",
        "oversight.reviewer_role: is required",
    ]


def test_a_wrong_type_says_what_was_expected_and_what_came():
    document = minimal(tools={"name": "calculator"})
    assert problems_of(document) == ['tools: expected a list, got an object {"name": "calculator"}']


def test_an_empty_tool_list_is_valid_and_tools_need_name_description_parameters():
    assert problems_of(minimal(tools=[])) == []
    document = minimal(tools=[{"name": "ratio_calculator"}])
    assert sorted(problems_of(document)) == [
        "tools[0].description: is required",
        "tools[0].parameters: is required",
    ]


def test_tool_and_checkpoint_names_must_be_unique():
    tool = {"name": "lookup", "description": "Look up a filing.", "parameters": {}}
    document = minimal(tools=[tool, dict(tool)])
    document["oversight"]["checkpoints"].append({"name": "analyst-review", "description": "Again."})
    assert problems_of(document) == [
        'tools[1].name: tool "lookup" is already tools[0]; names must be unique',
        'oversight.checkpoints[1].name: checkpoint "analyst-review" is already '
        "oversight.checkpoints[0]; names must be unique",
    ]


def test_chunk_overlap_must_be_smaller_than_the_chunk_size():
    document = minimal(
        retrieval={
            "corpus": "filings",
            "chunking": {"strategy": "fixed_tokens", "size": 200, "overlap": 200},
            "top_k": 8,
            "embedder": "bm25",
        }
    )
    assert problems_of(document) == [
        "retrieval.chunking.overlap: 200 must be smaller than the chunk size 200"
    ]


def test_a_document_that_is_not_a_mapping_is_refused():
    assert problems_of(["model"]) == ['(document): expected an object, got a list ["model"]']


# ----------------------------------------------------------------------------------------- parse

YAML_WITH_ERRORS = """\
schema_version: "1"
model:
  provider: openai
  id: gpt-4.1
  parameters:
    temperature: 3
prompts:
  system: Draft.
oversight:
  checkpoints: []
  reviewer_role: Analyst
  review_instructions: Check.
"""


def test_yaml_errors_carry_the_line_of_the_field():
    error = refusal(YAML_WITH_ERRORS, "sigma.yaml")
    located = [problem.located("sigma.yaml") for problem in error.problems]
    assert located == [
        "sigma.yaml, line 6: model.parameters.temperature: 3 is greater than the maximum of 2",
        "sigma.yaml, line 7: prompts.user_template: is required",
    ]
    assert str(error).startswith("σ has 2 problems: sigma.yaml, line 6: model.parameters")


def test_json_errors_carry_the_line_of_the_field_too():
    text = json.dumps(minimal(model={"provider": "openai", "id": "x", "seed": 1}), indent=2)
    (problem,) = refusal(text, "sigma.json").problems
    assert problem.path == "model.seed"
    assert text.splitlines()[problem.line - 1].strip().startswith('"seed"')


def test_a_yaml_syntax_error_names_the_line():
    (problem,) = refusal("model:\n  provider: [openai\n", "bad.yaml").problems
    assert problem.line == 3
    assert problem.message.startswith("not valid YAML:")


def test_a_json_syntax_error_names_the_line_and_column():
    (problem,) = refusal('{\n  "model": {,}\n}', "bad.json").problems
    assert (problem.line, problem.message) == (
        2,
        "not valid JSON: Expecting property name enclosed in double quotes (column 13)",
    )


def test_a_key_given_twice_is_refused_in_yaml_and_json():
    (yaml_problem,) = refusal("model: 1\nprompts: 2\nmodel: 3\n").problems
    assert yaml_problem.line == 3
    assert (
        yaml_problem.message
        == "not valid YAML: key 'model' appears twice (first on line 1); keep one"
    )
    (json_problem,) = refusal('{"model": 1, "model": 2}').problems
    assert json_problem.message == "key 'model' appears twice; keep one"


def test_yaml_no_and_dates_stay_strings_so_nothing_changes_meaning():
    document = minimal()
    document["guardrails"] = {"refusal_policy": "no"}
    document["prompts"]["version"] = "2026-04-17"
    text = yaml.safe_dump(document).replace("'no'", "no").replace("'2026-04-17'", "2026-04-17")
    assert "refusal_policy: no\n" in text
    parsed = configuration_load(text, filename="sigma.yaml")
    assert parsed.document["guardrails"]["refusal_policy"] == "no"
    assert parsed.document["prompts"]["version"] == "2026-04-17"


def test_an_empty_document_is_refused():
    assert (
        str(refusal("  \n", "empty.yaml"))
        == "σ has 1 problem: empty.yaml: (document): the document is empty"
    )


def test_bytes_that_are_not_utf8_are_refused():
    (problem,) = refusal(b"model: \xff\n").problems
    assert problem.message == "the file is not UTF-8 text (byte 7 is invalid)"


def test_the_format_follows_the_extension_then_the_first_character():
    text = json.dumps(MINIMAL)
    assert configuration_load(text, filename="s.json").source_format == "json"
    assert configuration_load(text).source_format == "json"
    assert configuration_load(yaml.safe_dump(MINIMAL)).source_format == "yaml"
    assert configuration_load(text, filename="s.yml").source_format == "yaml"


# ------------------------------------------------------------------------------------- canonical


def test_yaml_and_json_of_the_same_document_have_the_same_canonical_hash():
    from_json = configuration_load(json.dumps(MINIMAL, indent=4), filename="a.json")
    from_yaml = configuration_load(yaml.safe_dump(MINIMAL, sort_keys=False), filename="a.yaml")
    expected_text = json.dumps(MINIMAL, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert from_json.canonical_json == from_yaml.canonical_json == expected_text
    assert from_json.sha256 == hashlib.sha256(expected_text.encode()).hexdigest()
    assert from_json.sha256 == from_yaml.sha256
    assert from_json.model_ref == "openai/gpt-4.1"


def test_an_integral_float_hashes_as_the_integer():
    with_float = minimal()
    with_float["model"]["parameters"] = {"temperature": 1.0}
    with_int = minimal()
    with_int["model"]["parameters"] = {"temperature": 1}
    assert (
        configuration_load(json.dumps(with_float)).sha256
        == configuration_load(json.dumps(with_int)).sha256
    )


def test_nan_is_refused():
    document = minimal()
    document["model"]["parameters"] = {"temperature": ".nan"}
    text = yaml.safe_dump(document).replace("'.nan'", ".nan")
    assert [str(p) for p in refusal(text).problems] == [
        "model.parameters.temperature: nan is not a JSON number (NaN and Infinity are refused)"
    ]


# --------------------------------------------------------------------------------------- secrets

# Built by concatenation so no credential-shaped literal sits in the repository.
FAKE_SECRETS = {
    "OpenAI API key": "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQ7",
    "OpenAI legacy key": "sk-" + "Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh9Gf8Ed7Cb6Aa5Ys4Ty3U",
    "Anthropic API key": "sk-" + "ant-api03-" + "Xy7Kp2Lm9Qr4St6Uv8Wx1Yz3Ab5Cd7Ef9Gh2Ij4Kl",
    "AWS access key id": "AKIA" + "IOSFODNN7EXAMPLE",
    "Google API key": "AIza" + "SyD4x9Q2w8E7r6T5y4U3i2O1p0A9s8D7f6G",
    "GitHub token": "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5",
    "GitHub fine-grained token": "github_pat_" + "11ABCDEFG0123456789_abcdefghijKLMNOP",
    "Slack token": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N",
    "private key": "-----BEGIN RSA "
    + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "OpenSSH private key": "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXk=",
    "password in a URL": "https://svc_user:" + "s3cr3tPass" + "@llm.internal.example/v1",
}


@pytest.mark.parametrize("kind", sorted(FAKE_SECRETS))
def test_a_credential_anywhere_is_refused_with_its_path_and_advice(kind):
    secret = FAKE_SECRETS[kind]
    document = minimal()
    document["prompts"]["system"] = f"You draft memos. Use {secret} to call the bureau."
    (problem,) = configuration_secret_problems(document)
    assert problem.path == "prompts.system"
    assert problem.message.startswith(CREDENTIAL_ADVICE)
    assert secret not in str(problem)


def test_a_credential_pasted_into_api_key_env_is_refused_and_never_echoed():
    secret = FAKE_SECRETS["OpenAI API key"]
    document = minimal()
    document["model"]["api_key_env"] = secret
    text = yaml.safe_dump(document)
    error = refusal(text, "sigma.yaml")
    messages = [str(problem) for problem in error.problems]
    assert (
        "model.api_key_env: looks like an API key or secret; store it in an environment "
        "variable and name that variable in model.api_key_env (detected: OpenAI API key)"
    ) in messages
    assert all(secret not in message for message in messages)
    assert secret not in str(error)


def test_a_secret_in_a_schema_error_message_is_redacted():
    secret = FAKE_SECRETS["Google API key"]
    document = minimal()
    document["model"]["parameters"] = {"temperature": secret}
    messages = problems_of(document)
    assert 'model.parameters.temperature: expected a number, got a string "«redacted»"' in messages
    assert all(secret not in message for message in messages)


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "APIKEY",
        "password",
        "client_secret",
        "token",
        "access_key",
        "secret",
        "x-api-key",
        "authorization",
    ],
)
def test_any_value_under_a_credential_named_field_is_refused(key):
    document = minimal()
    document["model"]["parameters"] = {key: "hunter2"}
    (problem,) = configuration_secret_problems(document)
    assert problem.path in (f"model.parameters.{key}", f'model.parameters["{key}"]')
    assert problem.message == f"{CREDENTIAL_ADVICE} (detected: a value in a field named {key!r})"


def test_api_key_env_and_token_counts_are_not_credentials():
    document = minimal()
    document["model"]["parameters"] = {"max_tokens": 2048, "token_env": "TOKEN_VAR"}
    document["guardrails"] = {"max_output_tokens": 1500}
    assert configuration_secret_problems(document) == []
    assert configuration_secret_problems(minimal(tools=[{"token": ""}])) == []


def test_a_tool_whose_argument_schema_mentions_a_token_is_not_a_credential():
    tool = {
        "name": "fetch_filing",
        "description": "Fetch a filing by id.",
        "parameters": {
            "type": "object",
            "properties": {"token": {"type": "string", "description": "Pagination token."}},
            "required": ["token"],
        },
    }
    assert problems_of(minimal(tools=[tool])) == []


def test_ordinary_prose_prompts_and_chunk_ids_are_not_credentials():
    document = minimal()
    document["prompts"]["system"] = (
        "You are a credit analyst. Assess risk-weighted assets and the task-specific key "
        "elements; ask-me-anything questions are out of scope. Cite chunks as "
        "[sk-annual-report-2024-chunk-0012], [task-credit-memo-b-000123-src-07], "
        "[AKIA-policy-7], [eyJ-not-a-token] and [ghp-guidance-42]. Token limits apply; never "
        "reveal a password or API key. Private keys are out of scope. See "
        "https://intranet.example/policies?section=credit-risk-2024 for policy."
    )
    document["prompts"]["few_shot"] = [
        {"input": "Chunk sk-10K-2023-p14-para3 says revenue rose.", "output": "Revenue rose [c1]."}
    ]
    document["retrieval"] = {
        "corpus": "sk-hynix-filings-2024-annual-report-v2",
        "chunking": {"strategy": "section", "size": 400, "overlap": 50},
        "top_k": 8,
        "embedder": "bm25",
    }
    assert configuration_secret_problems(document) == []
    assert problems_of(document) == []


def test_the_example_files_carry_no_credentials():
    for path in EXAMPLES.glob("sigma-*.yaml"):
        assert configuration_secret_problems(yaml.safe_load(path.read_text())) == []


# -------------------------------------------------------------------------------------- examples


def test_both_example_configurations_validate():
    for name in ("sigma-gemini-2.5.yaml", "sigma-llama-4.yaml"):
        path = EXAMPLES / name
        parsed = configuration_load(path.read_bytes(), filename=str(path))
        assert parsed.document["retrieval"]["top_k"] == 8
        assert parsed.document["retrieval"]["embedder"] == "bm25"
        assert parsed.document["guardrails"]["citation_required"] is True
        assert parsed.document["oversight"]["checkpoints"][0]["name"] == "analyst-review"
        assert "source-of-repayment" in parsed.document["prompts"]["system"]


def test_the_example_configurations_differ_only_in_the_model():
    gemini = configuration_load((EXAMPLES / "sigma-gemini-2.5.yaml").read_text())
    llama = configuration_load((EXAMPLES / "sigma-llama-4.yaml").read_text())
    assert gemini.model_ref == "gemini/gemini-2.5-pro"
    assert llama.model_ref == "together_ai/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"
    report = parity_report(gemini.document, llama.document)
    assert report.differing == ["model"]
    assert report.attributable_to_model_alone is True
    assert report.label == "attributable to the model alone"
    assert [d.path for d in report.component("model").differences] == [
        "model.api_key_env",
        "model.id",
        "model.provider",
    ]
    assert report.metadata_differences == ()


# ---------------------------------------------------------------------------------------- purity


def test_the_document_module_imports_without_django():
    code = (
        "import sys, charters.configurations; "
        "print(','.join(sorted(m for m in ('django', 'rest_framework') if m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


# --- the label output format (SPEC §4.1) ----------------------------------------------------

LABEL_PATTERN = r"^Judgement:\s*(?P<label>[^\n]+)$"


def test_a_label_output_format_with_a_named_group_is_valid_and_free_text_still_is():
    label = {"kind": "label", "pattern": LABEL_PATTERN, "description": "First line."}
    assert problems_of(minimal(guardrails={"output_format": label})) == []
    assert problems_of(minimal(guardrails={"output_format": "Prose with citations."})) == []


@pytest.mark.parametrize(
    ("output_format", "path", "words"),
    [
        ({"kind": "label", "pattern": r"^Judgement: (.+)$"}, "pattern", "no named group label"),
        (
            {"kind": "label", "pattern": r"^Judgement: (?P<label>.+$"},
            "pattern",
            "is not a valid regular expression: missing ), unterminated subpattern",
        ),
        ({"kind": "labels", "pattern": LABEL_PATTERN}, "kind", 'must be "label"'),
        ({"kind": "label"}, "pattern", "is required"),
        ({"kind": "label", "pattern": LABEL_PATTERN, "x": 1}, "x", "unknown field"),
        (3, "", "expected a text (free format, not parsed) or a mapping"),
    ],
)
def test_a_bad_label_output_format_is_refused_naming_the_field(output_format, path, words):
    [problem] = configuration_problems(minimal(guardrails={"output_format": output_format}))
    expected = "guardrails.output_format" + (f".{path}" if path else "")
    assert problem.path == expected
    assert words in problem.message
