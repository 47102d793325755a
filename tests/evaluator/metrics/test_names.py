import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluator.errors import UnknownNameError
from evaluator.metrics import DEFAULT_MEASURES, KINDS, Measure, parse_measure, parse_measures


@pytest.mark.parametrize(
    "name", ["nDCG@10", "nDCG", "R@100", "P@5", "AP", "AP@100", "RR", "RR@10", "Rprec", "Bpref",
             "Success@1", "Judged@10", "ARP", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')"],
)
def test_round_trip(name):
    assert str(parse_measure(name)) == name


@given(st.sampled_from(sorted(KINDS)), st.integers(1, 1000), st.booleans())
def test_every_measure_prints_and_parses_back(kind, cutoff, exp_gain):
    cutoff_rule = KINDS[kind].cutoff
    measure = Measure(kind, None if cutoff_rule == "none" else cutoff, exp_gain and kind == "nDCG")
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize(
    ("name", "suggestion"), [("ndcg@10", "nDCG@10"), ("recall@100", "R@100"), ("MAP", "AP"), ("mrr@10", "RR@10")]
)
def test_unknown_names_list_forms_and_suggest(name, suggestion):
    with pytest.raises(UnknownNameError) as error:
        parse_measure(name)
    assert f"Did you mean '{suggestion}'" in str(error.value)
    assert "nDCG[@k]" in str(error.value) and "R@k" in str(error.value)


@pytest.mark.parametrize("name", ["P", "R", "Rprec@5", "ARP@3", "nDCG(dcg='linear')@10", "nDCG@0", "AP@x"])
def test_malformed_names_rejected(name):
    with pytest.raises(UnknownNameError):
        parse_measure(name)


def test_parse_list_and_defaults():
    assert [str(m) for m in parse_measures("nDCG@10, R@100,nDCG@10")] == ["nDCG@10", "R@100"]
    names = [str(m) for m in DEFAULT_MEASURES]
    for expected in ["nDCG@10", "R@100", "P@1", "AP@100", "RR@10", "RR@100", "Success@5", "Judged@10"]:
        assert expected in names
    # every default is determined by a depth-100 ranking, so the stored ranking re-scores all of them
    assert all(m.cutoff is not None and m.cutoff <= 100 for m in DEFAULT_MEASURES)
    with pytest.raises(UnknownNameError):
        parse_measures(" , ")


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("P@05", "P@5"), ("nDCG@010", "nDCG@10"), ("nDCG@10\n", "nDCG@10"), (" nDCG@10", "nDCG@10"),
     ("R@100 ", "R@100"), ("\tAP", "AP"), ('nDCG(dcg="exp-log2")@10', "nDCG(dcg='exp-log2')@10"),
     ("nDCG( dcg='exp-log2' )", "nDCG(dcg='exp-log2')")],
)
def test_only_the_canonical_spelling_is_accepted(name, canonical):
    with pytest.raises(UnknownNameError) as error:
        parse_measure(name)
    message = str(error.value)
    assert f"write '{canonical}'" in message and "\n" not in message


def test_huge_cutoffs_are_one_line_errors():
    for name in ("nDCG@1000001", "nDCG@" + "9" * 5000):
        with pytest.raises(UnknownNameError, match="between 1 and 1,000,000"):
            parse_measure(name)


@given(st.text(max_size=30))
def test_every_accepted_name_is_its_own_printed_form(name):
    try:
        measure = parse_measure(name)
    except UnknownNameError as error:
        assert "\n" not in str(error)
    else:
        assert str(measure) == name and parse_measure(str(measure)) == measure


@given(st.sampled_from(sorted(KINDS)), st.text("0123456789@ ()'\"dcg=exp-log2\n\t", max_size=12))
def test_near_misses_are_rejected_or_canonical(kind, tail):
    test_every_accepted_name_is_its_own_printed_form.hypothesis.inner_test(kind + tail)
