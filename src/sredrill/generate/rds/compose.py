"""One generated scenario from its sub-seed: difficulty, faults, confounder, the invariant, and its files.

Everything a scenario draws comes from its own `random.Random`, in a fixed order; each fault and the
confounder draw from their own seeds (taken from it first), so lowering a fault's magnitude to keep the
confounder at least as anomalous changes nothing else.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from dataclasses import dataclass
from typing import Any

from .benign import build_world, heavy_reader
from .confounders import (
    CONFOUNDER_METRICS,
    CONFOUNDERS,
    RECOVERED,
    Confounder,
    benign_blip,
    healthy_selectors,
    where,
)
from .faults import FAULT_METRICS, FAULTS, MAIN_SYMPTOM, AlertSpec, Injected, instance_of
from .fleet import build_fleet
from .render import dump_json, dump_yaml, iso, render_evidence
from .series import Shape
from .world import MINUTES, World

__all__ = ["VERSION", "cause_score", "confounder_score", "difficulty_of", "scenario", "sub_seed"]

VERSION = "rds-3"
_SALT = "rds-1"
"""The draws' salt, kept across versions: scenario i of seed S stays the same incident when a version changes
only how it is rendered or keyed (rds-2: decisive items and a heavy reader from difficulty 2; rds-3: a recovered
incident's level is stated over the minutes before the alert)."""
_SHAPES = (Shape.STEP, Shape.RAMP, Shape.CREEP)
_CATEGORY = {"failover": "infrastructure"}
_TRIES = 12


def sub_seed(*parts: object) -> int:
    """The first 8 bytes of sha256 of `rds-1:part:part…`, as an integer."""
    text = ":".join((_SALT, *map(str, parts)))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def difficulty_of(seed: int, index: int, levels: tuple[int, ...]) -> int:
    """Scenario `index`'s difficulty: position `index mod k` of a permutation of the k levels drawn per block."""
    k = len(levels)
    order = list(levels)
    random.Random(sub_seed(seed, "block", index // k)).shuffle(order)
    return order[index % k]


def cause_score(w: World, modes: list[str], locations: list[tuple[str, ...]]) -> float:
    """The largest anomaly score among the causes' effect series on their locations (docs/generator.md)."""
    return max(
        (
            w.score(instance_of(w, name), metric)
            for mode, loc in zip(modes, locations, strict=True)
            for name in loc
            for metric in FAULT_METRICS[mode]
        ),
        default=0.0,
    )


def confounder_score(w: World, c: Confounder) -> float:
    return max(w.score(instance_of(w, c.resource), m) for m in CONFOUNDER_METRICS[c.mode])


@dataclass(slots=True)
class _Draw:
    difficulty: int
    modes: list[str]
    """The causes (empty: healthy)."""
    recovered: str | None
    confounder: bool


def _draw(rng: random.Random, difficulty: int, allowed: tuple[str, ...]) -> _Draw:
    faults = [m for m in allowed if m != "healthy"]
    if difficulty == 4:
        pairs = [(a, b) for i, a in enumerate(faults) for b in faults[i + 1 :] if _pairable(a, b)]
        a, b = rng.choice(pairs)
        return _Draw(4, [a, b], None, True)
    mode = rng.choice(allowed)
    if mode != "healthy":
        return _Draw(difficulty, [mode], None, difficulty >= 2)
    if difficulty == 3:
        return _Draw(3, [], rng.choice(tuple(RECOVERED)), True)
    return _Draw(difficulty, [], None, difficulty >= 2)


_UNREACHABLE = frozenset({("checkpoint_io_storm", "connection_exhaustion")})
"""Pairs no confounder can reach: with both modes taken, the rest (a report's CPU, a lagging replica, a storage
dip) fall short of connections at their limit in most fleets (measured), so the pair is not drawn."""


def _pairable(a: str, b: str) -> bool:
    """Two faults of one category (a diagnosis names one category) that a confounder can out-score."""
    same = _CATEGORY.get(a, "resource_exhaustion") == _CATEGORY.get(b, "resource_exhaustion")
    return same and tuple(sorted((a, b))) not in _UNREACHABLE


def pairs_possible(allowed: tuple[str, ...]) -> bool:
    faults = [m for m in allowed if m != "healthy"]
    return any(_pairable(a, b) for i, a in enumerate(faults) for b in faults[i + 1 :])


@dataclass(slots=True)
class _Built:
    world: World
    injected: list[Injected]
    confounder: Confounder | None
    recovered: Confounder | None
    alert: AlertSpec


def _build(rng: random.Random, draw: _Draw) -> _Built:
    for _ in range(_TRIES):
        base = build_world(rng, build_fleet(rng))
        seeds = [rng.getrandbits(64) for _ in draw.modes]
        us = [rng.random() for _ in draw.modes]
        shapes = [rng.choice(_SHAPES) for _ in draw.modes]
        kinds = [m for m in CONFOUNDERS if m not in draw.modes and m != draw.recovered]
        if draw.difficulty == 3 and draw.modes:
            kinds = [k for k in kinds if MAIN_SYMPTOM[draw.modes[0]] not in CONFOUNDER_METRICS[k]]
        rng.shuffle(kinds)
        conf_seed, rec_seed, v0 = rng.getrandbits(64), rng.getrandbits(64), rng.random()
        if not draw.confounder:
            w = base.copy()
            injected = [
                FAULTS[m](random.Random(s), w, u, sh) for m, s, u, sh in zip(draw.modes, seeds, us, shapes, strict=True)
            ]
            alert = injected[0].alert if injected else benign_blip(random.Random(conf_seed), w)
            return _Built(w, injected, None, None, alert)
        for kind in kinds:
            u_now, v = list(us), v0
            for _step in range(6):
                w = base.copy()
                recovered = RECOVERED[draw.recovered](random.Random(rec_seed), w) if draw.recovered else None
                injected = [
                    FAULTS[m](random.Random(s), w, u, sh)
                    for m, s, u, sh in zip(draw.modes, seeds, u_now, shapes, strict=True)
                ]
                if draw.difficulty == 3 and injected:
                    w.missing.add(MAIN_SYMPTOM[injected[0].mode])
                crng = random.Random(conf_seed)
                conf = CONFOUNDERS[kind](crng, w, v, where(crng, w, kind))
                cause = cause_score(w, [i.mode for i in injected], [i.location for i in injected])
                if confounder_score(w, conf) >= cause:
                    return _Built(w, injected, conf, recovered, _alert(draw, injected, conf, recovered, w))
                u_now = [u * 0.5 for u in u_now]
                v = v + (1 - v) * 0.5
        # No confounder kind reached the cause on this fleet: draw another fleet (the draw goes on).
    raise RuntimeError(f"generator {VERSION}: no confounder at least as anomalous as {draw.modes} in {_TRIES} fleets")


def _alert(
    draw: _Draw, injected: list[Injected], conf: Confounder, recovered: Confounder | None, w: World
) -> AlertSpec:
    near = {w.fleet.primary.name, w.fleet.replica.name}
    if recovered is not None:
        return recovered.alert
    if not injected:
        return conf.alert
    if draw.difficulty == 2:
        return injected[0].alert
    return conf.alert if conf.resource in near else injected[0].secondary


def scenario(
    seed: int, index: int, difficulty: int, allowed: tuple[str, ...], width: int = 3
) -> tuple[str, dict[str, bytes]]:
    """Scenario `index` of seed `seed`: its folder name and files."""
    rng = random.Random(sub_seed(seed, index))
    draw = _draw(rng, difficulty, allowed)
    built = _build(rng, draw)
    if difficulty >= 2:
        heavy_reader(random.Random(sub_seed(seed, index, "reader")), built.world)
    folder = f"{index:0{width}d}-{built.world.fleet.primary.app.name}"
    files = render_evidence(built.world, random.Random(rng.getrandbits(64)))
    files["alert.json"] = dump_json(_alert_file(built.world, built.alert, rng))
    files["scenario.yml"] = dump_yaml(_metadata(folder, built, draw, rng))
    files["answer.yml"] = dump_yaml(_answer(built, draw))
    return folder, dict(sorted(files.items()))


def _alert_file(w: World, a: AlertSpec, rng: random.Random) -> dict[str, Any]:
    inst = instance_of(w, a.resource)
    values = w.series(inst, a.metric) if a.metric not in w.missing else [0.0] * MINUTES
    threshold = a.threshold
    if threshold == 0:
        m = statistics.median(values[:60])
        threshold = m * 2 if a.comparison.startswith("Greater") else m / 2
    current = values[min(MINUTES - 1, w.alert_at)]
    if a.comparison.startswith("Greater"):
        current = max(current, max(values[60 : w.alert_at + 1]))
    else:
        current = min(current, min(values[60 : w.alert_at + 1]))
    word = "above" if a.comparison.startswith("Greater") else "below"
    p = w.fleet.primary
    return {
        "title": f"{a.metric} {word} {threshold:g} on {a.resource}",
        "state": "alerting",
        "alert_source": "cloudwatch",
        "startsAt": iso(w.start + _minutes(w.alert_at)),
        "commonLabels": {
            "alertname": f"RDS{a.metric}{'High' if word == 'above' else 'Low'}",
            "severity": rng.choice(("critical", "warning")),
            "service": "rds",
            "engine": "postgres",
            "team": rng.choice(("platform-db", "data-infra", "sre")),
            "region": w.fleet.region,
        },
        "commonAnnotations": {
            "summary": a.summary,
            "description": rng.choice(
                (
                    f"{p.app.name} requests are slower than usual.",
                    f"The {p.app.name} on-call was paged.",
                    "Paged by the CloudWatch alarm.",
                )
            ),
            "db_instance_identifier": p.name,
            "metric_name": a.metric,
            "statistic": "Average",
            "threshold": f"{threshold:g}",
            "comparison": f"{a.comparison}",
            "current_value": f"{current:.6g}",
            "cloudwatch_region": w.fleet.region,
            "read_replica": w.fleet.replica.name,
            "alarm_resource": a.resource,
        },
    }


def _minutes(n: int) -> Any:
    from datetime import timedelta

    return timedelta(minutes=n)


def _metadata(folder: str, b: _Built, draw: _Draw, rng: random.Random) -> dict[str, Any]:
    w = b.world
    p = w.fleet.primary
    modes = [i.mode for i in b.injected] or ["healthy"]
    signals = [b.confounder.signal] if b.confounder else []
    if w.missing:
        signals.append(f"{', '.join(sorted(w.missing))} is missing from the metrics")
    return {
        "schema_version": "1.0",
        "scenario_id": folder,
        "engine": "postgres",
        "engine_version": rng.choice(("16.3", "16.4", "16.6", "16.8")),
        "instance_class": p.klass,
        "region": w.fleet.region,
        "db_instance_identifier": p.name,
        "db_cluster": "",
        "failure_mode": modes[0],
        "severity": "critical" if b.injected else "warning",
        "scenario_difficulty": draw.difficulty,
        "adversarial_signals": signals,
        "available_evidence": [
            "aws_cloudwatch_metrics",
            "aws_rds_events",
            "aws_performance_insights",
            "aws_rds_postgresql_log",
        ],
        "fleet": [i.name for i in w.fleet.instances if i is not p],
    }


def _answer(b: _Built, draw: _Draw) -> dict[str, Any]:
    w = b.world
    conf, rec = b.confounder, b.recovered
    modes = [i.mode for i in b.injected]
    decisive: dict[str, list[dict[str, Any]]] = {}
    for i in b.injected:
        decisive[i.mode] = [*i.decisive, *(i.symptom if draw.difficulty == 1 else [])]
    sources: list[str] = []
    tools = ["get_alert"]
    queries: list[str] = []
    keywords: list[str] = []
    for i in b.injected:
        sources += i.sources
        tools += i.tools
        queries += [q for q in i.queries if q not in w.missing]
        keywords.append(i.keyword)
    if not modes:
        # From difficulty 2 what backs "healthy" is what explains the alert (the recovery, the benign change), as
        # a level held over a window: a trend or the primary's quiet series is what an agent told "healthy" cites.
        explained = rec or conf
        decisive["healthy"] = (
            [_during(w, s) for s in _levels(explained.refuting)]
            if draw.difficulty >= 2 and explained
            else healthy_selectors(w)
        )
        sources += rec.sources if rec else ["aws_cloudwatch_metrics"]
        tools += ["list_metrics", "query_metrics"] + (["get_events"] if rec and "aws_rds_events" in rec.sources else [])
        queries.append("CPUUtilization")
        keywords.append(rec.keyword if rec else "normal")
    key: dict[str, Any] = {
        "root_cause_category": _CATEGORY.get(modes[0], "resource_exhaustion") if modes else "healthy",
        "failure_modes": modes or ["healthy"],
        "decisive": decisive,
        "required_keywords": list(dict.fromkeys(keywords)),
        "forbidden_keywords": [],
        "required_evidence_sources": list(dict.fromkeys(sources)),
        "optimal_trajectory": list(dict.fromkeys(tools)),
        "max_investigation_loops": 1 + draw.difficulty // 2,
    }
    if queries:
        key["required_queries"] = list(dict.fromkeys(queries))
    if modes:
        key["location"] = sorted({n for i in b.injected for n in i.location})
    forbidden: list[str] = []
    dismissed = [c for c in (rec, conf) if c is not None]
    if dismissed:
        key["ruled_out"] = [c.mode for c in dismissed]
        key["refuting"] = {c.mode: [_during(w, s) for s in c.refuting] for c in dismissed}
        forbidden += [c.mode for c in dismissed]
    if not modes:
        forbidden.append("resource_exhaustion")
    key["forbidden_categories"] = forbidden
    key["model_response"] = _response(b, key)
    return key


def _levels(selectors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The selectors with series facts narrowed to levels (`above`, `below`); a series with none is dropped."""
    out = []
    for s in selectors:
        if "metric" in s:
            shows = [f for f in s.get("shows", []) if f in ("above", "below")]
            if not shows:
                continue
            s = {**s, "shows": shows}
        out.append(s)
    return out


PEAK = 5
"""Minutes of the window a refuting level is stated over (`during`): the closest the series came to its bound."""


def _during(w: World, selector: dict[str, Any]) -> dict[str, Any]:
    """A level selector on a series with `during` its closest approach to the bound before the alert: the
    `PEAK` minutes, all within the bound, nearest to it. "Stayed below 90" is about the report, not a quiet hour."""
    metric, bound = selector.get("metric"), selector.get("below", selector.get("above"))
    if metric is None or bound is None or metric in w.missing:
        return selector
    below = "below" in selector
    values = w.series(instance_of(w, selector["resource"]), metric)[: w.alert_at + 1]
    if any(v > bound if below else v < bound for v in values):
        # A recovered incident crossed the bound: what refutes it is being back within it when the alert fires,
        # not the minutes before it crossed (rds-3).
        run = values[-PEAK:]
        if len(run) == PEAK and all(v <= bound if below else v >= bound for v in run):
            t0 = len(values) - PEAK
            return {**selector, "during": [iso(w.start + _minutes(t0)), iso(w.start + _minutes(t0 + PEAK - 1))]}
        return selector
    best: tuple[float, int] | None = None
    for t0 in range(len(values) - PEAK + 1):
        run = values[t0 : t0 + PEAK]
        if below and max(run) <= bound:
            score = max(run)
        elif not below and min(run) >= bound:
            score = -min(run)
        else:
            continue
        if best is None or score > best[0]:
            best = (score, t0)
    if best is None:
        return selector
    t0 = best[1]
    return {**selector, "during": [iso(w.start + _minutes(t0)), iso(w.start + _minutes(t0 + PEAK - 1))]}


def _response(b: _Built, key: dict[str, Any]) -> str:
    w = b.world
    conf, rec = b.confounder, b.recovered
    p = w.fleet.primary
    if b.injected:
        root = " ".join(i.root_cause for i in b.injected)
        claims = [c for i in b.injected for c in i.claims]
        chain = [i.chain for i in b.injected]
    elif rec is not None:
        root = f"There is no active incident on {p.name}: {rec.reason}; the alert is stale (recovered)."
        claims = [rec.claim]
        chain = ["a transient problem -> it recovered before the alert -> no action needed"]
    else:
        root = f"There is no incident on {p.name}: every signal stays within its normal range."
        claims = [
            (f"CPU, connections and storage on {p.name} stay within their normal range.", "aws_cloudwatch_metrics")
        ]
        chain = ["alert on a benign change -> signals checked -> nothing outside its normal range"]
    lines = [
        f"ROOT_CAUSE: {root}",
        f"ROOT_CAUSE_CATEGORY: {key['root_cause_category']}",
        f"FAILURE_MODES: {', '.join(key['failure_modes'])}",
    ]
    if key.get("location"):
        lines.append(f"LOCATION: {', '.join(key['location'])}")
    lines.append("VALIDATED_CLAIMS:")
    lines += [f"- {text} [evidence: {source}]" for text, source in claims]
    lines += ["NON_VALIDATED_CLAIMS: none", "CAUSAL_CHAIN:", *(f"- {c}" for c in chain)]
    dismissed = [c for c in (rec, conf) if c is not None]
    if dismissed:
        lines += ["RULED_OUT:", *(f"- {c.mode}: {c.reason} [evidence: {c.claim[1]}]" for c in dismissed)]
    return "\n".join(lines) + "\n"
