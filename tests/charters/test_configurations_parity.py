"""Harness parity between two σ documents (SPEC §9), on hand-built documents."""

from __future__ import annotations

import copy

from charters.configurations import ABSENT, LeafDifference, parity_report

BASE = {
    "schema_version": "1",
    "name": "Credit memo",
    "model": {
        "provider": "gemini",
        "id": "gemini-2.5-pro",
        "api_key_env": "GEMINI_API_KEY",
        "parameters": {"temperature": 0.2, "max_tokens": 2048},
    },
    "prompts": {"version": "sor-2.3", "system": "Draft.", "user_template": "{sources}"},
    "retrieval": {
        "corpus": "borrower-files",
        "chunking": {"strategy": "section", "size": 400, "overlap": 50},
        "top_k": 8,
        "embedder": "bm25",
    },
    "tools": [],
    "guardrails": {"citation_required": True, "blocked_terms": ["we recommend approval"]},
    "oversight": {
        "checkpoints": [{"name": "analyst-review", "description": "Analyst edits."}],
        "reviewer_role": "Credit analyst",
        "review_instructions": "Check citations.",
    },
}


def variant(**paths) -> dict:
    document = copy.deepcopy(BASE)
    for dotted, value in paths.items():
        *parents, leaf = dotted.split("__")
        node = document
        for part in parents:
            node = node[part]
        if value is ABSENT:
            del node[leaf]
        else:
            node[leaf] = value
    return document


def test_identical_configurations_differ_nowhere():
    report = parity_report(BASE, copy.deepcopy(BASE))
    assert report.identical is True
    assert report.differing == []
    assert all(not parity.differs for parity in report.components)
    assert report.attributable_to_model_alone is False
    assert report.label == "identical configurations"


def test_the_report_covers_the_six_components_in_order():
    report = parity_report(BASE, BASE)
    assert [(p.component.symbol, p.component.key) for p in report.components] == [
        ("M", "model"),
        ("P", "prompts"),
        ("Φ", "retrieval"),
        ("U", "tools"),
        ("Γ", "guardrails"),
        ("H", "oversight"),
    ]


def test_a_model_only_change_is_attributable_to_the_model_alone():
    other = variant(model__provider="together_ai", model__id="llama-4-maverick")
    report = parity_report(BASE, other)
    assert report.differing == ["model"]
    assert report.attributable_to_model_alone is True
    assert report.label == "attributable to the model alone"
    assert report.component("model").differences == (
        LeafDifference("model.id", "gemini-2.5-pro", "llama-4-maverick"),
        LeafDifference("model.provider", "gemini", "together_ai"),
    )


def test_a_model_parameter_change_is_still_the_model():
    report = parity_report(
        BASE, variant(model__parameters={"temperature": 0.7, "max_tokens": 2048})
    )
    assert report.component("model").differences == (
        LeafDifference("model.parameters.temperature", 0.2, 0.7),
    )
    assert report.attributable_to_model_alone is True


def test_anything_besides_the_model_makes_it_not_attributable_to_the_model_alone():
    other = variant(model__id="llama-4-maverick", retrieval__top_k=5)
    report = parity_report(BASE, other)
    assert report.differing == ["model", "retrieval"]
    assert report.attributable_to_model_alone is False
    assert report.label == "not attributable to the model alone"
    assert report.component("retrieval").differences == (LeafDifference("retrieval.top_k", 8, 5),)


def test_a_prompt_change_alone_is_not_attributable_to_the_model():
    report = parity_report(BASE, variant(prompts__system="Draft carefully."))
    assert report.differing == ["prompts"]
    assert report.label == "not attributable to the model alone"
    assert report.component("prompts").differences == (
        LeafDifference("prompts.system", "Draft.", "Draft carefully."),
    )


def test_nested_and_list_leaves_are_reported_with_both_values():
    other = variant(
        retrieval__chunking={"strategy": "section", "size": 300, "overlap": 50},
        guardrails__blocked_terms=["we recommend approval", "risk rating of"],
        oversight__checkpoints=[{"name": "analyst-review", "description": "Analyst signs."}],
    )
    report = parity_report(BASE, other)
    assert report.differing == ["retrieval", "guardrails", "oversight"]
    assert report.component("retrieval").differences == (
        LeafDifference("retrieval.chunking.size", 400, 300),
    )
    assert report.component("guardrails").differences == (
        LeafDifference("guardrails.blocked_terms[1]", ABSENT, "risk rating of"),
    )
    assert report.component("oversight").differences == (
        LeafDifference("oversight.checkpoints[0].description", "Analyst edits.", "Analyst signs."),
    )


def test_a_component_present_in_one_document_only_lists_its_leaves_against_absent():
    report = parity_report(BASE, variant(retrieval=ABSENT))
    differences = report.component("retrieval").differences
    assert [d.path for d in differences] == [
        "retrieval.chunking.overlap",
        "retrieval.chunking.size",
        "retrieval.chunking.strategy",
        "retrieval.corpus",
        "retrieval.embedder",
        "retrieval.top_k",
    ]
    assert all(d.b is ABSENT and d.a_present and not d.b_present for d in differences)
    assert report.label == "not attributable to the model alone"


def test_an_empty_tool_list_differs_from_no_tools_key():
    report = parity_report(BASE, variant(tools=ABSENT))
    assert report.component("tools").differences == (LeafDifference("tools", [], ABSENT),)


def test_an_added_tool_is_a_difference_in_u():
    tool = {"name": "ratios", "description": "Compute ratios.", "parameters": {}}
    report = parity_report(BASE, variant(tools=[tool]))
    assert report.differing == ["tools"]
    assert [d.path for d in report.component("tools").differences] == [
        "tools[0].description",
        "tools[0].name",
        "tools[0].parameters",
    ]


def test_values_compare_by_canonical_json():
    same = variant(model__parameters={"temperature": 0.2, "max_tokens": 2048.0})
    assert parity_report(BASE, same).identical is True
    flag = variant(guardrails__citation_required=1)
    assert parity_report(BASE, flag).component("guardrails").differences == (
        LeafDifference("guardrails.citation_required", True, 1),
    )


def test_name_and_description_do_not_count_against_parity():
    other = variant(name="Credit memo (Llama 4)", description="Other model.")
    report = parity_report(BASE, other)
    assert report.identical is True
    assert report.metadata_differences == (
        LeafDifference("name", "Credit memo", "Credit memo (Llama 4)"),
        LeafDifference("description", ABSENT, "Other model."),
    )


def test_the_report_serialises_absent_values_as_flags():
    data = parity_report(BASE, variant(retrieval__reranker="bge-reranker")).as_dict()
    assert data["label"] == "not attributable to the model alone"
    assert data["differing_components"] == ["retrieval"]
    retrieval = data["components"][2]
    assert retrieval["symbol"] == "Φ" and retrieval["differs"] is True
    assert retrieval["differences"] == [
        {
            "path": "retrieval.reranker",
            "a": None,
            "b": "bge-reranker",
            "a_present": False,
            "b_present": True,
        }
    ]
