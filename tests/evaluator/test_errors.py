"""The one "did you mean" hint that unknown-name errors end with."""

import pytest

from evaluator.errors import UnknownNameError, closest_names, did_you_mean
from evaluator.metrics import parse_measure
from evaluator.models import load_model, parse_model_spec


def test_closest_names_orders_by_likeness_and_drops_the_far():
    assert closest_names("wilcoxn", ["t", "wilcoxon", "randomization"]) == ["wilcoxon"]
    assert closest_names("zzz", ["t", "wilcoxon"]) == []
    assert closest_names("beir/scifakt", ["beir/fiqa", "beir/scidocs", "beir/scifact"], n=2) == ["beir/scifact",
                                                                                                  "beir/scidocs"]


def test_did_you_mean_quotes_each_name():
    assert did_you_mean([]) == ""
    assert did_you_mean(["k1"]) == " Did you mean 'k1'?"
    assert did_you_mean(["a", "b"]) == " Did you mean 'a' or 'b'?"


@pytest.mark.parametrize(("make", "hint"), [
    (lambda: parse_measure("nDGC@10"), " Did you mean 'nDCG@10'?"),
    (lambda: parse_model_spec("bm52"), " Did you mean 'bm25'?"),
    (lambda: load_model("bm25:k=1.2"), " Did you mean 'k1'?"),
])
def test_every_unknown_name_ends_with_the_same_hint(make, hint):
    with pytest.raises(UnknownNameError) as error:
        make()
    assert str(error.value).endswith(hint)
