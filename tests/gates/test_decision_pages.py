"""Decision pages: the list, one decision with its numbers and plots, and two side by side."""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from html import escape

import pytest
from django.test import Client
from django.urls import reverse

from charters.catalogue import catalogue_metric
from charters.models import Charter, Role
from charters.services.charters import charter_revise, charter_sign
from demo.testing.decisions import EXAMPLES, decide, load_example_estimates
from demo.testing.grading import make_world
from gates.algorithm import gate_evaluate
from gates.decision_file import load_decision_file
from gates.services import decision_record, gate_input_for
from gates.value_model import TimeInput, ValueInputs, value_estimate
from metrics.estimate import Interval, MetricEstimate
from metrics.task_estimators import net_time_reduction_estimate

IMG = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def plots_of(html: str) -> list[str]:
    return [base64.b64decode(data).decode("utf-8") for data in IMG.findall(html)]


def detail_url(world, decision) -> str:
    return reverse("decision-detail", args=[world.use_case.key, decision.pk])


def compare_url(world, a, b) -> str:
    return reverse("decision-compare", args=[world.use_case.key]) + f"?a={a}&b={b}"


@pytest.fixture
def world(db):
    return make_world()


# --------------------------------------------------------------------------- permissions


def pages(world, decision) -> dict[str, str]:
    key = world.use_case.key
    return {
        "list": reverse("decision-list", args=[key]),
        "detail": detail_url(world, decision),
        "compare": reverse("decision-compare", args=[key]),
    }


PERSONAS = {
    "owner": 200,
    "model_owner": 200,
    "reviewer": 200,
    "adjudicator": 200,
    "grader": 403,
    "outsider": 404,
}


@pytest.mark.parametrize("page", ["list", "detail", "compare"])
def test_each_page_answers_each_persona_as_its_role_allows(world, page):
    url = pages(world, decide(world))[page]
    for persona, expected in PERSONAS.items():
        user = world.graders[0] if persona == "grader" else getattr(world, persona)
        assert browser(user).get(url).status_code == expected, persona
    response = browser().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_grader_who_also_holds_another_role_is_refused(world):
    from charters.services.use_cases import membership_grant

    decision = decide(world)
    grader = world.graders[1]
    membership_grant(actor=world.owner, use_case=world.use_case, user=grader, role=Role.ADJUDICATOR)
    response = browser(grader).get(detail_url(world, decision))
    assert response.status_code == 403


def test_a_decision_of_no_such_number_is_not_found(world):
    decision = decide(world)
    url = reverse("decision-detail", args=[world.use_case.key, decision.pk + 1000])
    assert browser(world.owner).get(url).status_code == 404


def test_the_use_case_page_links_to_decisions_for_non_graders_only(world):
    url = reverse("use-case-detail", args=[world.use_case.key])
    link = reverse("decision-list", args=[world.use_case.key])
    assert link in browser(world.model_owner).get(url).content.decode()
    assert link not in browser(world.graders[0]).get(url).content.decode()


# --------------------------------------------------------------------------- the list


def test_the_list_shows_each_decision_with_status_sigma_charter_binding_metric_and_hash(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    html = browser(world.model_owner).get(pages(world, gemini)["list"]).content.decode()
    for decision, sigma in ((gemini, "gemini-2-5:1"), (llama, "llama-4:1")):
        assert detail_url(world, decision) in html
        assert sigma in html
        assert decision.sha256[:12] in html
        assert f'<span class="badge {decision.status}">{decision.status}</span>' in html
        assert f"{decision.ei:.2f}" in html
    assert "v1" in html
    assert "guidance_recall" in html
    assert html.index(detail_url(world, llama)) < html.index(detail_url(world, gemini))


def test_the_list_reads_in_the_same_number_of_queries_for_one_or_many_decisions(
    world, django_assert_num_queries
):
    decide(world)
    client = browser(world.owner)
    url = reverse("decision-list", args=[world.use_case.key])
    # session, user, use case, roles, decisions with charter, σ and author
    with django_assert_num_queries(5):
        client.get(url)
    decide(world, "llama-4")
    decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    with django_assert_num_queries(5):
        assert client.get(url).status_code == 200


# --------------------------------------------------------------------------- one decision


def test_the_decision_page_shows_the_status_binding_metric_and_reasons_in_words(world):
    decision = decide(world)
    html = browser(world.model_owner).get(detail_url(world, decision)).content.decode()
    assert '<span class="badge Reject">Reject</span>' in html
    assert "binding metric <strong" in html
    # Gemini 2.5's guidance recall: lower bound 66.46 does not exceed θout 75 (SPEC §6.1)
    assert "Decision Reject: guidance_recall does not clear θout" in html
    assert "guidance_recall: lower bound 66.46 does not exceed θout 75 → Reject" in html
    assert "hallucination_rate: upper bound 2.58 is below θin 5 → Scale" in html


def test_the_decision_page_shows_each_gated_metrics_numbers_from_the_record(world):
    decision = decide(world)
    html = browser(world.reviewer).get(detail_url(world, decision)).content.decode()
    gate_input = load_decision_file(EXAMPLES / "gemini-2.5.yaml").gate_input
    for metric in gate_input.metrics:
        assert f"{metric.estimate:.2f}" in html
        assert f"[{metric.ci[0]:.2f}, {metric.ci[1]:.2f}]" in html
        assert f"{metric.n} (25)" in html  # n (clusters)
    # ν by hand: guidance recall (66.46 − 75)/(80 − 75) = −1.71 → clipped to −1;
    # hallucination (10 − 2.58)/(10 − 5) = 1.484; citation precision (83.7 − 65)/5 → ν_max 3
    assert "<td>-1.00</td>" in html
    assert "<td>1.48</td>" in html
    assert "<td>3.00</td>" in html
    # EI = (3 + 3 + 3 + 1.484 + 3 − 1)/6 = 2.08; EI_G = −1 since a ν is −1
    assert "EI <strong>2.08</strong>" in html
    assert "EI_G <strong>-1.00</strong>" in html
    assert "&gt; 75" in html and "&lt; 5" in html  # θout of guidance recall, θin of HR
    assert '66.46 <span class="muted">(lower bound)' in html
    assert '2.58 <span class="muted">(upper bound)' in html
    assert "cluster-robust ratio (illustrative counts), 95% CI" in html
    assert "<td>0.70</td>" in html  # κ


def test_the_decision_page_recommends_how_many_more_outputs_to_grade(world):
    decision = decide(world)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    # SPEC §5.3, in outputs for an 80 % chance: 25 graded outputs · (13.54/5)² · 2.043203
    # (((z₀.₉₇₅ + z₀.₈)/z₀.₉₇₅)²) = 374.6 → 375 outputs, 350 more; the human-only estimate
    # would cross the 100 outputs from which PPI gates, and the page says so.
    assert "guidance_recall: grade about 350 more outputs" in html
    assert "25 → 375 graded outputs, SPEC §5.3); from 100 graded outputs" in html


def test_the_decision_page_shows_the_evidence_hashes_and_the_decisions_sha256(world):
    decision = decide(world)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    charter = Charter.objects.get(use_case=world.use_case)
    assert charter.sha256 in html
    assert decision.run.source_sha256 in html
    assert decision.sha256 in html


def test_the_decision_page_draws_bands_nu_profile_and_ei_band_with_the_metrics(world):
    decision = decide(world)
    response = browser(world.owner).get(detail_url(world, decision))
    img_src = response["Content-Security-Policy"].split("img-src")[1].split(";")[0]
    assert "data:" in img_src.split()  # the plots are data: URIs, which the CSP admits
    html = response.content.decode()
    assert "<svg" not in html and "<script" not in html.split("</head>")[1]
    plots = plots_of(html)
    assert len(plots) == 3  # no value estimate recorded, so no value plot
    assert all(plot.lstrip().startswith("<?xml") and "<svg" in plot for plot in plots)
    bands, profile, ei = plots
    for metric in decision.record["gate"]["metrics"]:
        # labels are real SVG text (svg.fonttype "none"), selectable in the page and PDF
        assert f">{escape(metric['label'])}</text>" in bands
        assert f">{escape(metric['label'])}</text>" in profile
        assert metric["label"] == catalogue_metric(metric["id"]).name
    assert "EI 2.08" in ei and "EI_G -1.00" in ei
    assert "No value estimate was recorded with this decision." in html


def test_a_recorded_value_estimate_is_shown_with_its_interval_and_plot(world):
    inputs = ValueInputs(
        tasks_per_year=2_000,
        hourly_cost=90,
        t_manual=TimeInput.observed([3.1, 2.8, 3.4, 3.0]),
        t_gen=TimeInput.fixed(0.1),
        t_review=TimeInput.triangular(0.5, 0.75, 1.2),
        inference_cost_per_task=0.4,
        baseline_observed=True,
    )
    estimate = replace(value_estimate(inputs, draws=2_000, seed=7), currency="GBP")
    provenance = {
        "sources": {"t_manual": "observed: 4 samples, mean 3.08 h", "t_review": "charter range"},
        "kinds": {"t_manual": "observed", "t_review": "charter range"},
    }
    decision = decide(world, value={**estimate.to_dict(), "provenance": provenance})
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    # SPEC §6.3: the point is the Monte Carlo median, said so; thousands separated
    assert f"V_annual <strong>GBP {estimate.point:,.0f}</strong>" in html
    assert f"90% interval [GBP {estimate.lo:,.0f}, GBP {estimate.hi:,.0f}]" in html
    assert "the point is the median of the Monte Carlo draws (2000 seeded Monte Carlo" in html
    assert f"at the inputs' central values V_annual is GBP {estimate.central:,.0f}" in html
    assert '<span class="badge">observed</span>' in html
    assert "<th>GBP per year</th>" in html
    for amount in estimate.components.values():
        assert f"<td>GBP {amount:,.0f}</td>" in html or abs(amount) < 1
    sources = html.split('id="value-sources"')[1].split("</table>")[0]
    assert '<td class="mono">t_manual</td><td><span class="badge">observed</span></td>' in sources
    assert '<td class="mono">t_review</td><td><span class="badge">charter range</span>' in sources
    value_plot = plots_of(html)[-1]
    assert "V_annual (observed)" in value_plot
    assert f"GBP {estimate.point:,.0f}" in value_plot and "GBP per year" in value_plot


def test_an_unavailable_value_estimate_says_why(world):
    decision = decide(world, value={"unavailable": "the charter gives no value inputs"})
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert "No value estimate: the charter gives no value inputs." in html
    assert len(plots_of(html)) == 3


def test_an_undetermined_decision_names_the_metric_without_an_estimate_and_why(world):
    estimates = [
        e
        if e.metric_id != "hallucination_rate"
        else replace(
            e, point=None, lo=None, hi=None, reason="no graded sentence has a hallucination label"
        )
        for e in load_example_estimates("gemini-2.5")
    ]
    decision = decide(world, estimates=estimates)
    assert decision.status == "Undetermined"
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert "Why the decision is Undetermined" in html
    assert (
        '<span class="mono">hallucination_rate</span> has no estimate: no graded sentence has '
        "a hallucination label." in html
    )
    assert "Decision Undetermined: no estimate for hallucination_rate" in html
    assert "Not computed: every gated metric needs an estimate first." in html
    assert len(plots_of(html)) == 2  # no EI band without EI


def test_a_human_graded_metric_below_the_kappa_target_is_named(world):
    estimates = [
        replace(e, kappa=0.41) if e.metric_id == "irrelevance_rate" else e
        for e in load_example_estimates("gemini-2.5")
    ]
    decision = decide(world, estimates=estimates)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert decision.status == "Undetermined"
    assert '<span class="mono">irrelevance_rate</span> is not eligible' in html
    assert "(κ = 0.41 against the target 0.6)" in html
    assert '<span class="badge Undetermined">not eligible</span>' in html


def test_informational_metrics_are_listed_apart_with_their_reason_and_estimate(world):
    strict = MetricEstimate(
        metric_id="citation_precision_strict",
        point=71.25,
        lo=64.5,
        hi=78.0,
        confidence=0.95,
        n=250,
        n_clusters=25,
        mode="H",
        estimator="cluster-robust ratio",
    )
    decision = decide(world, estimates=[*load_example_estimates("gemini-2.5"), strict])
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    informational = html[html.index("<h2>Informational metrics</h2>") :]
    assert "citation_precision_strict" in informational
    assert "Lenient precision is gated; strict precision" in informational
    assert "71.25" in informational and "[64.50, 78.00]" in informational
    assert "not estimated" in informational  # the charter's other informational metrics
    assert "citation_precision_strict" not in html[: html.index("<h2>Informational metrics")]


COST = MetricEstimate(
    metric_id="cost_per_successful_task",
    point=0.000864,
    lo=0.000712,
    hi=0.00102,
    confidence=0.95,
    n=65,
    n_clusters=65,
    mode="A",
    estimator="total cost / successful tasks",
)


def test_a_cost_is_shown_in_its_currency_with_significant_digits_not_as_zero(world):
    decision = decide(world, estimates=[*load_example_estimates("gemini-2.5"), COST])
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    row = html[html.index("cost_per_successful_task") :].split("</tr>")[0]
    assert "<td>USD 0.000864</td>" in row
    assert "<td>[USD 0.000712, USD 0.00102]</td>" in row
    assert "0.00 " not in row and "[0.00," not in row


def test_a_ppi_estimate_shows_the_human_only_and_judge_only_values_beside_it(world):
    estimates = [
        replace(
            e,
            mode="PPI",
            estimator="PPI++ ratio, λ = 0.62",
            human_only=Interval(1.9, 0.4, 3.4),
            judge_only=Interval(1.2, 0.9, 1.5),
            under_sampled=True,
            planned_n=800,
        )
        if e.metric_id == "hallucination_rate"
        else e
        for e in load_example_estimates("gemini-2.5")
    ]
    decision = decide(world, estimates=estimates)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert "PPI++ ratio, λ = 0.62" in html
    assert "<td>1.90 [0.40, 3.40]</td>" in html
    assert "<td>1.20 [0.90, 1.50]</td>" in html
    assert "under-sampled</span> planned n = 800" in html


def test_the_decision_page_states_what_each_estimate_estimates(world):
    estimand = (
        "the metric over the outputs σ produces on the frozen task set; no finite-population "
        "correction"
    )
    estimates = [
        replace(e, estimand=estimand) if e.metric_id == "hallucination_rate" else e
        for e in load_example_estimates("gemini-2.5")
    ]
    decision = decide(world, estimates=estimates)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert f'<span class="estimand">Estimand: {estimand}</span>' in html
    assert html.count('class="estimand"') == 1  # the others recorded none


def test_the_decision_page_reads_in_a_fixed_number_of_queries(world, django_assert_num_queries):
    decision = decide(world)
    client = browser(world.owner)
    # session, user, use case, roles, the decision with its relations and scorecard,
    # informational metrics, σ's model's latest EGI result
    with django_assert_num_queries(7):
        assert client.get(detail_url(world, decision)).status_code == 200


# --------------------------------------------------------------------------- two decisions


def test_two_decisions_that_differ_only_in_the_model_are_attributable_to_it(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    response = browser(world.model_owner).get(compare_url(world, gemini.pk, llama.pk))
    assert response.status_code == 200
    html = response.content.decode()
    assert '<span class="badge ok">attributable to the model alone</span>' in html
    assert "not attributable" not in html
    assert f"{gemini.ei:.2f}" in html and f"{llama.ei:.2f}" in html
    for model, decision in (("gemini-2.5", gemini), ("llama-4", llama)):
        assert f'<span class="badge {decision.status}">{decision.status}</span>' in html
        for metric in load_decision_file(EXAMPLES / f"{model}.yaml").gate_input.metrics:
            assert f"[{metric.ci[0]:.2f}, {metric.ci[1]:.2f}]" in html


def test_a_comparison_shows_each_metric_side_by_side_in_charter_order(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    html = browser(world.owner).get(compare_url(world, gemini.pk, llama.pk)).content.decode()
    table = html[html.index("<h2>Gated metrics</h2>") :]
    rows = table.split("<tr>")[2:]
    assert [re.search(r'mono muted">(\w+)<', row)[1] for row in rows] == [
        m["id"] for m in gemini.record["gate"]["metrics"]
    ]
    recall = next(row for row in rows if "guidance_recall" in row)
    assert recall.count("badge") == 2


def test_two_decisions_on_the_same_sigma_are_labelled_identical_configurations(world):
    first = decide(world, "gemini-2.5")
    second = decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    html = browser(world.owner).get(compare_url(world, first.pk, second.pk)).content.decode()
    assert '<span class="badge">identical configurations</span>' in html


def test_decisions_under_different_charter_versions_are_refused(world):
    first = decide(world)
    charter = Charter.objects.get(use_case=world.use_case, version=1)
    revision = charter_revise(actor=world.owner, charter=charter, reason="recalibrated thresholds")
    for user, role in (
        (world.owner, Role.CHARTER_OWNER),
        (world.model_owner, Role.MODEL_OWNER),
        (world.reviewer, Role.REVIEWER),
    ):
        charter_sign(actor=user, charter=revision, role=role)
    second = decide(world, "llama-4", charter=revision)
    response = browser(world.owner).get(compare_url(world, first.pk, second.pk))
    assert response.status_code == 400
    html = response.content.decode()
    assert (
        f"Decision {first.pk} was gated under charter v1 and decision {second.pk} under "
        "charter v2" in html
    )
    assert "attributable" not in html.split("</form>")[-1]


def test_a_decision_outside_the_use_case_or_a_bad_number_is_refused_with_a_message(world):
    decision = decide(world)
    client = browser(world.owner)
    response = client.get(compare_url(world, decision.pk, decision.pk + 1000))
    assert response.status_code == 400
    assert f"B: there is no decision {decision.pk + 1000} in {world.use_case.key}" in (
        response.content.decode()
    )
    response = client.get(compare_url(world, decision.pk, "latest"))
    assert response.status_code == 400
    assert "B: Enter a whole number." in response.content.decode()
    response = client.get(compare_url(world, decision.pk, decision.pk))
    assert response.status_code == 400
    assert "Choose two different decisions" in response.content.decode()


def test_the_comparison_reads_in_a_fixed_number_of_queries(world, django_assert_num_queries):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    decide(world, "gemini-2.5", estimates=load_example_estimates("gemini-2.5")[:-1])
    client = browser(world.owner)
    # session, user, use case, roles, the decision list of the form, the two decisions
    with django_assert_num_queries(6):
        assert client.get(compare_url(world, gemini.pk, llama.pk)).status_code == 200


def test_a_value_below_break_even_is_drawn_with_its_interval(world):
    value = {
        "point": -12_500.0,
        "lo": -30_000.0,
        "hi": -2_000.0,
        "level": 0.9,
        "draws": 10_000,
        "seed": 1,
        "label": "estimated",
        "components": {"time_saved": 1_000.0, "error_loss": -13_500.0},
    }
    decision = decide(world, value=value)
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    assert "V_annual <strong>-12,500</strong>" in html
    # a record made before SPEC §6.3's median has no point rule; the page says so, not "median"
    assert "the point is the value at the inputs&#x27; central values (10000" in html
    assert "Estimated, not observed" in html
    assert "V_annual (estimated): point -12,500" in plots_of(html)[-1]


def test_an_undetermined_decision_for_missing_intensity_evidence_says_what_is_missing(world):
    charter = Charter.objects.get(use_case=world.use_case)
    estimates = load_example_estimates("llama-4")
    gate = gate_evaluate(
        gate_input_for(charter=charter, estimates={e.metric_id: e for e in estimates}),
        mode="conservative",
    )
    gap = "E2 needs human grading with ≥ 2 graders and κ per field: no grading session is attached"
    gate = replace(
        gate,
        decision="Undetermined",
        reasons=("Decision Undetermined: evidence is missing (SPEC §6.4)", gap, *gate.reasons),
    )
    decision = decision_record(
        actor=world.owner,
        charter=charter,
        run=world.runs[1],
        estimates=estimates,
        gate=gate,
        evidence={},
    )
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    why = html[html.index("Why the decision is Undetermined") : html.index("<h2>Efficacy Index")]
    assert f"Decision Undetermined: evidence is missing (SPEC §6.4): {gap}" in why
    assert "No evidence hashes were recorded." in html


def test_the_ei_band_reads_as_a_weight_sensitivity_range_on_both_pages_never_as_a_ci(world):
    gemini = decide(world, "gemini-2.5")
    llama = decide(world, "llama-4")
    detail = browser(world.owner).get(detail_url(world, gemini)).content.decode()
    compare = browser(world.owner).get(compare_url(world, gemini.pk, llama.pk)).content.decode()
    for decision, html in ((gemini, detail), (gemini, compare), (llama, compare)):
        low, high = decision.ei_band_lo, decision.ei_band_hi
        # SPEC §6.2: "low to high", named, with what it is; never "[low, high]" like a CI
        assert f"{low:.2f} to {high:.2f}" in html
        assert f"[{low:.2f}, {high:.2f}]" not in html
    for html in (detail, compare):
        assert "Weight-sensitivity range" in html or "weight-sensitivity range" in html
        assert "not a confidence interval" in html
        assert "sensitivity band" not in html


def test_the_delta_eff_interval_says_it_carries_the_charters_baseline_range(world):
    reviewed = 8
    delta_eff = net_time_reduction_estimate(
        [3.0] * reviewed,
        [0.05] * reviewed,
        [0.01] * reviewed,
        baseline="estimated",
        confidence=0.95,
        manual_range=(2.0, 3.0, 5.0),
    )
    decision = decide(world, estimates=[*load_example_estimates("gemini-2.5"), delta_eff])
    html = browser(world.owner).get(detail_url(world, decision)).content.decode()
    row = html.split('<span class="mono muted">net_time_reduction</span>')[1].split("</tr>")[0]
    # SPEC §4 / issue 16: an estimated 3 h baseline is not treated as exact, and the page says so
    assert f"[{delta_eff.lo:.2f}, {delta_eff.hi:.2f}]" in row
    assert "baseline uncertainty carried: the charter&#x27;s range 2–5 h (mode 3)" in row


def test_the_comparison_prints_each_value_with_its_currency_and_point_rule(world):
    inputs = ValueInputs(
        tasks_per_year=2_600,
        hourly_cost=95,
        t_manual=TimeInput.triangular(2.0, 3.0, 5.0),
        t_gen=TimeInput.fixed(0.05),
        t_review=TimeInput.triangular(0.5, 1.0, 1.5),
        inference_cost_per_task=0.4,
    )
    estimate = replace(value_estimate(inputs, draws=2_000, seed=7), currency="GBP")
    gemini = decide(world, "gemini-2.5", value=estimate.to_dict())
    llama = decide(world, "llama-4", value=estimate.to_dict())
    html = browser(world.owner).get(compare_url(world, gemini.pk, llama.pk)).content.decode()
    row = html.split("<tr><td>V_annual</td>")[1].split("</tr>")[0]
    expected = (
        f"GBP {estimate.point:,.0f} [GBP {estimate.lo:,.0f}, GBP {estimate.hi:,.0f}] "
        "(estimated; point: median of the Monte Carlo draws)"
    )
    assert row.count(expected) == 2
