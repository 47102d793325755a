"""(batch, list) arrays, numpy and torch, give the same values as the run/qrels path."""

import numpy as np
import pytest
import torch

from evaluator.errors import InputFormatError
from evaluator.metrics import Qrels, evaluate, parse_measures, rank_run
from evaluator.metrics.arrays import evaluate_arrays

MEASURES = parse_measures("nDCG@3,nDCG@10,R@5,P@5,AP,RR,Rprec,Bpref,Success@1,ARP,nDCG(dcg='exp-log2')@5")


def _equivalent_run(scores, labels, mask):
    # position j -> doc id whose byte order is DEScending in j, so that earlier positions win ties
    width = scores.shape[1]
    doc = [f"{width - j:06d}" for j in range(width)]
    run, qrels = {}, {}
    for i in range(scores.shape[0]):
        keep = [j for j in range(width) if mask[i, j]]
        run[str(i)] = {doc[j]: float(scores[i, j]) for j in keep}
        qrels[str(i)] = {doc[j]: int(labels[i, j]) for j in keep}
    return run, qrels


def test_numpy_and_torch_equal_run_path():
    rng = np.random.default_rng(3)
    scores = np.round(rng.normal(size=(20, 15)), 1)  # ties
    labels = rng.integers(-1, 4, size=(20, 15))
    mask = rng.random((20, 15)) > 0.2
    mask[:, 0] = True
    run, qrels = _equivalent_run(scores, labels, mask)
    q = Qrels.from_dict(qrels)
    expected = evaluate(rank_run(run, q), q, MEASURES)
    order = np.array([q.query_ids.index(str(i)) for i in range(20)])
    from_numpy = evaluate_arrays(scores, labels, MEASURES, mask=mask)
    from_torch = evaluate_arrays(torch.tensor(scores), torch.tensor(labels), MEASURES, mask=torch.tensor(mask))
    for name, values in expected.items():
        np.testing.assert_allclose(from_numpy[name], values[order], atol=1e-12, err_msg=name)
        np.testing.assert_allclose(from_torch[name], values[order], atol=1e-12, err_msg=name)


def test_bad_arrays_rejected():
    with pytest.raises(InputFormatError):
        evaluate_arrays(np.zeros((2, 3)), np.zeros((2, 4)), MEASURES)
    with pytest.raises(InputFormatError):
        evaluate_arrays(np.array([[np.nan, 1.0]]), np.array([[1, 0]]), MEASURES)
    with pytest.raises(InputFormatError):
        evaluate_arrays(np.array([[0.5, 1.0]]), np.array([[0.5, 0]]), MEASURES)
