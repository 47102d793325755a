"""One view-model per page: each module builds its page's typed context (leaderboard/web/contexts.py) from the
board, once, with `build`; templates only format it (docs/layout.md says where a new column or page goes)."""
