#pragma once
// The host-side front end of the pattern/ family: the user types a C++ expression for the element
// index that thread i touches, later compiled by NVRTC. validate_pattern_expr refuses, in one line
// with a column, what NVRTC would report late, badly or not at all (unknown names, assignments,
// floats); the grammar proper is NVRTC's. pattern_name_part makes it a benchmark name part.
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmb {

struct pattern_expr_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kPatternVariables[] = {"i", "lane", "warp", "tid", "block", "k", "n"};
inline constexpr const char* kPatternFunctions[] = {"min", "max"};
inline constexpr std::size_t kPatternMaxLength = 1000;

/// Throws pattern_expr_error (one line, with a 1-based column) for what an index expression may
/// not hold; a tokenizer with parenthesis tracking, not a parser: NVRTC judges the grammar.
inline void validate_pattern_expr(const std::string& expr) {
  const auto fail = [](const std::string& what, std::size_t pos, const std::string& tail = "") {
    throw pattern_expr_error(what + " at column " + std::to_string(pos + 1) + tail);
  };
  const auto in = [](const std::string& word, const auto& list) {
    for (const char* w : list)
      if (word == w) return true;
    return false;
  };
  // <cctype> on a negative char (a UTF-8 byte) is undefined: always through unsigned char.
  const auto u = [](char c) { return static_cast<unsigned char>(c); };
  const auto is_ident = [&](char c) { return std::isalnum(u(c)) || c == '_'; };
  if (expr.size() > kPatternMaxLength)
    throw pattern_expr_error("expression is " + std::to_string(expr.size()) +
                             " characters long; at most " + std::to_string(kPatternMaxLength) +
                             " are allowed");
  if (expr.find_first_not_of(" \t\n\r\f\v") == std::string::npos)
    throw pattern_expr_error("empty expression: type the index that thread i touches, e.g. i * 8");

  struct open_paren {
    std::size_t pos;
    bool call;  // the argument list of min/max, the only place a ',' may be
  };
  std::vector<open_paren> parens;
  bool call_next = false;  // a function name was read: the next token is its '(' (checked)
  const auto at = [&](std::size_t p) { return p < expr.size() ? expr[p] : '\0'; };
  for (std::size_t pos = 0; pos < expr.size();) {
    const char c = expr[pos];
    const std::size_t start = pos;
    if (std::isspace(u(c))) {
      ++pos;
    } else if (std::isalpha(u(c)) || c == '_') {
      while (is_ident(at(pos))) ++pos;
      const std::string word = expr.substr(start, pos - start);
      std::size_t next = pos;
      while (std::isspace(u(at(next)))) ++next;
      if (in(word, kPatternFunctions)) {
        if (at(next) != '(') fail("function '" + word + "' must be followed by '('", start);
        call_next = true;
      } else if (in(word, kPatternVariables)) {
        if (at(next) == '(') fail("variable '" + word + "' is not a function", start);
      } else {
        std::string known = " (variables:";
        for (const char* v : kPatternVariables) known += std::string(" ") + v;
        known += "; functions:";
        for (const char* f : kPatternFunctions) known += std::string(" ") + f;
        fail("unknown name '" + word + "'", start, known + ")");
      }
    } else if (std::isdigit(u(c))) {
      // The digits of the literal's base; whatever is glued to them must be an integer suffix.
      const char base = c != '0' ? 'd' : static_cast<char>(std::tolower(u(at(pos + 1))));
      const bool prefixed = base == 'x' || base == 'b';
      bool digits = true;
      if (prefixed) {
        pos += 2;
        while (base == 'x' ? std::isxdigit(u(at(pos))) : at(pos) == '0' || at(pos) == '1') ++pos;
        digits = pos > start + 2;
      } else {
        while (std::isdigit(u(at(pos)))) ++pos;
        digits = c != '0' || expr.find_first_of("89", start) >= pos;  // octal
      }
      const char e = static_cast<char>(std::tolower(u(at(pos)))), sign = at(pos + 1);
      if (e == '.' || (base == 'x' && e == 'p') ||
          (!prefixed && e == 'e' && (std::isdigit(u(sign)) || sign == '+' || sign == '-')))
        fail("floating-point literal", start, ": indices are integers");
      const std::size_t suffix_start = pos;
      while (is_ident(at(pos))) ++pos;
      std::string suffix = expr.substr(suffix_start, pos - suffix_start);
      // u or U at either end of l, L, ll or LL (never lL): u, ul, ull, lu, llu, LLU ...
      if (!suffix.empty() && (suffix.front() == 'u' || suffix.front() == 'U'))
        suffix.erase(0, 1);
      else if (!suffix.empty() && (suffix.back() == 'u' || suffix.back() == 'U'))
        suffix.pop_back();
      if (!digits ||
          !(suffix.empty() || suffix == "l" || suffix == "L" || suffix == "ll" || suffix == "LL"))
        fail("invalid integer literal '" + expr.substr(start, pos - start) + "'", start);
    } else if (c == '.') {
      fail("'.'", start, ": no floating-point literals, indices are integers");
    } else if (c == '(') {
      parens.push_back({pos++, call_next});
      call_next = false;
    } else if (c == ')') {
      if (parens.empty()) fail("unmatched ')'", start, " (no '(' open)");
      parens.pop_back();
      ++pos;
    } else if (c == ',') {
      if (parens.empty() || !parens.back().call)
        fail("',' outside the arguments of min/max", start);
      ++pos;
    } else if (std::string("+-*/%<>=!&|^~?:").find(c) != std::string::npos) {
      // The longest C++ operator here, as C++ reads it; those that assign are refused.
      const char c1 = at(pos + 1);
      std::size_t len = 1;
      if ((c == '<' || c == '>') && c1 == c)
        len = at(pos + 2) == '=' ? 3 : 2;
      else if (c1 == c && (c == '+' || c == '-' || c == '&' || c == '|'))
        len = 2;
      else if (c1 == '=' && c != '~' && c != '?' && c != ':')
        len = 2;
      const std::string op = expr.substr(pos, len);
      const bool compares = op == "==" || op == "!=" || op == "<=" || op == ">=";
      if (op == "=" || op == "++" || op == "--" || (op.back() == '=' && len > 1 && !compares))
        fail("'" + op + "'", start, ": the expression may not assign");
      pos += len;
    } else {
      char shown[32];
      std::snprintf(shown, sizeof(shown), std::isprint(u(c)) ? "character '%c'" : "byte 0x%02x",
                    u(c));
      fail(std::string(shown) + " not allowed", start);
    }
  }
  if (!parens.empty()) fail("unmatched '('", parens.back().pos, " (never closed)");
}

/// The expression as one part of a benchmark name (no '/', ':' or space there): blanks removed,
/// '/' written U+00F7 '÷' and ':' U+00A6 '¦' (as UTF-8 bytes, whatever the compiler's charset).
inline std::string pattern_name_part(const std::string& expr) {
  validate_pattern_expr(expr);
  std::string part;
  for (const char c : expr) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    part += c == '/' ? "\xC3\xB7" : c == ':' ? "\xC2\xA6" : std::string(1, c);
  }
  return part;
}

}  // namespace gmb
