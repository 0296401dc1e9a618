#include "kestrel/core/text.h"

#include <algorithm>
#include <numeric>

namespace kestrel {

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

std::string counted(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the one before last (for transpositions), last, this.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  std::iota(last.begin(), last.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    before.swap(last);
    last.swap(row);
  }
  return last[b.size()];
}

std::size_t misspelling_distance(std::string_view word) {
  return word.size() <= 5 ? 1 : word.size() <= 9 ? 2 : 3;
}

namespace {

template <class Range>
std::string closest(std::string_view word, const Range& candidates) {
  const std::size_t limit = misspelling_distance(word);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d > 0 && d < best_distance) {
      best = std::string(c);
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

std::string closest_match(std::string_view word, std::span<const std::string> candidates) {
  return closest(word, candidates);
}

std::string closest_match(std::string_view word,
                          std::initializer_list<std::string_view> candidates) {
  return closest(word, candidates);
}

}  // namespace kestrel
