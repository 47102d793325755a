"""Analyzers: Lucene-like English, bigrams for unsegmented scripts, stemming and stop words per language."""

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.errors import InputFormatError, UnknownNameError
from evaluator.models.analyzers import (
    ENGLISH_STOP_WORDS,
    LANGUAGES,
    Analyzer,
    TermIndexer,
    language_profile,
    read_stopwords,
)

MIRACL = "ar bn en es fa fi fr hi id ja ko ru sw te th zh de yo".split()
MMARCO = "en zh fr de id it pt ru es ar nl hi ja vi".split()


def bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def test_every_miracl_and_mmarco_language_has_a_profile_with_a_real_stemmer():
    for code in set(MIRACL) | set(MMARCO):
        profile = language_profile(code)
        assert profile.code == code
        assert profile.stemmer is None or profile.stemmer in Stemmer.algorithms()


def test_unknown_language_lists_the_valid_ones():
    with pytest.raises(UnknownNameError, match="valid languages: ar, bn"):
        Analyzer("xx")


def test_english_tokens_follow_lucene_standard_tokenizer_and_possessive_filter():
    text = "The patient's U.S.A. COVID-19 dose: 3.5mg, 1,000 cells e.g. don't foo_bar p53."
    assert Analyzer("en").tokenize(text) == [
        "the", "patient", "u.s.a", "covid", "19", "dose", "3.5mg", "1,000", "cells", "e.g", "don't", "foo_bar", "p53",
    ]  # fmt: skip


def test_english_terms_drop_lucene_stop_words_and_apply_porter():
    porter = Stemmer.Stemmer("porter")
    text = "The running of the cells is not a surprise for these researchers"
    expected = [porter.stemWord(w) for w in text.lower().split() if w not in ENGLISH_STOP_WORDS]
    assert Analyzer("en").analyze(text) == expected
    assert "run" in expected and "cell" in expected


def test_stemmer_and_stop_words_can_be_switched():
    text = "The running cells"
    assert Analyzer("en", stemmer=False, stopwords=False).analyze(text) == ["the", "running", "cells"]
    assert Analyzer("en", stemmer="english").analyze("generously") == [Stemmer.Stemmer("english").stemWord("generously")]
    assert Analyzer("en", stopwords={"cells"}).analyze(text) == ["the", "run"]


def test_unknown_stemmer_is_reported():
    with pytest.raises(UnknownNameError, match="not a PyStemmer algorithm"):
        Analyzer("en", stemmer="klingon")


@pytest.mark.parametrize(
    ("language", "text", "runs"),
    [
        ("zh", "我们是中国人", ["我们是中国人"]),
        ("ja", "メガネは顔の一部です。", ["メガネは顔の一部です"]),
        ("ko", "한국어 텍스트", ["한국어", "텍스트"]),
        ("th", "ภาษาไทยง่าย", ["ภาษาไทยง่าย"]),
    ],
)
def test_unsegmented_scripts_become_overlapping_bigrams(language, text, runs):
    assert Analyzer(language).analyze(text) == [b for run in runs for b in bigrams(run)]


def test_cjk_mixed_with_latin_and_a_lone_character():
    assert Analyzer("zh").tokenize("我 loves 北京 Beijing") == ["我", "loves", "北京", "beijing"]
    # Outside CJK languages each ideograph is its own token, as in Lucene's standard tokenizer.
    assert Analyzer("en").tokenize("北京 city") == ["北", "京", "city"]


def test_full_width_forms_fold_in_cjk_languages():
    assert Analyzer("ja").tokenize("ＡＢＣ１２３") == ["abc123"]


def test_indic_words_keep_their_combining_vowel_signs():
    words = ["हिन्दी", "भाषा", "बहुत", "अच्छी"]  # vowel signs and virama are combining marks
    assert Analyzer("hi", stemmer=False).tokenize(" ".join(words)) == words
    assert Analyzer("te").tokenize("తెలుగు భాష") == ["తెలుగు", "భాష"]
    assert Analyzer("bn").tokenize("বাংলা ভাষা") == ["বাংলা", "ভাষা"]


def test_arabic_diacritics_and_tatweel_are_removed_before_stemming():
    plain, marked = "العربية", "اَلْعَرَبِيَّةُ"
    assert Analyzer("ar").tokenize(marked) == [plain]
    assert Analyzer("ar").tokenize("عـــربي") == ["عربي"]
    assert Analyzer("ar").analyze(marked) == [Stemmer.Stemmer("arabic").stemWord(plain)]


def test_latin_languages_stem_with_their_snowball_stemmer():
    for code, word in [("de", "Häuser"), ("es", "corriendo"), ("fi", "taloissa"), ("ru", "Русский"), ("nl", "huizen")]:
        expected = Stemmer.Stemmer(LANGUAGES[code].stemmer).stemWord(word.lower())
        assert Analyzer(code).analyze(word) == [expected]


def test_french_and_italian_elisions():
    assert Analyzer("fr", stemmer=False).tokenize("l'avion d’Air France") == ["avion", "air", "france"]
    assert Analyzer("it", stemmer=False).tokenize("dell'anno all'inizio") == ["anno", "inizio"]


def test_composed_and_decomposed_accents_give_the_same_token():
    composed, decomposed = "Yorùbá", "Yoru\u0300ba\u0301"
    assert Analyzer("yo").tokenize(composed) == Analyzer("yo").tokenize(decomposed) == ["yorùbá"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.sampled_from(sorted(LANGUAGES)))
def test_tokens_are_lowercase_and_never_hold_spaces_or_punctuation_edges(text, language):
    for token in Analyzer(language, stemmer=False).tokenize(text):
        assert token and token == token.lower()
        assert not any(ch.isspace() for ch in token)
        assert token[0] not in ".,;:'’-" and token[-1] not in ".,;:'’-"


def test_term_indexer_assigns_ids_in_order_and_queries_drop_unknown_terms():
    analyzer = Analyzer("en")
    docs = TermIndexer(analyzer)
    assert docs.ids("cells and running cells") == [0, -1, 1, 0]
    assert docs.vocabulary == {"cell": 0, "run": 1}
    queries = TermIndexer(analyzer, docs.vocabulary, grow=False)
    assert queries.ids("running proteins") == [1, -1]
    assert docs.vocabulary == {"cell": 0, "run": 1}


def test_stop_word_file(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_text("# comment\nDer\n\ndie\n", encoding="utf-8")
    assert read_stopwords(path) == {"der", "die"}
    with pytest.raises(InputFormatError, match="missing.txt"):
        read_stopwords(tmp_path / "missing.txt")
