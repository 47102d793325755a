import dataclasses
import hashlib
import re

import pytest

from evaluator.datasets import all_specs, get_spec, query_ids_sha256
from evaluator.datasets.beir import NOT_PUBLIC
from evaluator.datasets.spec import DatasetRegistry
from evaluator.errors import UnknownNameError

CQADUPSTACK_FORUMS = [
    "android",
    "english",
    "gaming",
    "gis",
    "mathematica",
    "physics",
    "programmers",
    "stats",
    "tex",
    "unix",
    "webmasters",
    "wordpress",
]


def test_unknown_id_suggests_the_closest_registered_ids():
    with pytest.raises(UnknownNameError, match=r"did you mean beir/scifact"):
        get_spec("beir/scifakt")


def test_bare_name_suggests_its_family_id():
    with pytest.raises(UnknownNameError, match=r"did you mean beir/quora"):
        get_spec("quora")


def test_unknown_id_message_lists_families_from_the_registry():
    families = sorted({spec.family for spec in all_specs()})
    with pytest.raises(UnknownNameError) as info:
        get_spec("nothing/like/this")
    assert ", ".join(families) in str(info.value)
    assert "local:<dir>" in str(info.value)


def test_every_beir_dataset_and_no_other_ignores_identical_ids():
    """BEIR's evaluator and Anserini's BEIR runs drop a hit on the query's own id for every BEIR dataset; MIRACL,
    mMARCO and the classic collections keep it (their query and document ids are separate numberings)."""
    specs = all_specs()
    assert {spec.family for spec in specs if spec.ignore_identical_ids} == {"beir"}
    assert all(spec.ignore_identical_ids for spec in specs if spec.family == "beir")
    # TREC DL counts grade 2 and above as relevant for binary measures (tests/evaluator/datasets/test_trec_dl.py)
    assert {spec.id for spec in specs if spec.relevance_level != 1} == {"msmarco-passage/trec-dl-2019",
                                                                          "msmarco-passage/trec-dl-2020"}
    assert {spec.relevance_level for spec in specs} == {1, 2}


def test_registry_refuses_a_duplicate_id():
    registry = DatasetRegistry()
    spec = get_spec("beir/scifact")
    registry.register(spec)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(dataclasses.replace(spec, description="another"))


def test_registry_refuses_the_local_prefix():
    spec = dataclasses.replace(get_spec("beir/scifact"), id="local:scifact")
    with pytest.raises(ValueError, match="reserved"):
        DatasetRegistry().register(spec)


def test_ids_are_unique_and_slug_safe():
    ids = [spec.id for spec in all_specs()]
    assert len(ids) == len(set(ids))
    for dataset_id in ids:
        assert re.fullmatch(r"[a-z0-9._-]+(/[a-z0-9._-]+)+", dataset_id), dataset_id


def test_every_spec_names_its_group_family_and_counts():
    groups = {"beir": "BEIR", "miracl": "MIRACL", "mmarco": "mMARCO", "msmarco-passage": "TREC DL",
              "classic": "Classic"}
    for spec in all_specs():
        assert spec.id == f"{spec.family}/{spec.name}"
        assert spec.group == groups[spec.family]
        assert spec.num_queries and spec.num_docs


def test_beir_has_every_public_dataset_with_its_published_md5():
    beir = {spec.name: spec for spec in all_specs() if spec.family == "beir" and spec.name not in NOT_PUBLIC}
    assert set(NOT_PUBLIC) == {"trec-news"}  # registered for its judgments, no zip: test_trec_news.py
    expected = {
        "msmarco",
        "trec-covid",
        "nfcorpus",
        "nq",
        "hotpotqa",
        "fiqa",
        "arguana",
        "webis-touche2020",
        "quora",
        "dbpedia-entity",
        "scidocs",
        "fever",
        "climate-fever",
        "scifact",
    } | {f"cqadupstack/{forum}" for forum in CQADUPSTACK_FORUMS}
    assert set(beir) == expected
    assert beir["scifact"].md5 == "5f7d1de60b170fc8027bb7898e2efca1"
    assert (
        beir["scifact"].source
        == "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"
    )
    assert beir["msmarco"].split == "dev"
    for spec in beir.values():
        assert re.fullmatch(r"[0-9a-f]{32}", spec.md5)


def test_cqadupstack_subforums_share_one_archive_and_sum_to_beir_totals():
    forums = [get_spec(f"beir/cqadupstack/{forum}") for forum in CQADUPSTACK_FORUMS]
    assert {spec.source for spec in forums} == {
        "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/cqadupstack.zip"
    }
    assert sum(spec.num_queries for spec in forums) == 13145  # BEIR paper, CQADupStack test queries
    assert sum(spec.num_docs for spec in forums) == 457199  # BEIR paper, CQADupStack corpus


def test_miracl_has_18_languages_on_the_dev_split():
    miracl = [spec for spec in all_specs() if spec.family == "miracl"]
    assert len(miracl) == 18
    assert {spec.split for spec in miracl} == {"dev"}
    assert get_spec("miracl/sw").language == "sw"
    assert get_spec("miracl/sw").source == "miracl/miracl"


def test_mmarco_pairs_query_and_document_languages_independently():
    mmarco = [spec for spec in all_specs() if spec.family == "mmarco"]
    assert len(mmarco) == 14 * 14
    assert get_spec("mmarco/fr").language == "fr"
    assert get_spec("mmarco/fr-en").language == "fr-en"
    assert get_spec("mmarco/en-fr").language == "en-fr"
    with pytest.raises(UnknownNameError):
        get_spec("mmarco/fr-fr")  # same language is spelled mmarco/fr


def test_query_ids_sha256_is_the_hash_of_sorted_ids_joined_by_newlines():
    assert query_ids_sha256(["b", "a", "10"]) == hashlib.sha256(b"10\na\nb").hexdigest()
