// The pattern/ family's index expressions: what the front end accepts, refuses (one line, naming
// the problem and its column) and how an expression appears in a benchmark name. No GPU.
#include "gmb/pattern_expr.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "gmb/naming.hpp"

namespace gmb {
namespace {

/// The message validate_pattern_expr throws for `expr`, or "" when it accepts it.
std::string refusal(const std::string& expr) {
  try {
    validate_pattern_expr(expr);
  } catch (const pattern_expr_error& e) {
    return e.what();
  }
  return "";
}

/// Expects `expr` refused with a one-line message that contains every one of `words`.
void expect_refused(const std::string& expr, std::initializer_list<const char*> words) {
  SCOPED_TRACE(expr);
  EXPECT_THROW(validate_pattern_expr(expr), pattern_expr_error);
  const std::string message = refusal(expr);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const char* word : words) EXPECT_NE(message.find(word), std::string::npos) << message;
}

TEST(PatternExpr, AcceptsIndexExpressions) {
  for (const char* expr :
       {"i", "i + 1", "i * 8", "(i % 32) * 32 + i / 32", "n - 1 - i", "(i * 2654435761u) % n",
        "lane * 33 + warp * 32 * 33", "min(i, n - 1)", "i < 5 ? i : 0", "0x10 + i", "i >> 2 << 3",
        "(tid + block * 256) * 2 + k"}) {
    EXPECT_NO_THROW(validate_pattern_expr(expr)) << expr << ": " << refusal(expr);
  }
}

TEST(PatternExpr, AcceptsIntegerLiteralsAndComparisons) {
  for (const char* expr : {"0",
                           "017 + i",
                           "0b101 * i",
                           "0XfF",
                           "1u",
                           "1U",
                           "1l",
                           "1LL",
                           "1ul",
                           "1ull",
                           "1lu",
                           "1llu",
                           "1ULL",
                           "0x10ull",
                           "i == 1",
                           "i != 1",
                           "i <= 1",
                           "i >= 1",
                           "!i && ~i || i ^ 1",
                           "max(min(i, k), (n - 1))",
                           "max(i,\tk)",
                           "min (i, k)",
                           "-i",
                           "i - -1",
                           "i + +1"}) {
    EXPECT_NO_THROW(validate_pattern_expr(expr)) << expr << ": " << refusal(expr);
  }
}

TEST(PatternExpr, Names) {
  EXPECT_EQ(pattern_name_part("i"), "i");
  EXPECT_EQ(pattern_name_part("i * 8"), "i*8");
  EXPECT_EQ(pattern_name_part("(i % 32) * 32 + i / 32"),
            "(i%32)*32+i\xC3\xB7"
            "32");
  EXPECT_EQ(pattern_name_part("i < 5 ? i : 0"),
            "i<5?i\xC2\xA6"
            "0");
  EXPECT_EQ(pattern_name_part(" min(i, n - 1) "), "min(i,n-1)");
  // A valid part of the naming contract.
  EXPECT_NO_THROW(bench_name("pattern", "f32/read", {{"e", pattern_name_part("i / 2 ? i : 1")}}));
  EXPECT_THROW(pattern_name_part("i += 1"), pattern_expr_error);
}

TEST(PatternExpr, RefusesEmptyAndOverlong) {
  expect_refused("", {"empty"});
  expect_refused("  \t ", {"empty"});
  expect_refused(std::string(1001, 'i'), {"1000"});
  std::string longest = "i";
  while (longest.size() < 1000) longest += " ";
  EXPECT_NO_THROW(validate_pattern_expr(longest));
}

TEST(PatternExpr, RefusesCharacters) {
  expect_refused("i; i", {"';'", "column 2"});
  expect_refused("i[2]", {"'['", "column 2"});
  expect_refused("i + \"a\"", {"'\"'", "column 5"});
  expect_refused("i \xC3\xB7 2", {"0xc3", "column 3"});
}

TEST(PatternExpr, RefusesUnknownNames) {
  expect_refused("i + x", {"unknown name 'x'", "column 5",
                           "(variables: i lane warp tid block k n; functions: min max)"});
  expect_refused("threadIdx + i", {"unknown name 'threadIdx'", "column 1"});
  expect_refused("i2", {"unknown name 'i2'"});
  expect_refused("sizeof(i)", {"unknown name 'sizeof'"});
}

TEST(PatternExpr, RefusesCallsOfVariablesAndBareFunctions) {
  expect_refused("min + i", {"function 'min'", "'('", "column 1"});
  expect_refused("i + max", {"function 'max'", "column 5"});
  expect_refused("i(2)", {"variable 'i'", "not a function", "column 1"});
  expect_refused("2 * n (3)", {"variable 'n'", "column 5"});
}

TEST(PatternExpr, RefusesFloatingLiterals) {
  expect_refused("i * 1.5", {"integers", "column 5"});
  expect_refused(".5 + i", {"integers", "column 1"});
  expect_refused("i * 2.", {"integers"});
  expect_refused("i * 1e3", {"integers", "column 5"});
  expect_refused("i * 1E-3", {"integers"});
  expect_refused("0x1p3 + i", {"integers"});
}

TEST(PatternExpr, RefusesMalformedIntegerLiterals) {
  expect_refused("3x", {"'3x'", "column 1"});
  expect_refused("i + 2i", {"'2i'", "column 5"});
  expect_refused("09", {"'09'"});
  expect_refused("0x", {"'0x'"});
  expect_refused("0b2", {"'0b2'"});
  expect_refused("1uu", {"'1uu'"});
  expect_refused("1lL", {"'1lL'"});
  expect_refused("1lul", {"'1lul'"});
  expect_refused("1f", {"'1f'"});
}

TEST(PatternExpr, RefusesAssignment) {
  for (const char* expr : {"i = 1", "i += 1", "i -= 1", "i *= 2", "i /= 2", "i %= 2", "i &= 1",
                           "i |= 1", "i ^= 1", "i <<= 1", "i >>= 1", "i++", "--i", "i == = 1"}) {
    expect_refused(expr, {"may not assign"});
  }
  expect_refused("k + (i = 3)", {"'='", "column 8"});
}

TEST(PatternExpr, RefusesUnbalancedParentheses) {
  expect_refused("(i + 1", {"unmatched '('", "column 1"});
  expect_refused("max(i, (k + 1)", {"unmatched '('", "column 4"});
  expect_refused("i + 1)", {"unmatched ')'", "column 6"});
  expect_refused(")(", {"unmatched ')'", "column 1"});
}

TEST(PatternExpr, RefusesCommasOutsideMinMax) {
  expect_refused("i, k", {"','", "min/max", "column 2"});
  expect_refused("(i, k)", {"','", "column 3"});
  expect_refused("min((i, k), n)", {"','", "column 7"});
  expect_refused("min(i, (k, n))", {"','", "column 10"});
}

}  // namespace
}  // namespace gmb
