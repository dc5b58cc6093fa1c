"""EGI aggregation (SPEC §10; seed 000 §4, Table 2, Appendix C Table 6).

Every expected number is computed by hand in the test that checks it.
"""

import copy
import json

import pytest

from audit.canonical import canonical_json, sha256_hex
from egibench.aggregate import (
    BUCKETS,
    DEFAULT_EGI_WEIGHTS,
    Route,
    aggregate,
    check_routing,
    effective_weights,
    load_routing,
    normalise,
    parse_egi_weights,
    routing_from_mapping,
)

# Full raw results for the default routing, in native scales (HERB F1/content in percent).
FULL_RAW = {
    "crmarena": {
        "case_routing": 0.5,
        "handle_time": 0.6,
        "transfer_count": 0.7,
        "top_issue_identification": 0.8,
        "best_region_identification": 0.9,
        "monthly_trend_analysis": 1.0,
        "named_entity_disambiguation": 0.6,
        "knowledge_qa": 0.7,
        "policy_violation_identification": 0.5,
    },
    "herb": {"entity_f1": 80.0, "content_correctness": 65.0, "unanswerable_null_rate": 0.8},
    "personabench": {"qa_accuracy": 0.55},
    "userbench": {"micro_avg": 0.3, "micro_max": 0.9},
    "mcp_universe": {
        "pass_rate_financial_analysis": 0.8,
        "pass_rate_web_search": 0.7,
        "pass_rate_location_navigation": 0.6,
    },
    "mcpeval": {"flexible_average_score": 0.9},
    "benchforce": {"accuracy_all": 0.6, "finished_ratio": 0.95, "accuracy_finished": 0.7},
    "locobench": {
        "functional_correctness": 0.4,
        "software_engineering": 0.7,
        "code_quality": 0.8,
        "longcontext_utilization": 0.5,
    },
}
# Hand computation for FULL_RAW:
# M1 = (50+60+70+80+90+100 + 60 + 40)/8 = 550/8 = 68.75
# M2 = (80+70+60 + 90 + 95)/5 = 395/5 = 79
# M3 = (30 + 50)/2 = 40
# M4 = (60+70 + 80+65 + 55)/5 = 330/5 = 66
# M5 = (50 + 80 + (100 − (70 − 60)))/3 = 220/3
# M6 = (70 + 80)/2 = 75
FULL_M = {"M1": 68.75, "M2": 79.0, "M3": 40.0, "M4": 66.0, "M5": 220 / 3, "M6": 75.0}
# EGI = 0.28·68.75 + 0.22·79 + 0.16·40 + 0.14·66 + 0.14·220/3 + 0.06·75
#     = 19.25 + 17.38 + 6.4 + 9.24 + 10.2666… + 4.5 = 67.0366…
FULL_EGI = 19.25 + 17.38 + 6.4 + 9.24 + 0.14 * 220 / 3 + 4.5


@pytest.fixture(scope="module")
def routing():
    return load_routing()


def _route(**fields):
    base = {"benchmark": "a", "sub_metric": "x", "bucket": "M1", "direction": "higher"}
    return Route(**{"scale": "fraction", **base, **fields})


def _without(raw, benchmark, key=None):
    raw = copy.deepcopy(raw)
    if key is None:
        del raw[benchmark]
    else:
        del raw[benchmark][key]
    return raw


# Normalisation -------------------------------------------------------------------------


def test_it_multiplies_a_fraction_by_100():
    assert normalise(0.734, route=_route(scale="fraction")) == pytest.approx(73.4)


def test_it_keeps_a_percentage_as_is():
    assert normalise(73.4, route=_route(scale="percent")) == pytest.approx(73.4)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12, 60.0),  # 100·(1 − 12/30)
        (0, 100.0),
        (30, 0.0),
        (45, 0.0),  # beyond the ceiling: clipped to 0
        (-3, 100.0),  # below zero: clipped to 100
    ],
)
def test_it_inverts_a_lower_is_better_count_against_its_ceiling(value, expected):
    route = _route(scale="count", direction="lower", ceiling=30.0)
    assert normalise(value, route=route) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("scale", "value"), [("fraction", 1.2), ("fraction", -0.1), ("percent", 101)]
)
def test_it_refuses_a_higher_is_better_value_outside_its_scale(scale, value):
    with pytest.raises(ValueError, match=r"a\.x: .* outside the .* scale"):
        normalise(value, route=_route(scale=scale))


def test_the_benchforce_gap_enters_m5_as_100_minus_the_gap_in_percent(routing):
    raw = {"benchforce": {"accuracy_all": 0.55, "accuracy_finished": 0.70, "finished_ratio": 1.0}}
    result = aggregate(raw, routing=routing)
    [gap] = [c for c in result.contributors["M5"] if c.route.sub_metric == "accuracy_gap"]
    # 100 − (70 − 55) = 85
    assert gap.raw == pytest.approx(0.15)
    assert gap.normalised == pytest.approx(85.0)
    assert result.bucket_scores["M5"] == pytest.approx(85.0)


def test_a_negative_benchforce_gap_clips_to_100(routing):
    raw = {"benchforce": {"accuracy_all": 0.6, "accuracy_finished": 0.5, "finished_ratio": 1.0}}
    result = aggregate(raw, routing=routing)
    assert result.bucket_scores["M5"] == pytest.approx(100.0)


def test_the_gap_is_missing_when_one_operand_is(routing):
    raw = {"benchforce": {"accuracy_all": 0.6, "finished_ratio": 1.0}}
    result = aggregate(raw, routing=routing)
    [row] = [m for m in result.missing if m["sub_metric"] == "accuracy_gap"]
    assert row["reason"] == "sub-metric missing: accuracy_finished"


# Buckets and EGI ---------------------------------------------------------------------------


def test_full_results_reproduce_the_hand_computed_buckets_and_egi(routing):
    result = aggregate(FULL_RAW, routing=routing)
    assert result.bucket_scores == pytest.approx(FULL_M)
    assert result.egi == pytest.approx(FULL_EGI)
    assert result.egi == pytest.approx(67.036667, abs=1e-6)
    assert not result.partial
    assert result.weight_covered == pytest.approx(1.0)
    assert result.missing == ()
    assert result.release_ready


def test_a_missing_sub_metric_is_reweighted_within_its_bucket_only(routing):
    raw = _without(FULL_RAW, "crmarena", "policy_violation_identification")
    result = aggregate(raw, routing=routing)
    # M5 = (80 + 90)/2 = 85; the other buckets and the EGI weights are unchanged.
    assert result.bucket_scores["M5"] == pytest.approx(85.0)
    for bucket in ("M1", "M2", "M3", "M4", "M6"):
        assert result.bucket_scores[bucket] == pytest.approx(FULL_M[bucket])
    assert result.egi_weights == DEFAULT_EGI_WEIGHTS
    assert result.egi == pytest.approx(FULL_EGI + 0.14 * (85.0 - 220 / 3))
    effective = {c.route.sub_metric: c.effective_weight for c in result.contributors["M5"]}
    assert effective == {
        "policy_violation_identification": 0.0,
        "unanswerable_null_rate": 0.5,
        "accuracy_gap": 0.5,
    }
    assert result.missing == (
        {
            "benchmark": "crmarena",
            "sub_metric": "policy_violation_identification",
            "bucket": "M5",
            "reason": "sub-metric missing: policy_violation_identification",
        },
    )
    assert not result.partial


def test_a_missing_benchmark_drops_all_its_sub_metrics_and_leaves_m6_empty(routing):
    result = aggregate(_without(FULL_RAW, "locobench"), routing=routing)
    # M1 = (550 − 40)/7; M3 = 30 (UserBench alone); M6 has no data.
    assert result.bucket_scores["M1"] == pytest.approx(510 / 7)
    assert result.bucket_scores["M3"] == pytest.approx(30.0)
    assert result.bucket_scores["M6"] is None
    assert result.missing_benchmarks == ("locobench",)
    assert result.missing_buckets == ("M6",)
    assert [(m["sub_metric"], m["bucket"], m["reason"]) for m in result.missing] == [
        ("functional_correctness", "M1", "benchmark missing"),
        ("software_engineering", "M6", "benchmark missing"),
        ("code_quality", "M6", "benchmark missing"),
        ("longcontext_utilization", "M3", "benchmark missing"),
    ]


def test_a_bucket_without_data_makes_egi_partial_without_reweighting_across_buckets(routing):
    result = aggregate(_without(FULL_RAW, "locobench"), routing=routing)
    # Partial EGI = Σ over present buckets with the unchanged weights (M6 adds nothing):
    # 0.28·510/7 + 0.22·79 + 0.16·30 + 0.14·66 + 0.14·220/3 = 20.4 + 17.38 + 4.8 + 9.24 + 10.2666…
    expected = 20.4 + 17.38 + 4.8 + 9.24 + 0.14 * 220 / 3
    assert result.partial
    assert result.egi == pytest.approx(expected)
    assert result.egi == pytest.approx(62.086667, abs=1e-6)
    assert result.weight_covered == pytest.approx(0.94)
    assert result.egi_weights == DEFAULT_EGI_WEIGHTS
    artifact = result.to_dict()
    assert artifact["buckets"]["M6"]["missing"] is True
    assert artifact["buckets"]["M6"]["score"] is None


def test_declared_weights_give_a_weighted_mean_within_the_bucket():
    routing = routing_from_mapping(
        {
            "benchmarks": ["a"],
            "routes": [
                {"benchmark": "a", "sub_metric": "x", "bucket": "M1", "direction": "higher",
                 "scale": "fraction", "weight": 3},
                {"benchmark": "a", "sub_metric": "y", "bucket": "M1", "direction": "higher",
                 "scale": "percent"},
            ],
        }
    )  # fmt: skip
    # (3·80 + 1·40)/4 = 70; without x: 40 with effective weight 1.
    assert aggregate({"a": {"x": 0.8, "y": 40}}, routing=routing).bucket_scores["M1"] == 70.0
    alone = aggregate({"a": {"y": 40}}, routing=routing)
    assert alone.bucket_scores["M1"] == 40.0
    assert [c.effective_weight for c in alone.contributors["M1"]] == [0.0, 1.0]


def test_a_benchmark_mapped_to_none_counts_as_missing(routing):
    raw = {**FULL_RAW, "herb": None}
    assert aggregate(raw, routing=routing).missing_benchmarks == ("herb",)


def test_unrouted_keys_are_listed_not_scored(routing):
    result = aggregate(FULL_RAW, routing=routing)
    assert result.unrouted == ({"benchmark": "userbench", "sub_metric": "micro_max"},)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "0.5", True])
def test_it_refuses_a_raw_value_that_is_not_a_finite_number(routing, value):
    raw = {"herb": {"entity_f1": value}}
    with pytest.raises(ValueError, match=r"herb\.entity_f1"):
        aggregate(raw, routing=routing)


def test_it_refuses_a_fraction_given_as_a_percentage(routing):
    with pytest.raises(ValueError, match=r"crmarena\.knowledge_qa: 70\.0 is outside"):
        aggregate({"crmarena": {"knowledge_qa": 70}}, routing=routing)


# Release floors ------------------------------------------------------------------------


def test_floors_flag_release_readiness_without_changing_egi(routing):
    raw = copy.deepcopy(FULL_RAW)
    raw["crmarena"]["policy_violation_identification"] = 0.2
    raw["herb"]["unanswerable_null_rate"] = 0.5
    # M5 = (20 + 50 + 90)/3 = 53.33… < 70
    floored = aggregate(raw, routing=routing)
    unfloored = aggregate(raw, routing=routing, floors={})
    assert floored.bucket_scores["M5"] == pytest.approx(160 / 3)
    assert not floored.release_ready
    assert unfloored.release_ready
    assert floored.egi == unfloored.egi
    floors = floored.to_dict()["floors"]
    assert floors["M5"]["status"] == "below"
    assert floors["M2"] == {"floor": 70.0, "score": pytest.approx(79.0), "status": "pass"}


def test_a_score_equal_to_its_floor_passes(routing):
    assert aggregate(FULL_RAW, routing=routing, floors={"M2": 79}).release_ready


def test_a_missing_floored_bucket_is_not_release_ready(routing):
    result = aggregate(_without(FULL_RAW, "locobench"), routing=routing, floors={"M6": 0})
    assert not result.release_ready
    assert result.to_dict()["floors"]["M6"]["status"] == "missing"


@pytest.mark.parametrize(
    ("floors", "match"), [({"M7": 70}, "unknown bucket"), ({"M2": 101}, "M2 floor")]
)
def test_it_refuses_a_bad_floor(routing, floors, match):
    with pytest.raises(ValueError, match=match):
        aggregate(FULL_RAW, routing=routing, floors=floors)


# EGI weight overrides -------------------------------------------------------------------


def test_named_weights_replace_the_defaults_and_the_others_are_rescaled():
    named = parse_egi_weights("M1=0.20,M5=0.30")
    assert named == {"M1": 0.2, "M5": 0.3}
    weights = effective_weights(named)
    factor = (1 - 0.5) / (1 - 0.28 - 0.14)  # 0.5/0.58
    assert weights == pytest.approx(
        {
            "M1": 0.20,
            "M2": 0.22 * factor,  # 0.189655…
            "M3": 0.16 * factor,  # 0.137931…
            "M4": 0.14 * factor,  # 0.120690…
            "M5": 0.30,
            "M6": 0.06 * factor,  # 0.051724…
        }
    )
    assert sum(weights.values()) == pytest.approx(1.0)


def test_aggregate_applies_the_override_and_returns_the_effective_weights(routing):
    result = aggregate(FULL_RAW, routing=routing, weights={"M1": 0.2, "M5": 0.3})
    # 0.2·68.75 + (0.5/0.58)·(0.22·79 + 0.16·40 + 0.14·66 + 0.06·75) + 0.3·220/3
    # = 13.75 + (0.5/0.58)·37.52 + 22 = 68.0948…
    assert result.egi == pytest.approx(13.75 + 0.5 / 0.58 * 37.52 + 22)
    assert result.to_dict()["egi_weights"]["M5"] == 0.3


def test_no_override_gives_the_paper_weights():
    assert effective_weights() == {
        "M1": 0.28, "M2": 0.22, "M3": 0.16, "M4": 0.14, "M5": 0.14, "M6": 0.06,
    }  # fmt: skip


def test_bucket_names_in_an_override_are_case_insensitive():
    assert parse_egi_weights(" m1 = 0.2 , M5=0.3") == {"M1": 0.2, "M5": 0.3}


def test_all_six_named_weights_must_sum_to_one():
    text = "M1=0.5,M2=0.1,M3=0.1,M4=0.1,M5=0.1,M6=0.1"
    assert effective_weights(parse_egi_weights(text))["M1"] == 0.5
    with pytest.raises(ValueError, match=r"all six buckets are named and sum to 0\.9"):
        parse_egi_weights("M1=0.4,M2=0.1,M3=0.1,M4=0.1,M5=0.1,M6=0.1")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty"),
        ("M1", "malformed part 'M1'"),
        ("M1=", "malformed part 'M1='"),
        ("M1=0.2,,M5=0.3", "malformed part ''"),
        ("=0.2", "malformed part '=0.2'"),
        ("M1=abc", "weight in 'M1=abc' is not a number"),
        ("M1=0.2;M5=0.3", "weight in 'M1=0.2;M5=0.3' is not a number"),
        ("M7=0.1", "unknown bucket in 'M7=0.1'"),
        ("M1=-0.1", "M1 weight -0.1 is negative"),
        ("M1=nan", "M1 weight nan is not a finite number"),
        ("M1=0.6,M2=0.5", "sum to 1.1, above 1"),
        ("M1=0.1,m1=0.2", "bucket M1 is given more than once"),
    ],
)
def test_it_rejects_a_malformed_override_naming_the_part(text, match):
    with pytest.raises(ValueError, match=match):
        parse_egi_weights(text)


# Routing: default file, well-posedness, validation -------------------------------------


def test_the_default_routing_reproduces_table_6_and_is_well_posed(routing):
    assert len(routing.routes) == 25
    assert check_routing(routing) == []
    counts = {b: sum(r.bucket == b for r in routing.routes) for b in BUCKETS}
    assert counts == {"M1": 8, "M2": 5, "M3": 2, "M4": 5, "M5": 3, "M6": 2}
    lower = [
        (r.benchmark, r.sub_metric, r.ceiling) for r in routing.routes if r.direction == "lower"
    ]
    assert lower == [("benchforce", "accuracy_gap", 1.0)]
    assert all(r.weight == 1.0 for r in routing.routes)


_GOOD = {
    "benchmark": "a",
    "sub_metric": "x",
    "bucket": "M1",
    "direction": "higher",
    "scale": "fraction",
}


def test_well_posedness_lists_every_violation():
    routing = routing_from_mapping(
        {
            "benchmarks": ["a", "b", "c"],
            "routes": [
                _GOOD,
                {**_GOOD, "sub_metric": "y"},
                {**_GOOD, "sub_metric": "z", "bucket": "M2"},
            ],
        },
        source="toy.yaml",
    )
    violations = check_routing(routing)
    assert violations == [
        "benchmark 'b' feeds no bucket",
        "benchmark 'c' feeds no bucket",
        "bucket M2 has 1 sub-metric(s); needs at least 2",
        "bucket M3 has 0 sub-metric(s); needs at least 2",
        "bucket M4 has 0 sub-metric(s); needs at least 2",
        "bucket M5 has 0 sub-metric(s); needs at least 2",
        "bucket M6 has 0 sub-metric(s); needs at least 2",
    ]
    with pytest.raises(
        ValueError, match=r"toy\.yaml: routing is not well-posed: benchmark 'b'.*M6"
    ):
        check_routing(routing, strict=True)
    # An ill-posed routing still aggregates; the artifact carries the violations.
    meta = aggregate({"a": {"x": 1.0}}, routing=routing).to_dict()["routing"]
    assert meta["well_posed"] is False
    assert meta["violations"] == violations


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"bucket": "M7"}, r"routes\[0\] \(a\.x\): bucket 'M7'"),
        ({"direction": "up"}, "direction 'up'"),
        ({"scale": "ratio"}, "scale 'ratio'"),
        ({"weight": 0}, "weight must be a positive number"),
        ({"direction": "lower"}, "needs a positive 'ceiling'"),
        ({"direction": "lower", "ceiling": 2}, "ceiling 2 exceeds the fraction scale"),
        ({"ceiling": 1}, "'ceiling' applies only to direction 'lower'"),
        ({"scale": "count"}, "scale 'count' needs direction 'lower'"),
        ({"difference_of": ["p"]}, "'difference_of' must be a list of two"),
        ({"benchmark": "zz"}, "benchmark 'zz' is not declared"),
        ({"wieght": 2}, r"unknown field\(s\) \['wieght'\]"),
    ],
)
def test_it_rejects_a_bad_route_naming_the_file_and_route(change, match):
    with pytest.raises(ValueError, match=match) as excinfo:
        routing_from_mapping(
            {"benchmarks": ["a"], "routes": [{**_GOOD, **change}]}, source="r.yaml"
        )
    assert str(excinfo.value).startswith("r.yaml: ")


def test_it_rejects_a_route_given_twice():
    with pytest.raises(ValueError, match=r"routes\[1\] routes a\.x again"):
        routing_from_mapping({"benchmarks": ["a"], "routes": [_GOOD, _GOOD]})


def test_load_routing_names_an_unreadable_or_invalid_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read the routing file"):
        load_routing(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("routes: [\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: not valid YAML"):
        load_routing(bad)


def test_load_routing_refuses_a_key_given_twice_naming_the_file_key_and_lines(tmp_path):
    twice = tmp_path / "twice.yaml"
    twice.write_text("benchmarks: [a]\nroutes: []\nbenchmarks: [b]\n")
    with pytest.raises(ValueError) as raised:
        load_routing(twice)
    assert str(raised.value) == (
        f"{twice}: not valid YAML (line 3: key 'benchmarks' appears twice, first on line 1; "
        "give each key once)"
    )


def test_the_routing_hash_ignores_layout_and_follows_the_values(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("# a comment\nbenchmarks: [a]\nroutes:\n  - " + json.dumps(_GOOD) + "\n")
    from_file = load_routing(path)
    from_data = routing_from_mapping({"benchmarks": ["a"], "routes": [{**_GOOD, "weight": 1}]})
    assert from_file.sha256 == from_data.sha256
    assert from_file.sha256 == sha256_hex(canonical_json(from_file.to_dict()))
    heavier = routing_from_mapping({"benchmarks": ["a"], "routes": [{**_GOOD, "weight": 2}]})
    assert heavier.sha256 != from_file.sha256


# Artifact ------------------------------------------------------------------------------


def test_the_artifact_holds_every_section_and_is_plain_json(routing):
    result = aggregate(_without(FULL_RAW, "crmarena", "knowledge_qa"), routing=routing)
    artifact = result.to_dict()
    assert set(artifact) == {
        "egi",
        "partial",
        "egi_weight_covered",
        "egi_weights",
        "buckets",
        "benchmarks",
        "missing",
        "missing_benchmarks",
        "missing_buckets",
        "unrouted",
        "floors",
        "release_ready",
        "routing",
    }
    assert list(artifact["buckets"]) == list(BUCKETS)
    assert set(artifact["buckets"]["M4"]) == {"name", "score", "missing", "contributors"}
    ned, kqa = artifact["buckets"]["M4"]["contributors"][:2]
    assert ned == {
        "benchmark": "crmarena",
        "sub_metric": "named_entity_disambiguation",
        "label": "NED (Named Entity Disamb.)",
        "raw": 0.6,
        "normalised": pytest.approx(60.0),
        "weight": 1.0,
        "effective_weight": 0.25,  # four of five M4 routes available
        "available": True,
    }
    assert kqa["available"] is False and kqa["raw"] is None and kqa["effective_weight"] == 0.0
    assert artifact["benchmarks"]["herb"] == FULL_RAW["herb"]
    assert artifact["routing"] == {
        "source": str(routing.source),
        "version": 1,
        "sha256": routing.sha256,
        "well_posed": True,
        "violations": [],
    }
    assert len(artifact["routing"]["sha256"]) == 64
    assert json.loads(json.dumps(artifact, allow_nan=False)) == json.loads(json.dumps(artifact))
