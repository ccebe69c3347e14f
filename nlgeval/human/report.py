"""Paper tables (CSV, Markdown, LaTeX) for the human-ratings analyses."""

from __future__ import annotations

import pandas as pd

from nlgeval.human.agreement import AgreementReport
from nlgeval.human.compare import FriedmanResult
from nlgeval.human.glm import GLMTukeyResult
from nlgeval.human.mixed import MixedModelResult
from nlgeval.human.ordinal import OrdinalModelResult
from nlgeval.human.pairwise import BradleyTerryResult
from nlgeval.tables import PaperTable


def _ci_text(lo: pd.Series, hi: pd.Series, digits: int = 2) -> list[str]:
    return ["--" if pd.isna(a) or pd.isna(b) else f"[{a:.{digits}f}, {b:.{digits}f}]"
            for a, b in zip(lo, hi, strict=True)]


def wilcoxon_table(pairs: pd.DataFrame, *, criterion: str = "", pairing: str = "item",
                   correction: str = "bonferroni", alpha: float = 0.05) -> PaperTable:
    """One row per system pair: n, W, p, adjusted p, r with its interval, and which system is
    rated higher.

    Examples
    --------
    >>> from nlgeval.corpus import toy_ratings
    >>> df = toy_ratings()  # 4 raters x 6 items x systems a, b, c; random scores 1-5
    >>> from nlgeval.human.compare import pairwise_wilcoxon
    >>> t = wilcoxon_table(pairwise_wilcoxon(df), criterion="fluency")
    >>> t.data["System A"].tolist(), t.label
    (['a', 'a', 'b'], 'tab:wilcoxon')
    """
    cols = ["system_a", "system_b", "n", "statistic", "pvalue", "pvalue_adjusted",
            "effect_size", "higher", "significant"]
    data = pairs[cols].rename(columns={
        "system_a": "System A", "system_b": "System B", "statistic": "W",
        "pvalue": "p", "pvalue_adjusted": f"p ({correction})",
        "effect_size": "r (rank-biserial)", "higher": "Higher",
        "significant": f"Significant at {alpha:g}"})
    if {"effect_size_low", "effect_size_high"} <= set(pairs.columns):
        data.insert(data.columns.get_loc("r (rank-biserial)") + 1, f"{1 - alpha:.0%} CI of r",
                    _ci_text(pairs["effect_size_low"], pairs["effect_size_high"]))
    what = f" ({criterion})" if criterion else ""
    return PaperTable(
        data=data,
        caption=f"Pairwise Wilcoxon signed-rank tests{what}, pairs formed by {pairing}, "
        f"{correction} correction over {len(pairs)} pairs; r > 0 when A is rated higher, its "
        "interval per comparison (Fisher z).",
        label="tab:wilcoxon", digits={"p": 4, f"p ({correction})": 4, "W": 1,
                                      "r (rank-biserial)": 3},
        notes=tuple(pairs.attrs.get("warnings", ())),
    )


def glm_tables(res: GLMTukeyResult, *, criterion: str = "") -> dict[str, PaperTable]:
    """``means``: system means with homogeneous-subset letters (as in Reiter & Belz 2009);
    ``anova``: the ANOVA table; ``tukey``: pairwise Tukey HSD.

    Examples
    --------
    >>> from nlgeval.corpus import toy_ratings
    >>> df = toy_ratings()  # 4 raters x 6 items x systems a, b, c; random scores 1-5
    >>> from nlgeval.human.glm import glm_tukey
    >>> sorted(glm_tables(glm_tukey(df)))
    ['anova', 'means', 'tukey']
    """
    what = f" ({criterion})" if criterion else ""
    means = res.means[["system", "mean", "sd", "n", "letters"]].rename(columns={
        "system": "System", "mean": "Mean", "sd": "SD", "n": "N", "letters": "Subsets"})
    anova = res.anova.rename(columns={"factor": "Source", "df": "df", "sum_sq": "SS",
                                      "mean_sq": "MS", "pvalue": "p"})
    tukey = res.tukey[["system_a", "system_b", "diff", "low", "high", "pvalue_adjusted",
                       "reject"]].rename(columns={
                           "system_a": "System A", "system_b": "System B",
                           "diff": "Diff (B - A)", "low": "CI low", "high": "CI high",
                           "pvalue_adjusted": "p (Tukey)", "reject": "Significant"})
    if "smd" in res.tukey.columns:
        tukey.insert(5, "d", res.tukey["smd"].to_numpy())
        tukey.insert(6, "CI of d", _ci_text(res.tukey["smd_low"], res.tukey["smd_high"]))
    return {
        "means": PaperTable(
            data=means,
            caption=f"Mean ratings{what}. Systems sharing a letter are in the same homogeneous "
            f"subset (Tukey HSD, alpha = {res.alpha:g}, model MSE {res.mse:.3g} on "
            f"{res.df_resid:g} df, harmonic-mean n {res.n_harmonic:.3g}).",
            label="tab:human-means", digits={"Mean": 2, "SD": 2}),
        "anova": PaperTable(data=anova, caption=f"ANOVA (Type II) for {res.formula}{what}.",
                            label="tab:anova", digits={"df": 0, "SS": 1, "MS": 2, "F": 2,
                                                       "p": 4}),
        "tukey": PaperTable(data=tukey, caption=f"Tukey HSD with the GLM error term{what}; "
                            "d = difference / sqrt(MSE), its interval the Tukey interval "
                            "scaled the same way.", label="tab:tukey", digits=3),
    }


def friedman_table(res: FriedmanResult, *, criterion: str = "") -> PaperTable:
    """Mean rank per system, the Friedman test and Kendall's W in the caption.

    Examples
    --------
    >>> from nlgeval.corpus import toy_ratings
    >>> df = toy_ratings()  # 4 raters x 6 items x systems a, b, c; random scores 1-5
    >>> from nlgeval.human.compare import friedman
    >>> friedman_table(friedman(df)).label
    'tab:friedman'
    """
    data = pd.DataFrame({"System": list(res.mean_ranks), "Mean rank": list(
        res.mean_ranks.values())}).sort_values("Mean rank", ascending=False)
    what = f" ({criterion})" if criterion else ""
    return PaperTable(
        data=data.reset_index(drop=True),
        caption=f"Friedman test{what}: chi2({res.df}) = {res.statistic:.2f}, "
        f"p = {res.pvalue:.3g}, Kendall's W = {res.kendalls_w:.3f}, {res.n_blocks} "
        f"complete {res.block}s.", label="tab:friedman", digits=2)


def agreement_table(rep: AgreementReport) -> PaperTable:
    """Agreement coefficients in one table.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 6, "item": list("112233445566"),
    ...                    "system": "a", "score": [1, 2, 2, 3, 3, 3, 4, 4, 2, 2, 1, 1]})
    >>> from nlgeval.human.agreement import agreement_report
    >>> agreement_table(agreement_report(df, scale=(1, 4))).label
    'tab:agreement'
    """
    rows = [
        ("Fleiss' kappa", rep.fleiss.kappa),
        ("Krippendorff's alpha (nominal)", rep.krippendorff["nominal"]),
        ("Krippendorff's alpha (ordinal)", rep.krippendorff["ordinal"]),
        ("Krippendorff's alpha (interval)", rep.krippendorff["interval"]),
    ]
    rows += [(f"{r.type} [{r.description}]", r.icc) for r in rep.icc]
    if not rep.icc:
        rows.append(("ICC", float("nan")))
    if not rep.cohen.empty:
        for w in ("unweighted", "linear", "quadratic"):
            rows.append((f"Cohen's kappa ({w}), mean over {len(rep.cohen)} rater pairs",
                         float(rep.cohen[w].mean())))
    what = f" ({rep.criterion})" if rep.criterion else ""
    return PaperTable(data=pd.DataFrame(rows, columns=["Coefficient", "Value"]),
                      caption=f"Inter-rater agreement{what}: {rep.n_ratings} ratings by "
                      f"{rep.n_raters} raters of {rep.n_units} outputs.",
                      label="tab:agreement", digits=3, notes=rep.notes)


def table9(agreement: pd.DataFrame, *, alpha: float = 0.05,
           correction: str = "bonferroni") -> PaperTable:
    """Reiter & Belz (2009) Table 9 layout from
    :func:`nlgeval.human.metric_agreement.significant_difference_agreement`.

    Examples
    --------
    >>> import pandas as pd
    >>> t9 = pd.DataFrame({"metric": ["BLEU"], "human_significant": [3], "predicted": [2],
    ...                    "backwards": [0], "missed": [1], "spurious": [0]})
    >>> table9(t9).label
    'tab:metric-significance'
    """
    data = agreement.rename(columns={
        "metric": "Metric", "human_significant": "Human sig.", "predicted": "Predicted",
        "backwards": "Backwards", "missed": "Missed", "spurious": "Spurious"})
    return PaperTable(
        data=data,
        caption="Significant differences between systems found by humans and predicted by "
        f"each metric (Wilcoxon signed-rank by item, {correction}, alpha = {alpha:g}).",
        label="tab:metric-significance", digits=0)


def mixed_tables(res: MixedModelResult, *, criterion: str = "") -> dict[str, PaperTable]:
    """``contrasts``: pairwise system contrasts of the mixed model with CIs, adjusted p and
    the standardised difference d; ``means``: model-based system means; ``variance``: the
    variance components and their shares.

    Examples
    --------
    >>> from nlgeval.corpus import toy_ratings
    >>> df = toy_ratings()  # 4 raters x 6 items x systems a, b, c; random scores 1-5
    >>> from nlgeval.human.mixed import mixed_model
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> u, v = rng.normal(0, 0.7, 4), rng.normal(0, 0.5, 6)  # rater and item effects
    >>> df["score"] = [3 + u[int(r[1])] + v[int(i[1])] + rng.normal(0, 0.5)
    ...                for r, i in zip(df["rater"], df["item"])]
    >>> sorted(mixed_tables(mixed_model(df)))
    ['contrasts', 'means', 'variance']
    """
    what = f" ({criterion})" if criterion else ""
    c = res.contrasts
    lvl = f"{1 - res.alpha:.0%}"
    con = pd.DataFrame({
        "System A": c["system_a"], "System B": c["system_b"], "Estimate (A - B)": c["estimate"],
        f"{lvl} CI": _ci_text(c["ci_low"], c["ci_high"]), "z": c["statistic"], "p": c["p"],
        f"p ({res.correction})": c["p_adjusted"], "d": c["smd"],
        "CI of d": _ci_text(c["smd_low"], c["smd_high"]), "Significant": c["significant"],
    })
    m = res.means
    means = pd.DataFrame({"System": m["system"], "Mean": m["mean"], "SE": m["se"],
                          f"{lvl} CI": _ci_text(m["ci_low"], m["ci_high"]), "N": m["n"]})
    v = res.variance
    comps = [c_ for c_ in ("rater", "item") if c_ in v] + ["residual"]
    var = pd.DataFrame({"Component": comps, "Variance": [v[c_] for c_ in comps],
                        "Share": [v[f"share_{c_}"] for c_ in comps]})
    return {
        "contrasts": PaperTable(
            data=con, caption=f"Pairwise system contrasts from the mixed model {res.formula}"
            f"{what} (REML); Wald z tests, {res.correction} adjustment over {len(c)} pairs; "
            f"intervals per comparison; d = estimate / total SD (Westfall, Kenny & Judd 2014).",
            label="tab:mixed-contrasts", digits={"p": 4, f"p ({res.correction})": 4},
            notes=res.warnings),
        "means": PaperTable(data=means, caption=f"Model-based system means{what}.",
                            label="tab:mixed-means", digits=2),
        "variance": PaperTable(data=var, caption=f"Variance components{what}: share of the "
                               "total rating variance due to raters, items and the residual.",
                               label="tab:mixed-variance", digits=3),
    }


def ordinal_tables(res: OrdinalModelResult, *, criterion: str = "") -> dict[str, PaperTable]:
    """``ordinal_<criterion>``: the system coefficients (log odds of a higher rating relative to
    the reference) with the LR test; ``ordinal_contrasts_<criterion>``: pairwise contrasts as
    log odds and odds ratios with intervals and adjusted p-values, the proportional-odds check
    in the caption.

    Examples
    --------
    >>> from nlgeval.corpus import toy_ratings
    >>> df = toy_ratings()  # 4 raters x 6 items x systems a, b, c; random scores 1-5
    >>> from nlgeval.human.ordinal import ordinal_model
    >>> sorted(ordinal_tables(ordinal_model(df, factors=()), criterion="q"))
    ['ordinal_contrasts_q', 'ordinal_q']
    """
    what = f" ({criterion})" if criterion else ""
    coef = PaperTable(
        data=res.coefficients,
        caption=f"{res.formula}{what}; system effect: LR chi2({res.lr_df}) = "
        f"{res.lr_statistic:.2f}, p = {res.lr_pvalue:.3g}; coefficients are log odds of a "
        f"higher rating relative to {res.reference}", label="tab:ordinal", digits=3)
    c = res.contrasts
    lvl = f"{1 - res.alpha:.0%}"
    data = pd.DataFrame({
        "System A": c["system_a"], "System B": c["system_b"], "Log OR (A - B)": c["estimate"],
        f"{lvl} CI": _ci_text(c["ci_low"], c["ci_high"]), "Odds ratio": c["odds_ratio"],
        f"{lvl} CI of OR": _ci_text(c["odds_ratio_low"], c["odds_ratio_high"]),
        "p": c["pvalue"], f"p ({res.correction})": c["pvalue_adjusted"],
        "Significant": c["significant"]})
    po = res.proportional_odds
    check = "" if po is None else (
        f" Proportional-odds check (LR against system effects per cut-point): chi2({po.df}) = "
        f"{po.statistic:.2f}, p = {po.pvalue:.3g}, "
        + ("no evidence against it." if po.holds else "REJECTED."))
    contrasts = PaperTable(
        data=data, caption=f"Pairwise system contrasts from the cumulative-logit model{what}: "
        f"Wald z tests, {res.correction} adjustment over {len(c)} pairs, intervals per "
        f"comparison; an odds ratio above 1 means A is rated higher.{check}",
        label="tab:ordinal-contrasts", digits={"p": 4, f"p ({res.correction})": 4},
        notes=res.warnings)
    return {f"ordinal_{criterion}": coef, f"ordinal_contrasts_{criterion}": contrasts}


def bradley_terry_table(res: BradleyTerryResult, *, criterion: str = "") -> PaperTable:
    """Bradley-Terry strengths with bootstrap intervals and rank clusters.

    Examples
    --------
    >>> import pandas as pd
    >>> from nlgeval.human.pairwise import bradley_terry
    >>> o = pd.DataFrame({"system_a": ["A", "A", "B", "A"], "system_b": ["B", "B", "A", "B"],
    ...                   "outcome": [1, 1, -1, -1]})
    >>> bradley_terry_table(bradley_terry(o, n_resamples=0)).data["System"].tolist()
    ['A', 'B']
    """
    r = res.ranking
    data = pd.DataFrame({"Rank": r["rank"], "System": r["system"], "Strength": r["strength"],
                         f"{1 - res.alpha:.0%} CI": _ci_text(r["ci_low"], r["ci_high"]),
                         "Wins": r["wins"], "Losses": r["losses"], "Ties": r["ties"]})
    what = f" ({criterion})" if criterion else ""
    return PaperTable(
        data=data, caption=f"Bradley-Terry ranking{what} from {res.n_judgements} pairwise "
        f"judgements (log-odds strengths, mean 0; ties {res.ties}); percentile bootstrap "
        f"intervals over {res.resample} ({res.n_boot_used} replicates, seed {res.seed}); "
        f"systems sharing a rank are not separated at p <= {res.alpha:g} (WMT's rank-cluster "
        "rule).", label="tab:bradley-terry", digits=2, notes=res.warnings)


def sign_table(pairs: pd.DataFrame, *, criterion: str = "", correction: str = "holm",
               alpha: float = 0.05) -> PaperTable:
    """Per-pair sign tests of pairwise judgements.

    Examples
    --------
    >>> import pandas as pd
    >>> from nlgeval.human.pairwise import pairwise_outcomes, sign_tests
    >>> df = pd.DataFrame({"system": ["A"] * 4, "system_b": ["B"] * 4,
    ...                    "score": [1.0, 2.0, -1.0, 1.0]})
    >>> sign_table(sign_tests(pairwise_outcomes(df, scale=(-2, 2)))).data["A wins"].tolist()
    [3]
    """
    data = pd.DataFrame({
        "System A": pairs["system_a"], "System B": pairs["system_b"],
        "A wins": pairs["wins_a"], "B wins": pairs["wins_b"], "Ties": pairs["ties"],
        "p": pairs["pvalue"], f"p ({correction})": pairs["pvalue_adjusted"],
        "Effect (A - B) / n": pairs["effect_size"],
        f"{1 - alpha:.0%} CI": _ci_text(pairs["effect_size_low"], pairs["effect_size_high"]),
        "Preferred": pairs["higher"], "Significant": pairs["significant"]})
    what = f" ({criterion})" if criterion else ""
    return PaperTable(
        data=data, caption=f"Sign tests on pairwise judgements{what} (ties dropped), "
        f"{correction} correction over {len(pairs)} pairs; effect = (wins A - wins B) / "
        "(wins A + wins B), Clopper-Pearson interval per comparison.",
        label="tab:sign-tests", digits={"p": 4, f"p ({correction})": 4},
        notes=tuple(pairs.attrs.get("warnings", ())))
