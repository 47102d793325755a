"""Official judgments: where the qrels and topics of every registered dataset come from, as data.

The files are those Anserini and Pyserini evaluate with, in GitHub ``castorini/anserini-tools`` at a pinned
commit (folders ``qrels/`` and ``topics/``; raw URL ``https://raw.githubusercontent.com/castorini/
anserini-tools/<commit>/<folder>/<file>``): BEIR test splits (CQADupStack per forum), MIRACL dev (judged
negatives kept as grade 0), MS MARCO passage dev-small, which ``beir/msmarco`` and every ``mmarco/*`` id
share (mMARCO translates the same queries and passages and keeps their ids), and TREC DL 2019 and 2020 passage
(NIST's graded judgments; ``topics.dl20.txt`` holds all 200 test queries, of which the 54 judged count).

These files are the official judgments. BEIR's own ``qrels/test.tsv`` parses to the same judgments for SciFact
and NFCorpus (checked by the tests); where a BEIR TSV differs (webis-touche2020's v2 TSV also lists judged
non-relevant arguments, which Anserini's file omits), a result scored on the TSV carries another
``dataset.qrels_sha256`` and is not verified: score on the official file. Classic collections have no official
download; they are verified only from a local copy.

``official_qrels(dataset_id)`` returns the qrels from the cache (``$IRBOARD_CACHE/official/qrels/<file>``), else
downloads them, sha256-checked, from ``$IRBOARD_MIRROR`` (a folder or http(s) URL laid out like the upstream:
``qrels/<file>``, ``topics/<file>``) or from the upstream.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evaluator.datasets.download import cache_root, fetch_file, file_sha256
from evaluator.errors import DatasetLoadError
from evaluator.metrics import Qrels

logger = logging.getLogger(__name__)

REPOSITORY = "castorini/anserini-tools"
COMMIT = "5b819c1a45c8a0a3ec9426f476694f44a29dfaf3"
RAW_BASE = "https://raw.githubusercontent.com"
RAW_BASE_ENV = "IRBOARD_GITHUB_RAW"  # replaces RAW_BASE (tests serve the same paths from 127.0.0.1)
MIRROR_ENV = "IRBOARD_MIRROR"
SOURCE = f"{REPOSITORY}@{COMMIT[:7]}"

# Tables: name -> (queries, sha256 of the qrels file, sha256 of the topics file, Qrels.sha256() of the qrels).
# The query count is that of both files: every topic has judgments and every judged query has at least one
# relevant document. Qrels.sha256() is what a result's dataset.qrels_sha256 must equal.
# fmt: off
_BEIR: dict[str, tuple[int, str, str, str]] = {  # test split; the name as in the file names
    "arguana": (1406, "687d4efbee424d462825f554fb9d0eb491e178c789a7e4960fbd889f984eeae3",
        "bdca544b55cf0c0bba3a021075d3f1788a101bd852ef84a1567e82783fc2181b",
        "baea47c13ed0c8aede35b51f845c5cbb4abb91f5a78179bbf77b89aa8267b480"),
    "bioasq": (500, "0b75c95005bbcb36b4ef3708d704303314c81ebc079e51072bcf67bc1d1d87d9",
        "ff61104b083f3373781048ac5dececb52edb22d949cfad0b6a74158400ea9c77",
        "e593825ed9ac1826d917344aac3185ecfb3606d2e5563d8929a68adc5dc12773"),
    "climate-fever": (1535, "c56d76b87252a8cc23faafd7e02c1093b84556b599d9a73077a85378d4674773",
        "6450ce4f615ba76c651c9a72fc19ea6ab27686bb0bcbdcaf1d6c09b355e4ce8b",
        "7df8a35009f2a0d9f5041bd56f2f3e382d0fc9688c7aecee5c049d55a816ba36"),
    "cqadupstack-android": (699, "aeb380051e35fb0c59c3404f9901d6b5d6c907cbfc9f9b99cad36de66c718ca4",
        "71671dfdc12b24056cfaa34bb5c9e49ae2b47a04db6429187fd7b5fcfba5b079",
        "e861faaf1939a475303500729b21f08d7c466e7ae606288962891a2ba507bf92"),
    "cqadupstack-english": (1570, "b18c3c819ad167589c2714ec9c5093ea2d857dbbc4262afc04ca434ccd6f88ec",
        "663a579bf9b427a93e2500161199a6ab213054e788f1b90d97a55ccaf1c9b3b8",
        "8432a5b4302a381e564f87a5404247cbbb0dd94c10d802bcd6ea8bce34295ea3"),
    "cqadupstack-gaming": (1595, "4e11a94f20ed9bcdebcd21077b8f6774c058be82afeadbbbe9b8c26b78b4a0a9",
        "93c3fbf37b983dcfb0db66135b38dd044fd1fab94e830c247af0d9303110e612",
        "d798a9a1c9746d01d83c005e3d956f20e7cf9a569e5195dc5e96f0e912feb038"),
    "cqadupstack-gis": (885, "16b6d82c675b5fef5363ca039598adeb1bc81c3f0f3a5a6bca6bc94a9a39ecbe",
        "b8823c2a0733f503ee049513a48bc57ee547acac482dfbabc914a1c666c84811",
        "c458693791a7d1851ab46e7107cb903528533f1e91a3498c911ef20c79cf97f3"),
    "cqadupstack-mathematica": (804, "f1d36d19aa50f54a82131a71a74846ba5827773077d7217b6601b5e43ff3716f",
        "2c80c8bf3688faf9769a6af8dcf02d35215a7be19e79351484fec5b7c31cb26a",
        "4a265c37edcb39fcf05bff53363eb7f727ab9a81b2f5cb01797d59afa53e1116"),
    "cqadupstack-physics": (1039, "1546859674b39b6976839fb8ce96c6de0a8b359d99fbe96fdae67a356037bf52",
        "6d1c444d9349d3a6c19898846439cb87f65f1ee3d235dca3954d449872dd46cf",
        "b4b695acb0cf96494d237760750ab1c237ad0f3e1cf9b961d3381206a0ab0462"),
    "cqadupstack-programmers": (876, "82e85e7e71f4337c55c7d909fc5f9e8ccc1b7e2aedd37b11e5a84bd6240e8a6e",
        "e32575c2144d272dfc09f1193172d69c6ed6a996ee1ee45b2288ef328bcb4610",
        "07d4964a5be7d04b07bc3abe32121a221a8c1ae952495304f1a138305ae8bd75"),
    "cqadupstack-stats": (652, "fa9f54924d6240b992eac5acc7fded3e31cddc746995e3c90bedb7dc435adc03",
        "adac92449e0d9c674edc2d80b9d86e2b781cc030a4f8c91897e01f13047a9f2d",
        "d02e6fb71b9a6b600e84bee56e154ca801a673c3bd52fb9a397102a9d0d81731"),
    "cqadupstack-tex": (2906, "370ef6f52b6bb32c1c5c1d8f14bc4ac1f413b4c8fd602230e37c0b38e4af4af2",
        "7d737da88597b8fce2ce8c93ac3a80f3bd7080d74dd41643d4cba451d6105166",
        "e95ab760beba46e8da9f1e9fcf427cb640f65995c112325beffaf0aa557aa2b9"),
    "cqadupstack-unix": (1072, "33cf4ab18d7997591211a2bdbe4b1cdb91dfcb43c8d80c008453bc0b76cb8f94",
        "bbedf79d528bfe35e65011d4635fe05e44ef218c463629a6147561dcf9073f66",
        "e3adb49a2e3036f087ac15fee9e871f0269a7cb3db8e22528ce5a68aa6a58b4e"),
    "cqadupstack-webmasters": (506, "ed0c68c7274a6046423e8a6615226f05e41d0989c2f4a72db63ad15e91210787",
        "4e79f02d396c6bf0766a104b3c761825149f3346c25a216c6556a8ab9426db38",
        "267bd59eddf08e9f0df3360ce14ade6c13c0059c3282f77be029cdb7ebc93d4f"),
    "cqadupstack-wordpress": (541, "c2f847a7f35cde4bd547442c1e1904090f903ddafe658f3c197bfc747f37864f",
        "4d7ad572eb0213e4411eaf6d3f8e9e5112fe1ccc98a857fb910f46d3cd237373",
        "a00f9342900155b995a62765903968f298dab3e06f790153db1677db4ec1d50d"),
    "dbpedia-entity": (400, "e903b89f644875e1eb3706ff0a161d0c7c003f75fca5c05dace5f6fe99e2cf5e",
        "6911da4e3e3e71b406c7b2b3338847f4f4c5a84fd3934ae529cb47aab280dc88",
        "1723eda244273f8558711d0f6ff870cb76cfa8ae06192cb7014765c02ac837e8"),
    "fever": (6666, "a36c0c146779583ba5dbce37eb05e5b87ad29a16749ecd6cf58b6548e8fdb899",
        "2236a43e8137b7692c52dff95f98dd597631028ff618dc039aa3633b2b3052d4",
        "3ba981844bfe0e5af889f39f3f5191fedbb5142249cd51d9db20c3008ce8c06a"),
    "fiqa": (648, "424164b5418f5e537fd19b97383c7301166e5738cbfa8e249bc9c10f6b6cd926",
        "35a21f6e7c509e945c110a4e5224cd9e86038662c353edc1e890c8a02f5ef685",
        "4519284ae27e278888835af561601955ff7fb9fe699d83fa48c5d9f33e3ec472"),
    "hotpotqa": (7405, "484e9f85554fe31d5b251003bf258755cf82ba503b7c090ce0c7332d75e76f3a",
        "e4ec3e8f973c7f0d04a1420d9abc98b035dae6897d2036aacc96d8ec426edf32",
        "d4b2a9cdea769b179cfdbd00dd55edaae7a0b359b9c24b9439675922847fd9f5"),
    "nfcorpus": (323, "9d822ee3fc9e3b395d7fe25a13d81686f54b2a056992574daa825e792800c959",
        "3b2d068344ae4e711656203c0937cbb4c2eb91759c0d0973525af7545500a345",
        "a20714ed0116696964f78fb567ec2d675ef47bbce7ba62333eebc1ad08c68076"),
    "nq": (3452, "935d4b66229ef34e69b5935235abebdbffc3d9754fc45cb6eaf0c63d7692f0fe",
        "9a278c94c9c7d6410672544fa5d1c89fd7816b074854e0179c9b8bd61b977bb7",
        "1c63460a8b28d629432e91c060a7f1008ce6c7a8a67bd095f3b104fc8f02639c"),
    "quora": (10000, "d03814d38a4a2c097fea81d5e4c774071f8667315a3c53b02e448bcdec4db57b",
        "4f644dc5c16e7bef5831bdb5df3165aaf77dbaf577f482dc75b1741612dabd6c",
        "12ee2f4ea9b7c84d3eb51fe965a637cd0188a6228f44d508cae186a78924af7c"),
    "scidocs": (1000, "648e2e4c15fc795114bc47664a65e73be59ba600db6a30ead85f8b5fcb4d8c98",
        "f354945ce8b0e08513a90bda322dc2363853746ba805a7c40528e840bf3571a4",
        "de8fd419848f2b235817b9399339babff5cdf5ed2f062c6d7e1b9272e392493f"),
    "scifact": (300, "8b7315286f8dc823956025a1fc9c9ff0bfe142d7b409458ccd758cfa0713ccba",
        "a624d39fa2a41da44b0148ac2b1c2cb9856ece2c4afbb6ac9360e8e524d66b4f",
        "428433edda7326ae10d037742b73ded3996688af774ca2b24142af5b9aa23d15"),
    "signal1m": (97, "208dec8d9ba1ecd87c6a55e61939d59faefe7ea53765a2fd54a2a54e84a23f07",
        "4a6542d689c665ff943d34e679b109383fc831703622c9c926b4778e54b7d4d5",
        "ac06b59ae44076b208c06e31a06fe7d47eafbf6060f83ec37dae23eaec3fc91d"),
    "trec-covid": (50, "0d94dcea5bc3b44a64a1f9b1430f7672fae39fad1c980d581b92890ab0448713",
        "5c0823de359690f6582736be6b50e55afc17602bdf3f3aa7a29e173d5163552b",
        "6e9aec5d32cb76955838115d4df0d364e3e9f2d637a0c3f169371b3a3845478f"),
    "trec-news": (57, "81ad5aba09051e0e79ac011a66a23e05bc62c32a2f9e8c10894e51869b2868c2",
        "7247e5eab81d286d5e7966c4ed22f1a344af999f293c187be4c265406553c439",
        "ba2ff9f2b90d220d0349d8b390aa3b0850aea8464dd095645df22106a2383c80"),
    "webis-touche2020": (49, "c919d5afb251678825f5dec39f63cbf8540cc59b0450bbd069c5a8e1b468af27",
        "7b9b264ce5d2eca6ee35b9ebf780c6c1b0de7c665f67640f43ce673083f4f6a3",
        "667343e42f044bdd1c9f7b69b12e9645eff533caaa83383b0808ce65bf8ec922"),
}
_MIRACL: dict[str, tuple[int, str, str, str]] = {  # dev split, by language
    "ar": (2896, "3670a7804dedd5a602dad0661f6adb1e65b197829d5571f428e0af7fc46aa313",
        "10b534b889ec46e23df478eee09410ef2880d90d419644dfed5d05d39b57ece0",
        "10ed55b66765505c6d5a21637e90498294febea2f267a6d8a2d357def8168674"),
    "bn": (411, "0aab3bcb0bbc5d3e5ed1566a9e3965800239438b5b5f68d5b6bb4acb7f0fec0e",
        "46fbf50f1f3972b6908543bad6b6dfc60a75eec80d54aae603efd884ba608d2f",
        "c39cff3e5bceb5a63df07049c6213c67ee01eaf729b3dd34c4d2101b4a2dc146"),
    "de": (305, "5d4a0d7ac42c7839a0513ba6deb6b27fc62803f318be8a7c411e10dbbde7578c",
        "6b66ec2cfb4af383e6fe18a08899bfa3a0deeb5e6010758743fa93ab598321c9",
        "debcdbe1ee6351951515953733ff0ee18c160913b67355c16e0d75556e2d51a4"),
    "en": (799, "a0af836c300e85088c4d73449492e2378280f967cac032853c9e11f3bc8a8d81",
        "25d9e6d17656674fd7aa3b67ee912c71545e664a842b147bfc17e9ff391db3da",
        "df02d387514b77cb31e691954eb054b09d5d8d428c6d85f8f547736ece2c952e"),
    "es": (648, "2d9441de1e25d7d2faf54f757db618ad5a2927337862a367f1a60e87ef7e40b2",
        "5e93b5a1cea22a44912e6ad242147c58719dd8ce4bb6304264a53876b70e65ac",
        "11d4bf17c419458c5d40e9702cce3cf631f1d3e7efd2989f4b7ac2406be2a6ac"),
    "fa": (632, "3cec8ea8fb1f056110e5282df3aa37e14fb5f44c6f885528b6072c0243c1efc4",
        "df0ece36ab8048f765aa0bb2dde948f5c764cc25bdfc09fb1f5317ef24ff8b49",
        "7d1bb3515c30bd20933b35a4ac4f5562d912319eb8a18b6e780db230a18cbe44"),
    "fi": (1271, "4e534e96878729bd2566233d7499c991463052d91d34738dfe84d79f110255cd",
        "71766986e9bef80118d60b989bdbd3ed965a845db6986847cbfd791fa00990b3",
        "c03ea9ba71c2e3b4ce414d21249d72ced9dcb1e6daf066779463a50dc3a30b90"),
    "fr": (343, "823e8f6fd297064d67efe37991cd3953414dc040c290f249b0895925f03509ad",
        "dd471f3a0a594d212b30495f8b1d9759451aea399b44e02de6ca9c5550930106",
        "1ee13dd93901dfed06b0ae937da032118b9aa478bb00dac66fc054f65481bf4a"),
    "hi": (350, "4cec99e7012ffca7fd129eeea01f37984bb21702706a8398208e8fba1c14e963",
        "94bed8e649806246f59edfb6434ea0c59920a44f2f60a56e01d205c6bf58ef60",
        "ceb3900de9262968ce2b879e84afa90885716edf60a342a291fd0adb230ae452"),
    "id": (960, "6270863499b1be946be0883e8815b52ffb21e56181e9dc67596eaeb61494a61c",
        "c5d9d5de2913beeb003ee0ef63e4537c2f632940ed077bfb2e9e8a3b5943096d",
        "1ea30ed9cd19c71dbb35f80251d108b095a78c132150696daecf1aca1d607706"),
    "ja": (860, "1e2a60ba96b889bd076adea950e7e83a2d083f671955a5ab3e9bdc332b492e5f",
        "1904b9bf0fc52e1b684daa7539b2bcfdd90122e603ffbcf6b5065a0e210525b0",
        "d6c09b700df6abd00b8cf6e9a50ffcbf7ff0bacf07399dacebdc9f66ab559488"),
    "ko": (213, "88827ccc5b64e531b25f70eef30202d33daa9bfa3ac8cceadf5cdbd5ca5034df",
        "a365552cfc997a8915e948a3b5994883f641e7c3f12b6af87bbfaf89729e32a8",
        "a64e47da0b31143240d2a4505756a018dd905513b245e6489276b590b63cbb19"),
    "ru": (1252, "f877b43c7f53b76aab25e406e5a607ef1c5adba4ffaa11e1b252a4326735a19b",
        "91a7c3b6d21f79a12b5330f0a62811962f9370a0bf539cba8b3fecaa095f0616",
        "6d131c403d6a2e3dacb08627f09d91f047958df6b73587fc81e7939ccfc43af1"),
    "sw": (482, "a1e6438ac732dabd9a24fd5c8dfc0c64168aea81ff477d8b1986fde5ad193a63",
        "15cde3f614cb75b3106fb4606a16162140ee157da22c4a57aae756571788b722",
        "72196cb3a79c47da8121ffa50a34641bb95ee7ab79b9af7686b93a6f7f5d4793"),
    "te": (828, "576a7ded402697a7bb521b4b8bb1a27806b927556001450405d3a5b85590a0c9",
        "3ac8a9a20bdf93ffcc36d554a5fff76ec4435131ae995010814df5881fff07d6",
        "eee6a58d9b498990fd9c0b9e2ee7d1de064f1bb370413fd3846776f9245e0a3f"),
    "th": (733, "81097e891775f67a9b98d41309f9c452dc4e09572b0cbf4952d4107ed0fe1407",
        "6ef23316d1224d9fef9e3f8bc2fdf527dad1a3bba98657617398c226503f5a46",
        "a6e534c64659bf03fba63be1ff2585725c4be5d8caea5647724dfb43ede96692"),
    "yo": (119, "39a219ef0b593f6056e4ad1d65b9c03345730efa5107f0abd4a4a44ef2f6f0d2",
        "b24558e43e1965d5cfe7440a5bf3bf66d70529474ff76e64bfa72026129b2d2e",
        "dcd3fbb14fa478fb1760b395828d274c1abf326e0d5099f0290cc9df0c434c5b"),
    "zh": (393, "5546474d3dc8139014e6571e9f4041848bb0a314ca6d2d4bac708174d71c59eb",
        "5b284a9aabf08bb2d1c88ed7ea276025c9d23846457c5350dc8d391b5e0d0a13",
        "27126f7a57f54387741e88fba34d442b1ca3496745ee9dfcaaa1e7455779d59a"),
}
_MSMARCO_DEV_SMALL: tuple[int, str, str, str] = (6980, "34ef51a24e049b3dd19b0a448b764f26b0def22ec42f421ecba2db91f82e7042",
        "f4f71fa87b6be4fb968cca2b8f8554c4ebd003e6c3488af3ac1cc5629c3de189",
        "0d89bbad76bc4590bb9a78ca1ce7667fa5696b897bfb73c4ffd6560e4bcd5d86")
# TREC DL passage: dataset id -> (qrels file, topics file, row as above; the query count is the qrels')
_TREC_DL: dict[str, tuple[str, str, tuple[int, str, str, str]]] = {
    "msmarco-passage/trec-dl-2019": ("qrels.dl19-passage.txt", "topics.dl19-passage.txt", (43,
        "8a1f10d550732e4cd91d7fc49846a3784de4040972f583e69285a88f3c5fee92",
        "518992da259fb61f64e4790791df91a7b42ea5773f374aed59220ebb51d58d90",
        "a5847a267e8fbf7b10f6997cf2b43d0a8217ed89bda0c494fd01ccd7c6673743")),
    "msmarco-passage/trec-dl-2020": ("qrels.dl20-passage.txt", "topics.dl20.txt", (54,
        "60d4c34561f9687f8f73e0a752ba80ab80159b3e9c1bedd0a351f747ed6f5684",
        "726cb4018b85a335fcbe09004df7f084ec1bf20531961d9af7b0c71dd609e69b",
        "4869f52b6c8adcecd5e55cc5830eb722739415a69d1f296e491aa833bdeba42e")),
}
# fmt: on

# Judgments of BEIR datasets irboard does not register (their corpora are not public, and no published run on them
# is on the board); listed so that the registry accounts for every official file. beir/trec-news, whose corpus is
# not public either, is registered for its judgments alone (evaluator.datasets.beir.NOT_PUBLIC).
_UNREGISTERED_LICENSES = {
    "bioasq": "BioASQ terms (registration required)",
    "signal1m": "Signal Media terms (research use)",
}
_MIRACL_LICENSE = "Apache-2.0"
_MSMARCO_LICENSE = "MS MARCO terms (non-commercial research)"


# sha256 of each qrels file's sorted query ids (`spec.query_ids_sha256`): the query set a result must cover, known
# without downloading anything, so that no submitted file decides it. Computed from the pinned files above.
# fmt: off
_QUERY_IDS_SHA256: dict[str, str] = {  # qrels file name -> query_ids_sha256
    "qrels.msmarco-passage.dev-subset.txt": "3fe9da5fea43ed15bd63429e526703a15ecce556fc873f4d03b53cca71681d85",
    "qrels.beir-v1.0.0-trec-covid.test.txt": "8d1e7b413c72c853748f12559454f7490ab9932e064446b54b3f331b52aa8cea",
    "qrels.beir-v1.0.0-nfcorpus.test.txt": "f3950f7914eaf889ccceeaa0c7d53c787e674db1e442f8fa07ff8d2aec991d44",
    "qrels.beir-v1.0.0-nq.test.txt": "316dcf12e742537e3750eb41dbdf9521307fcf94cea1afd44e824b2b5127216c",
    "qrels.beir-v1.0.0-hotpotqa.test.txt": "8f1a1b80b352ff578988c4dfb320f44dc7c08c5e4d4b86ef132598271a0adb00",
    "qrels.beir-v1.0.0-fiqa.test.txt": "afde57664f4b3702f65a94218a2dbd831c5461b3aa3106e7ffd40820b22d8f6c",
    "qrels.beir-v1.0.0-arguana.test.txt": "354220cb3aa85edc770a16b95f2afb14380048a83ad4b0ae6e55f8d9c4637a1f",
    "qrels.beir-v1.0.0-webis-touche2020.test.txt": "ca0d486bfb8e2d95c123eec8e5a705488856621c3a1384ede7a7432515dace34",
    "qrels.beir-v1.0.0-quora.test.txt": "f48cb5b6fe953b707f68c432bedb2c323276990693680d6c03ffc48e85e7dce9",
    "qrels.beir-v1.0.0-dbpedia-entity.test.txt": "56844103b3b7fa1b4fc0537bc7aa6d1520813dfa01fd187d3369a82fae6f3035",
    "qrels.beir-v1.0.0-scidocs.test.txt": "7fd2f2cb14614468d480adf6604747cd9130d16ceca73e0a387fcc0f657b6ce1",
    "qrels.beir-v1.0.0-fever.test.txt": "48009db0b9cf705466fa2c4b7591b413a8a5320d9b236618bfaf1582233a1673",
    "qrels.beir-v1.0.0-climate-fever.test.txt": "f1eca4abda897282b8e8aa7e05aae6bf47152c4022fd77fc39b7e5900c4c7c7e",
    "qrels.beir-v1.0.0-scifact.test.txt": "26cc483d5ed08c9559e5f99948281accbb9aac17b8c2ea6e1e857286d9ebd684",
    "qrels.beir-v1.0.0-cqadupstack-android.test.txt": "60fc0514963b4470576cd802a0ccb31bb149804f0287c694a2432e66ba24cfc2",
    "qrels.beir-v1.0.0-cqadupstack-english.test.txt": "7e69acdade94508b702e518e9de306e83c2c7ee794c58221ff9352a6a8f49285",
    "qrels.beir-v1.0.0-cqadupstack-gaming.test.txt": "735ef49f764852caa2d34a3ccc1b989567f22346823071e032370de7ae30fb14",
    "qrels.beir-v1.0.0-cqadupstack-gis.test.txt": "14665752f76d593171ef3649ccb3e45100cd2919351d9902213ef9372a5e1c45",
    "qrels.beir-v1.0.0-cqadupstack-mathematica.test.txt": "bc464341bab83958efb57ba212b77a0ad0639d0e18e50903ab6453088c8ca920",
    "qrels.beir-v1.0.0-cqadupstack-physics.test.txt": "49556309aa0aaf325a85299c8ba39e76ea6d8847b5e1304fdace8df35853ce19",
    "qrels.beir-v1.0.0-cqadupstack-programmers.test.txt": "56a25d71c7494f6d9cad9ef7aec45a8be580166bfdb647e9a38e62690dfa7b9a",
    "qrels.beir-v1.0.0-cqadupstack-stats.test.txt": "1a2f4b5768bbd79737f49feeed3208d7156778a1543bf07fd5330861f641d40e",
    "qrels.beir-v1.0.0-cqadupstack-tex.test.txt": "1f77011038fa191b0497327dd99fae89fd3352340b504f5573e253e444f540e8",
    "qrels.beir-v1.0.0-cqadupstack-unix.test.txt": "dbb37c78e03af90010079cb1ca71adbb3f8e537c11d1686b77330fe293a12657",
    "qrels.beir-v1.0.0-cqadupstack-webmasters.test.txt": "2edc9f14dd83830836c3e4bd6e795511f8f68c58add6da75999e07f0ef0de9c1",
    "qrels.beir-v1.0.0-cqadupstack-wordpress.test.txt": "e57a282d48f348fd8362c5e64f19be169741ccc7d6032fd29f37e4e55f1c473e",
    "qrels.miracl-v1.0-ar-dev.tsv": "3b63ace150d6cd7fa53035c2a91c411a55a4d888b7d4d20e94782094dae7defe",
    "qrels.miracl-v1.0-bn-dev.tsv": "a9ac1d37ceae394650053ce61d2947aba36c27ec85c244ca244ebcffb46ab2e8",
    "qrels.miracl-v1.0-en-dev.tsv": "9c82d15248ff3262695c178dcaec4788349e8355d2d9b76a867d5babec85c964",
    "qrels.miracl-v1.0-es-dev.tsv": "da4a422a3c2b4ad0de50060858ccf2ae3cffc747c7b5be8ae8b723a6158bd82c",
    "qrels.miracl-v1.0-fa-dev.tsv": "fba0a62f811e963eb91b095e6b62b533d27d8313ebf84f6667658aec5d0cbc8a",
    "qrels.miracl-v1.0-fi-dev.tsv": "4b4b0aa9e76f3f83289c056d59ba341b2d0a8c2e1cd72657ac5bb90cc77bd850",
    "qrels.miracl-v1.0-fr-dev.tsv": "0bf99730d271eb67cd12cfdefe526b05f171c16e986cf06daa4d44b411df5774",
    "qrels.miracl-v1.0-hi-dev.tsv": "fc4de1edb5892f7fda4ea5daf696064f3550132c8f88a39530f6bfb708662cdd",
    "qrels.miracl-v1.0-id-dev.tsv": "a86c3eafb7f411749d95f102878157d3d7b5e4f2f3287f789551c4f98fefe8b0",
    "qrels.miracl-v1.0-ja-dev.tsv": "6a740f925199d813268b61902be635d68f7b27230f61f36cbe083db170f6534f",
    "qrels.miracl-v1.0-ko-dev.tsv": "630e0c3db8ac91147f66dd7c72891f87ac32f9e3116fb0833b2d84704cff3cc7",
    "qrels.miracl-v1.0-ru-dev.tsv": "759a21f1972ca4ef2a88440304f026779d2f48cad533393d62b8cb000371ff1e",
    "qrels.miracl-v1.0-sw-dev.tsv": "e29c4a60a0b6f7b4b5db383e36a519df7ec013d1492ae58704dce57708cc42fb",
    "qrels.miracl-v1.0-te-dev.tsv": "f51ef4641bc9c454df0844fbd040d4bb3c7ceafdc54e9c5a3e0d1b357ca3f4a5",
    "qrels.miracl-v1.0-th-dev.tsv": "77caf4f2b2977943536f945a371e217f3e8dd2301a24b89c0e9275c928d37136",
    "qrels.miracl-v1.0-zh-dev.tsv": "899852f4534b92e7ced6e031073d4cec02cbafe1c6e7105e3de361e161ff53ad",
    "qrels.miracl-v1.0-de-dev.tsv": "e6e8e397a6f2d5f541b7dd4ee9eb7696186289b4a0b54d512f34bc6dbf87b18e",
    "qrels.miracl-v1.0-yo-dev.tsv": "edcb488f24627f38e8756799d3f166abdd71d71923c7422af21933bdd5a2d55c",
    "qrels.beir-v1.0.0-bioasq.test.txt": "77dad85ea50c1c52e1e356a7a1e0b20e009b6ae5e550b5c8616ff67566a37d6f",
    "qrels.beir-v1.0.0-signal1m.test.txt": "7400606ee90b8bb948db63058d60db16da47cfd37541c719b82dacc5598f4061",
    "qrels.beir-v1.0.0-trec-news.test.txt": "7d50192cbd110d8e625a9935cf622141a1984b1ee7361f461871957ba21cf50c",
    "qrels.dl19-passage.txt": "45639e6c88dd5a2150d59696937b6419af0c8af86d9ba19e97ae4554039ae440",
    "qrels.dl20-passage.txt": "1fc49f6f2245621b71dfb0f2430bc22ce9ab567c4e8a82a54442d76e9ea65767",
}
# fmt: on


@dataclass(frozen=True)
class OfficialFile:
    folder: str  # "qrels" or "topics": the upstream folder, and the mirror's
    name: str  # upstream file name
    sha256: str

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.name}"


@dataclass(frozen=True)
class OfficialJudgments:
    """The official qrels and topics of one dataset id."""

    dataset_id: str
    split: str
    qrels: OfficialFile
    topics: OfficialFile
    num_queries: int
    judgments_sha256: str  # Qrels.sha256() of the qrels: the dataset.qrels_sha256 of a result scored on them
    query_ids_sha256: str  # of the qrels' query ids (evaluator.datasets.spec.query_ids_sha256)
    license: str  # of the judgments
    registered: bool = True  # False: official files exist, but irboard has no dataset spec (corpus not public)


def _judgments(dataset_id: str, split: str, stem: str, row: tuple[int, str, str, str], license: str,
               registered: bool = True, names: tuple[str, str] | None = None) -> OfficialJudgments:
    num_queries, qrels_sha256, topics_sha256, judgments_sha256 = row
    if names is not None:
        qrels_name, topics_name = names
    elif stem.startswith("beir"):
        qrels_name, topics_name = f"qrels.{stem}.txt", f"topics.{stem}.tsv.gz"
    elif stem.startswith("miracl"):
        qrels_name, topics_name = f"qrels.{stem}.tsv", f"topics.{stem}.tsv"
    else:
        qrels_name, topics_name = f"qrels.{stem}.txt", f"topics.{stem}.txt"
    return OfficialJudgments(
        dataset_id=dataset_id, split=split, qrels=OfficialFile("qrels", qrels_name, qrels_sha256),
        topics=OfficialFile("topics", topics_name, topics_sha256), num_queries=num_queries,
        judgments_sha256=judgments_sha256, query_ids_sha256=_QUERY_IDS_SHA256[qrels_name], license=license,
        registered=registered,
    )


@lru_cache(maxsize=1)
def _registry() -> dict[str, OfficialJudgments]:
    from evaluator.datasets.spec import all_specs

    msmarco = "msmarco-passage.dev-subset"
    found: dict[str, OfficialJudgments] = {}
    for spec in all_specs():  # a spec missing from the tables has none (a test requires them where they exist)
        beir_name = spec.name.replace("/", "-")  # cqadupstack/android -> cqadupstack-android
        if spec.family == "mmarco" or (spec.family == "beir" and spec.name == "msmarco"):
            found[spec.id] = _judgments(spec.id, spec.split, msmarco, _MSMARCO_DEV_SMALL, _MSMARCO_LICENSE)
        elif spec.family == "beir" and beir_name in _BEIR:
            found[spec.id] = _judgments(spec.id, spec.split, f"beir-v1.0.0-{beir_name}.test", _BEIR[beir_name],
                                        spec.license)
        elif spec.id in _TREC_DL:
            qrels_name, topics_name, row = _TREC_DL[spec.id]
            found[spec.id] = _judgments(spec.id, spec.split, "", row, _MSMARCO_LICENSE, names=(qrels_name, topics_name))
        elif spec.family == "miracl" and spec.name in _MIRACL:
            found[spec.id] = _judgments(spec.id, spec.split, f"miracl-v1.0-{spec.name}-dev", _MIRACL[spec.name],
                                        _MIRACL_LICENSE)
    for name, license in _UNREGISTERED_LICENSES.items():
        found[f"beir/{name}"] = _judgments(f"beir/{name}", "test", f"beir-v1.0.0-{name}.test", _BEIR[name],
                                           license, registered=False)
    return found


def official_judgments(dataset_id: str) -> OfficialJudgments | None:
    """The official files of a dataset id; None when it has none (classic collections, local folders)."""
    return _registry().get(dataset_id)


def known_query_ids_sha256(dataset_id: str) -> str | None:
    """The registered fingerprint of a dataset's query set: its spec's, else its official qrels'; None for a dataset
    without either (unregistered ids, local folders)."""
    from evaluator.datasets import get_spec
    from evaluator.errors import IrboardError

    try:
        spec = get_spec(dataset_id)
    except IrboardError:
        return None
    record = official_judgments(dataset_id)
    if spec.query_ids_sha256 is None and record is not None and record.split == spec.split:
        return record.query_ids_sha256
    return spec.query_ids_sha256


def all_official_judgments() -> list[OfficialJudgments]:
    return list(_registry().values())


def file_url(file: OfficialFile) -> str:
    """Where ``file`` is downloaded from: ``$IRBOARD_MIRROR`` (folder or URL) when set, else the upstream."""
    mirror = os.environ.get(MIRROR_ENV, "").strip()
    if not mirror:
        base = os.environ.get(RAW_BASE_ENV, "").strip() or RAW_BASE
        return f"{base.rstrip('/')}/{REPOSITORY}/{COMMIT}/{file.path}"
    if "://" not in mirror:  # a folder
        mirror = Path(mirror).expanduser().resolve().as_uri()
    return f"{mirror.rstrip('/')}/{file.path}"


def cached_path(file: OfficialFile, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return cache_root(cache_dir) / "official" / file.folder / file.name


def is_cached(file: OfficialFile, cache_dir: str | os.PathLike[str] | None = None) -> bool:
    return cached_path(file, cache_dir).is_file()


def fetch_official(file: OfficialFile, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cached copy of ``file`` (its sha256 checked), downloaded first when missing or damaged."""
    dest = cached_path(file, cache_dir)
    if dest.is_file():
        if file_sha256(dest) == file.sha256:
            return dest
        logger.warning("%s: sha256 differs from the official file's; downloading it again", dest)
        dest.unlink()
    hint = f"set {MIRROR_ENV} to a folder or http(s) URL holding {file.path}, or copy the file to {dest}"
    return fetch_file(file_url(file), file.sha256, dest, hint)


def official_qrels(dataset_id: str, cache_dir: str | os.PathLike[str] | None = None) -> Qrels:
    """The official qrels of ``dataset_id``, from the cache or downloaded (DatasetLoadError: one line saying
    what is missing and how to supply it)."""
    from evaluator.trec import read_qrels

    record = official_judgments(dataset_id)
    if record is None:
        raise DatasetLoadError(f"{dataset_id}: has no official judgments to download; pass --data-dir with a "
                               "local copy (a folder holding qrels/<split>.tsv)")
    try:
        path = fetch_official(record.qrels, cache_dir)
    except DatasetLoadError as error:
        raise DatasetLoadError(f"{dataset_id}: official qrels not available: {error}") from None
    return read_qrels(path)


