"""The decision report: escaped HTML, plots, and a PDF rendered by WeasyPrint and read back."""

from pypdf import PdfReader

from gates.algorithm import GateInput, MetricInput, gate_evaluate
from gates.report import DecisionReport, decision_report_html, render_decision_pdf


def sample_input() -> GateInput:
    return GateInput(
        metrics=(
            MetricInput(
                id="guidance_recall",
                direction="higher",
                theta_out=75,
                theta_in=80,
                weight=1,
                estimate=86.0,
                ci=(78.0, 92.0),
                grading="H",
                kappa=0.7,
                n=120,
            ),
            MetricInput(
                id="hallucination_rate",
                direction="lower",
                theta_out=10,
                theta_in=5,
                weight=1,
                estimate=3.0,
                ci=(2.0, 4.5),
                grading="J",
                n=900,
            ),
        )
    )


def report(**about) -> DecisionReport:
    gate_input = sample_input()
    return DecisionReport(
        title="Gate decision — test",
        conservative=gate_evaluate(gate_input, mode="conservative"),
        point=gate_evaluate(gate_input, mode="point"),
        about=about,
        source_path="input.yaml",
        source_sha256="ab" * 32,
    )


def test_untrusted_text_is_escaped_in_the_report():
    html = decision_report_html(report(model="<script>alert(1)</script>", notes=["<b>x</b>"]))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


def test_the_report_embeds_both_plots_as_svg():
    html = decision_report_html(report())
    assert html.count("data:image/svg+xml;base64,") == 2


def test_the_pdf_renders_and_reads_back_with_the_decision(tmp_path):
    path = render_decision_pdf(report(model="Test model"), tmp_path / "nested" / "decision.pdf")
    reader = PdfReader(path)
    text = "\n".join(page.extract_text() for page in reader.pages)
    # Conservative: recall lower bound 78 is between θout 75 and θin 80 → Conditional.
    assert "Conditional" in text
    assert "guidance_recall" in text and "hallucination_rate" in text
    assert "Test model" in text
    assert "ab" * 32 in text.replace("\n", "")
    assert 1 <= len(reader.pages) <= 4
