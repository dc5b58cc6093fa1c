"""``make demo``: the credit-memo example end to end, with PDFs read back."""

import hashlib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from examples.credit_memo import generate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("out")
    stdout = StringIO()
    call_command("demo", "--out", str(out_dir), stdout=stdout)
    return out_dir, stdout.getvalue()


def pdf_text(path: Path) -> tuple[int, str]:
    reader = PdfReader(path)
    text = " ".join(page.extract_text() for page in reader.pages)
    return len(reader.pages), " ".join(text.split())


def test_the_demo_writes_one_decision_pdf_per_model(demo):
    out_dir, _ = demo
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "credit_memo_gemini-2.5_decision.pdf",
        "credit_memo_llama-4_decision.pdf",
    ]


@pytest.mark.parametrize(
    ("model", "name", "point_decision", "point_ei"),
    [("gemini-2.5", "Gemini 2.5", "Conditional", "2.45"), ("llama-4", "Llama 4", "Scale", "2.59")],
)
def test_each_pdf_reads_back_with_its_decisions_metrics_and_evidence(
    demo, model, name, point_decision, point_ei
):
    out_dir, _ = demo
    pages, text = pdf_text(out_dir / f"credit_memo_{model}_decision.pdf")
    assert 1 <= pages <= 6
    assert f"Gate decision — credit-memo drafting — {name}" in text
    assert point_decision in text and point_ei in text
    for label in ("Citation precision (lenient)", "Guidance recall", "Hallucination rate"):
        assert label in text
    assert "Illustrative" in text
    assert "ν profile" in text and "Metrics against their thresholds" in text
    sha = hashlib.sha256((ROOT / "examples" / "credit_memo" / f"{model}.yaml").read_bytes())
    sha = sha.hexdigest()
    assert sha in text.replace(" ", "")


def test_the_demo_prints_both_modes_and_refuses_the_printed_pair(demo):
    _, output = demo
    assert "mode: point" in output and "mode: conservative" in output
    assert "refused, as it must be" in output
    assert "inverted pair" in output and "irrelevance_rate" in output
    summary = output.split("Summary")[1]
    gemini = next(line for line in summary.splitlines() if line.startswith("Gemini 2.5"))
    llama = next(line for line in summary.splitlines() if line.startswith("Llama 4"))
    assert gemini.split()[2:5] == ["Conditional", "guidance_recall", "2.45"]
    assert llama.split()[2:5] == ["Scale", "hallucination_rate", "2.59"]


def test_the_committed_example_files_are_what_the_generator_makes():
    for name, content in generate.expected_files().items():
        assert (ROOT / "examples" / "credit_memo" / name).read_text(encoding="utf-8") == content


def test_the_illustrative_counts_reproduce_table_4_exactly():
    gemini = {m["id"]: m for m in generate.decision_input("gemini-2.5")["metrics"]}
    assert gemini["hallucination_rate"]["estimate"] == 1.6
    assert gemini["hallucination_rate"]["n"] == 500
    assert gemini["guidance_recall"]["n"] == 60
    for metric in gemini.values():
        lo, hi = metric["ci"]
        assert lo <= metric["estimate"] <= hi
