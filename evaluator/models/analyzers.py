"""Text analyzers for lexical retrieval: tokenization, lower-casing, stop words and stemming per language.

The English analyzer follows Lucene's (as used by Pyserini/Anserini): UAX#29-style word tokens, the English
possessive `'s` dropped, lower-casing, Lucene's English stop words, Porter stemming. Scripts written without
spaces (Han, Kana, Hangul, Thai, Lao, Khmer, Myanmar) become overlapping character bigrams in the languages
that use them, as Lucene's CJK analyzer does (a lone character stays a unigram); elsewhere each such
character is one token. Stemmers are PyStemmer's Snowball algorithms.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evaluator.errors import InputFormatError, UnknownNameError

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)
# Articles and pronouns that Lucene's ElisionFilter strips before an apostrophe (l'avion -> avion).
FRENCH_ELISIONS = frozenset("l m t qu n s j d c jusqu quoiqu lorsqu puisqu".split())
ITALIAN_ELISIONS = frozenset("c l all dall dell nell sull coll pell gl agl dagl degl negl sugl un m t s v d".split())


@dataclass(frozen=True)
class LanguageProfile:
    """How text of one language is analyzed."""

    code: str
    name: str
    stemmer: str | None = None  # PyStemmer (Snowball) algorithm; None: the language has none
    bigrams: bool = False  # unsegmented scripts become overlapping character bigrams
    stopwords: frozenset[str] = frozenset()
    elisions: frozenset[str] = frozenset()
    possessive: bool = False  # drop a trailing 's (English)
    strip_arabic_marks: bool = False  # harakat and tatweel are not part of the word


# MIRACL languages (ar bn de en es fa fi fr hi id ja ko ru sw te th yo zh) and mMARCO languages
# (ar de en es fr hi id it ja nl pt ru vi zh).
LANGUAGES: dict[str, LanguageProfile] = {
    p.code: p
    for p in (
        LanguageProfile("ar", "Arabic", "arabic", strip_arabic_marks=True),
        LanguageProfile("bn", "Bengali"),
        LanguageProfile("de", "German", "german"),
        LanguageProfile("en", "English", "porter", stopwords=ENGLISH_STOP_WORDS, possessive=True),
        LanguageProfile("es", "Spanish", "spanish"),
        LanguageProfile("fa", "Persian", "persian", strip_arabic_marks=True),
        LanguageProfile("fi", "Finnish", "finnish"),
        LanguageProfile("fr", "French", "french", elisions=FRENCH_ELISIONS),
        LanguageProfile("hi", "Hindi", "hindi"),
        LanguageProfile("id", "Indonesian", "indonesian"),
        LanguageProfile("it", "Italian", "italian", elisions=ITALIAN_ELISIONS),
        LanguageProfile("ja", "Japanese", bigrams=True),
        LanguageProfile("ko", "Korean", bigrams=True),
        LanguageProfile("nl", "Dutch", "dutch"),
        LanguageProfile("pt", "Portuguese", "portuguese"),
        LanguageProfile("ru", "Russian", "russian"),
        LanguageProfile("sw", "Swahili"),
        LanguageProfile("te", "Telugu"),
        LanguageProfile("th", "Thai", bigrams=True),
        LanguageProfile("vi", "Vietnamese"),
        LanguageProfile("yo", "Yoruba"),
        LanguageProfile("zh", "Chinese", bigrams=True),
    )
}

# Scripts written without spaces between words.
_UNSEGMENTED_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # ideographic iteration mark, closing mark, number zero
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFFDC),  # halfwidth Katakana and Hangul
    (0x20000, 0x3134F),  # CJK extensions B-G
)
# Between two letters (UAX#29 MidLetter + MidNumLet) or two digits (MidNum + MidNumLet) a word continues.
_MID_LETTER = ":\u00b7\u0387\u05f4\u2027\ufe13\ufe55\uff1a.'\u2018\u2019\u2024\ufe52\uff07\uff0e"
_MID_NUMBER = ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b.'\u2018\u2019\u2024\ufe52\uff07\uff0e"
_APOSTROPHES = "'\u2019\uff07"
_ARABIC_MARKS = dict.fromkeys([*range(0x064B, 0x0660), 0x0670, 0x0640])


def _class_of(codepoints: Iterable[int]) -> str:
    """A regex character class body for a sorted iterable of code points, written as ranges."""
    parts, start, prev = [], None, None
    for cp in codepoints:
        if start is not None and cp == prev + 1:
            prev = cp
            continue
        if start is not None:
            parts.append(_range(start, prev))
        start = prev = cp
    if start is not None:
        parts.append(_range(start, prev))
    return "".join(parts)


def _range(lo: int, hi: int) -> str:
    return re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"


@functools.lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """Group 1: a word (letters, marks, digits, `_`); group 2: a run of unsegmented-script characters."""
    unsegmented = set()
    for lo, hi in _UNSEGMENTED_RANGES:
        unsegmented.update(range(lo, hi + 1))
    word, letter, digit = [], [], []
    # Basic Multilingual Plane only: such classes compile to one bitmap lookup per character, whereas a
    # class reaching beyond it is a linear scan of its ranges. Supplementary-plane letters (historic
    # scripts, mathematical alphanumerics) are rare in retrieval corpora and are dropped.
    for cp in range(0x10000):
        category = unicodedata.category(chr(cp))
        if cp in unsegmented or category[0] not in "LMN" and category != "Pc":
            continue
        word.append(cp)
        if category[0] in "LM":
            letter.append(cp)
        elif category == "Nd":
            digit.append(cp)
    w, lt, dg = _class_of(word), _class_of(letter), _class_of(digit)
    mid = rf"(?:(?<=[{lt}])[{re.escape(_MID_LETTER)}](?=[{lt}])|(?<=[{dg}])[{re.escape(_MID_NUMBER)}](?=[{dg}]))"
    seg = _class_of(sorted(unsegmented))
    return re.compile(rf"([{w}]+(?:{mid}[{w}]+)*)|([{seg}]+)")


def language_profile(language: str) -> LanguageProfile:
    """The profile for an ISO 639-1 code such as `en` or `zh`."""
    try:
        return LANGUAGES[language.lower()]
    except KeyError:
        raise UnknownNameError(
            f"language '{language}' has no analyzer; valid languages: {', '.join(sorted(LANGUAGES))}"
        ) from None


def read_stopwords(path: str | Path) -> frozenset[str]:
    """One stop word per line (UTF-8); blank lines and lines starting with `#` are ignored."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputFormatError(
            f"{path}: cannot read the stop word list ({error}); give a UTF-8 file with one word per line"
        ) from None
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.lstrip().startswith("#"))


class Analyzer:
    """Turns text into index terms for one language.

    `stemmer`: True for the language's default, False for none, or a PyStemmer algorithm name.
    `stopwords`: True for the language's list, False for none, or a collection of words.
    """

    def __init__(self, language: str = "en", stemmer: bool | str = True, stopwords: bool | Iterable[str] = True):
        self.profile = language_profile(language)
        if stopwords is True:
            self.stopwords = self.profile.stopwords
        else:
            self.stopwords = frozenset(stopwords or ())
        self.stemmer_name = self.profile.stemmer if stemmer is True else (stemmer or None)
        self._stem = _stem_function(self.stemmer_name)
        self._pattern = _token_pattern()
        self._normal_form = "NFKC" if self.profile.bigrams else "NFC"

    def tokenize(self, text: str) -> list[str]:
        """Lower-cased tokens before stop-word removal and stemming."""
        if not text.isascii():
            text = unicodedata.normalize(self._normal_form, text)
            if self.profile.strip_arabic_marks:
                text = text.translate(_ARABIC_MARKS)
        profile = self.profile
        tokens = []
        for word, run in self._pattern.findall(text.lower()):
            if word:
                if profile.possessive and len(word) > 2 and word[-1] == "s" and word[-2] in _APOSTROPHES:
                    word = word[:-2]
                if profile.elisions:
                    word = _strip_elision(word, profile.elisions)
                tokens.append(word)
            elif profile.bigrams and len(run) > 1:
                tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
            else:
                tokens.extend(run)
        return tokens

    def term(self, token: str) -> str | None:
        """The index term for one token, or None for a stop word."""
        if token in self.stopwords:
            return None
        return self._stem(token)

    def analyze(self, text: str) -> list[str]:
        """Index terms of `text`, in order."""
        return [t for t in map(self.term, self.tokenize(text)) if t is not None]


def _strip_elision(word: str, elisions: frozenset[str]) -> str:
    for apostrophe in _APOSTROPHES:
        head, sep, tail = word.partition(apostrophe)
        if sep and tail and head in elisions:
            return tail
    return word


def _stem_function(name: str | None):
    if name is None:
        return lambda token: token
    import Stemmer  # PyStemmer

    if name not in Stemmer.algorithms():
        raise UnknownNameError(
            f"stemmer '{name}' is not a PyStemmer algorithm; valid: {', '.join(Stemmer.algorithms())}"
        )
    return Stemmer.Stemmer(name).stemWord


class TermIndexer:
    """Maps texts to term ids; each distinct token is analyzed once and remembered.

    With `grow` the vocabulary takes in new terms (documents); without it unknown terms are dropped (queries).
    """

    def __init__(self, analyzer: Analyzer, vocabulary: dict[str, int] | None = None, grow: bool = True):
        self.analyzer = analyzer
        self.vocabulary = {} if vocabulary is None else vocabulary
        self.grow = grow
        self._token_ids: dict[str, int] = {}  # token -> term id, -1 for stop words and unknown terms

    def ids(self, text: str) -> list[int]:
        """Term ids of `text` in order, -1 where a token is dropped."""
        tokens = self.analyzer.tokenize(text)
        ids = list(map(self._token_ids.get, tokens))
        if None in ids:
            ids = [self._add(t) if i is None else i for t, i in zip(tokens, ids, strict=True)]
        return ids

    def _add(self, token: str) -> int:
        term = self.analyzer.term(token)
        if term is None:
            term_id = -1
        elif self.grow:
            term_id = self.vocabulary.setdefault(term, len(self.vocabulary))
        else:
            term_id = self.vocabulary.get(term, -1)
        self._token_ids[token] = term_id
        return term_id
