#pragma once
/// @file Small text helpers shared by the loader, the systems' parameter checks and the CLI:
/// trimming, and the "did you mean" suggestion for a misspelt name.

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

/// `s` without leading and trailing whitespace (space, tab, CR, LF).
std::string_view trim(std::string_view s);

/// "1 model", "0 models", "3 models": a count with its noun, plural unless one.
std::string counted(std::size_t n, std::string_view noun);

/// Optimal string alignment distance: insertions, deletions, substitutions and transpositions
/// of neighbours each cost 1 ("mas" → "mass" 1, "max_setp_size" → "max_step_size" 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The largest edit distance at which `word` is taken for a misspelling: 1 up to 5 characters,
/// 2 up to 9, 3 beyond.
std::size_t misspelling_distance(std::string_view word);

/// The candidate closest to `word` if it is within misspelling_distance(word) and differs from
/// it, else empty. Ties go to the first candidate.
std::string closest_match(std::string_view word, std::span<const std::string> candidates);
std::string closest_match(std::string_view word,
                          std::initializer_list<std::string_view> candidates);

}  // namespace kestrel
