import pytest

from gmbtools.data.naming import (element_bytes, numeric_params, split_name, strip_suffixes,
                             to_number, type_and_op)


def test_contract_example_with_params():
    name = split_name("copy/f32x4/ilp:4/grid:persistent")
    assert (name.name, name.family, name.variant) == (
        "copy/f32x4/ilp:4/grid:persistent", "copy", "f32x4")
    assert name.params == {"ilp": "4", "grid": "persistent"}


def test_name_without_params():
    name = split_name("ref/memcpy_d2d")
    assert (name.family, name.variant, name.params) == ("ref", "memcpy_d2d", {})


def test_bare_components_after_the_variant_stay_in_the_variant():
    name = split_name("stride/f32/read/s:8/manual_time")
    assert (name.family, name.variant, name.params) == ("stride", "f32/read", {"s": "8"})


def test_value_may_contain_colons():
    assert split_name("aos/p12/field:a:b").params == {"field": "a:b"}


@pytest.mark.parametrize(
    "suffix",
    [
        "/manual_time",
        "/real_time",
        "/process_time",
        "/repeats:5",
        "/iterations:100",
        "/min_time:0.500",
        "/min_warmup_time:1.000",
        "/threads:2",
        "/process_time/manual_time",
        "/min_time:0.500/min_warmup_time:0.100/iterations:10/repeats:3/manual_time/threads:1",
    ],
)
def test_google_benchmark_suffixes_are_stripped(suffix):
    name = split_name("copy/f32x4/ilp:4" + suffix)
    assert name.name == "copy/f32x4/ilp:4"
    assert name.params == {"ilp": "4"}


def test_name_as_the_harness_registers_it():
    # MinTime() and UseManualTime() in benchmarks/harness/harness.cu, then the median aggregate.
    name = split_name("copy/f32x4/ilp:4/min_time:0.050/manual_time_median", "median")
    assert (name.name, name.params) == ("copy/f32x4/ilp:4", {"ilp": "4"})


def test_gb_components_inside_the_name_are_kept():
    # Only Google Benchmark's trailing additions are stripped.
    assert strip_suffixes("copy/f32/threads:256/ilp:2/manual_time") == "copy/f32/threads:256/ilp:2"


@pytest.mark.parametrize("aggregate", ["mean", "median", "stddev", "cv"])
def test_standard_aggregate_suffixes(aggregate):
    raw = f"copy/f32x4/ilp:4/manual_time_{aggregate}"
    assert strip_suffixes(raw) == "copy/f32x4/ilp:4"
    assert strip_suffixes(raw, aggregate) == "copy/f32x4/ilp:4"


def test_user_defined_aggregate_needs_its_name():
    assert strip_suffixes("read/f32/manual_time_p90", "p90") == "read/f32"
    assert strip_suffixes("read/f32/manual_time_p90") == "read/f32/manual_time_p90"


def test_only_the_given_aggregate_is_stripped():
    assert strip_suffixes("ref/memcpy_d2d_mean", "mean") == "ref/memcpy_d2d"
    assert strip_suffixes("ref/memcpy_d2d", "mean") == "ref/memcpy_d2d"
    assert strip_suffixes("ref/memcpy_d2d") == "ref/memcpy_d2d"


def test_aggregate_then_gb_suffix():
    name = split_name("ref/memset/repeats:5/manual_time_median", "median")
    assert (name.name, name.family, name.variant) == ("ref/memset", "ref", "memset")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4", 4), ("-2", -2), ("0.5", 0.5), ("1e3", 1000.0), (".25", 0.25)],
)
def test_to_number_converts_plain_numbers(text, expected):
    value = to_number(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text", ["persistent", "64M", "nan", "inf", "1_000", "", "0x10"])
def test_to_number_keeps_other_text(text):
    assert to_number(text) == text


def test_numeric_params():
    params = split_name("copy/f32x4/ilp:4/grid:persistent/frac:0.5").params
    assert numeric_params(params) == {"ilp": 4, "grid": "persistent", "frac": 0.5}


@pytest.mark.parametrize(("variant", "expected"), [
    ("f32/read", ("f32", "read")), ("f32x4", ("f32x4", None)), ("memcpy_d2d", ("memcpy_d2d", None)),
    ("f64/both/x", ("f64", "both/x"))])
def test_type_and_op(variant, expected):
    assert type_and_op(variant) == expected


@pytest.mark.parametrize(("type_", "size"), [
    ("f32", 4), ("f64", 8), ("f32x2", 8), ("f32x4", 16), ("w1", 1), ("w16", 16), ("s8", 8),
    ("p12", 12), ("a12", 16), ("s64", 64), ("memset", None), ("f16", None)])
def test_element_bytes(type_, size):
    assert element_bytes(type_) == size
