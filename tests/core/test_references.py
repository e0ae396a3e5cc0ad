"""The published reference figures ship with the package, each with its source."""
from econarena_evals.core.references import GAMA_LABEL, gama_round1, load_references


def sources_everywhere(node, path="refs"):
    """Every block holding figures has a `source` string on it or on an enclosing block."""
    missing = []

    def walk(n, p, sourced):
        if isinstance(n, dict):
            sourced = sourced or isinstance(n.get("source"), str)
            if not sourced and any(isinstance(v, (int, float, list)) for v in n.values()):
                missing.append(p)
            for k, v in n.items():
                walk(v, f"{p}.{k}", sourced)

    walk(node, path, False)
    return missing


def test_references_load_and_carry_their_sources():
    refs = load_references()
    assert sources_everywhere(refs) == []
    assert refs["gama_bench"]["setting"] == GAMA_LABEL
    assert refs["humans"]["nagel_1995"]["first_period"]["by_p"]["2/3"] == {"mean": 36.73, "median": 33.0, "n": 67}
    assert refs["humans"]["nagel_1995"]["session_p_2_3"]["period_means"] == [39.7, 28.6, 20.2, 16.7]
    assert refs["humans"]["camerer_ho_chong_2004"]["tau"] == 1.5


def test_gama_tables_are_complete_and_consistent():
    refs = load_references()["gama_bench"]
    models = list(refs["guessing_round1"]["models"])
    assert len(models) == 13 and "gpt-4o" in models and "llama-3.1-405b" in models
    assert list(refs["guessing_round_means"]["models"]) == models
    assert list(refs["auction_bid_value"]["models"]) == models
    for m, h in gama_round1().items():
        assert sum(h["counts"]) == 50 and len(h["counts"]) == 10
        assert h["edges"][0] == 0 and h["edges"][-1] == 1
        # the mean lies inside the span of the occupied bins
        occupied = [i for i, c in enumerate(h["counts"]) if c]
        assert occupied[0] * 10 <= h["mean"] <= (occupied[-1] + 1) * 10
        assert round(h["mean"], 1) == refs["guessing_round_means"]["models"][m][0]
    assert refs["auction_bid_value"]["models"]["gpt-4o"]["second_price"]["mean"] is None
    assert refs["auction_bid_value"]["models"]["mixtral-8x7b"]["second_price"]["share_equal"] == 0.761


def test_load_returns_a_fresh_copy():
    load_references()["gama_bench"]["setting"] = "changed"
    assert load_references()["gama_bench"]["setting"] == GAMA_LABEL
