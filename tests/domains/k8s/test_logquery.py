"""The Datadog-style query of `search_logs` (`domains/k8s/logquery.py`): what each term matches, every malformed
query's message, and hostile input (long strings, many terms, quotes) that must end in a clear error or a match,
never in a crash."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sredrill.domains.k8s.logquery import MAX_QUERY_CHARS, MAX_TERMS, LogFields, Term, parse_query

RECORD = LogFields.build(
    'GET /v1/ledger 503: upstream "ledger-db" connection refused',
    {"service": "ledger-api", "host": "ledger-api-7d9-abcde", "status": "warning"},
    ("env:prod", "kube_pod:ledger-api-7d9-abcde", "kube_namespace:payments", "flag", "version:4.12.3"),
)


def matches(query: str) -> bool:
    return parse_query(query).matches(RECORD)


def test_terms_parse_into_keys_values_and_negations() -> None:
    query = parse_query('service:Ledger-API -status:error "Connection Refused" NOT 404 kube_pod:"a b"')
    assert query.terms == (
        Term("ledger-api", "service"),
        Term("error", "status", negated=True),
        Term("connection refused"),
        Term("404", negated=True),
        Term("a b", "kube_pod"),
    )
    assert parse_query("").terms == () and parse_query("  *  AND ").terms == ()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("service:ledger-api", True),
        ("service:ledger", False),  # a value matches whole, not in part
        ("service:ledger*", True),
        ("host:*-abcde", True),
        ("status:warn", True),  # the record's "warning" is Datadog's warn
        ("status:warning", True),
        ("kube_pod:ledger-api-7d9-abcde", True),
        ("kube_namespace:PAYMENTS", True),
        ("env:staging", False),
        ("version:4.*.3", True),
        ("version:4.*.4", False),
        ("flag:x", False),  # a tag without a value has no key to match
        ("missing:thing", False),
        ("refused", True),
        ("REFUSED", True),
        ("conn*refused", True),
        ("refused*conn", False),
        ('"connection refused"', True),
        ('"refused connection"', False),
        (r'"upstream \"ledger-db\""', True),
        ("503: -404", False),  # `503:` is a key without a value: an error, tested below
        ("refused -timeout", True),
        ("refused -upstream", False),
        ("-service:checkout", True),
        ("NOT service:ledger-api", False),
        ("refused AND upstream", True),
        ("*", True),
    ],
)
def test_what_a_query_matches(query: str, expected: bool) -> None:
    if query.startswith("503:"):
        with pytest.raises(ValueError, match="has no value"):
            parse_query(query)
        return
    assert matches(query) is expected


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ('"connection refused', "unbalanced quote: the '\"' at position 0 is never closed"),
        ('service:"ledger', "unbalanced quote: the '\"' at position 8 is never closed"),
        ("service:", "'service:' at position 0 has no value: write service:value"),
        (":ledger", "':ledger' at position 0 has no key: write key:value"),
        ("refused -", "a lone '-' at position 8 negates nothing"),
        ("- refused", "a lone '-' at position 0 negates nothing"),
        ("a OR b", "OR (at position 2) is not supported: terms are ANDed; make one call per alternative"),
        ("service:(a b)", "parentheses (at position 8) are not supported"),
        ('con"nection', "a quote inside a word at position 3"),
        ('""', 'an empty phrase "" at position 0'),
        ("refused NOT", "ends with NOT, which negates nothing"),
        ("NOT NOT x", "NOT NOT at position 4"),
        ("-*", "excludes every record"),
        ("x" * (MAX_QUERY_CHARS + 1), f"is {MAX_QUERY_CHARS + 1} characters long; at most {MAX_QUERY_CHARS}"),
        (" ".join(["w"] * (MAX_TERMS + 1)), f"has more than {MAX_TERMS} terms"),
    ],
)
def test_malformed_queries_say_how_to_fix_them(query: str, says: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_query(query)
    assert says in str(info.value)


@pytest.mark.parametrize(
    "query",
    [
        "a" * MAX_QUERY_CHARS,  # one long word: fine
        "*" * MAX_QUERY_CHARS,
        "a*" * (MAX_QUERY_CHARS // 2),
        "k:" + "*a" * ((MAX_QUERY_CHARS - 2) // 2),
        '"' + "x " * ((MAX_QUERY_CHARS - 2) // 2) + '"',
        " ".join(['"a b"'] * MAX_TERMS),
        " ".join(["-k:v"] * MAX_TERMS),
        "\t\n ".join(["x"] * MAX_TERMS),
        "naïve ünïcode:välue",
    ],
)
def test_hostile_but_valid_queries_parse_and_match(query: str) -> None:
    # A long record too: matching walks each term over it once.
    record = LogFields.build("a" * 100_000, {"service": "s"}, tuple(f"k:{'a' * 1000}{i}" for i in range(50)))
    parsed = parse_query(query)
    assert isinstance(parsed.matches(record), bool) and isinstance(parsed.matches(RECORD), bool)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab :"-*()\\\tNOTR')), max_size=60) | st.text(max_size=80))
def test_any_text_parses_or_fails_with_a_value_error(query: str) -> None:
    try:
        parsed = parse_query(query)
    except ValueError as exc:
        assert str(exc)  # a message, never an empty error
        return
    assert isinstance(parsed.matches(RECORD), bool)


def test_an_error_quotes_a_long_word_only_in_part() -> None:
    with pytest.raises(ValueError) as info:
        parse_query("k" * 900 + ":")
    assert len(str(info.value)) < 400 and "k" * 59 + "…" in str(info.value)
