"""Judges: machine-made judgment sets (docs/datasets.md, "Judgment sets"). `pool` gathers the documents a set
must judge, the top of every stored ranking of a dataset that its official qrels leave unjudged; `embedding`
grades them by an embedding model's cosine and writes the set and its declaration under `judgments/`.

Nothing here runs in `irboard build` or `validate`: they read the committed set only."""
