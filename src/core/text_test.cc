#include "kestrel/core/text.h"

#include <gtest/gtest.h>

namespace kestrel {
namespace {

TEST(Text, Trim) {
  EXPECT_EQ(trim("\n   model://x\n  "), "model://x");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim("a b"), "a b");
}

TEST(Text, Counted) {
  EXPECT_EQ(counted(1, "model"), "1 model");
  EXPECT_EQ(counted(0, "model"), "0 models");
  EXPECT_EQ(counted(12, "error"), "12 errors");
}

TEST(Text, EditDistanceCountsTranspositionsOnce) {
  EXPECT_EQ(edit_distance("mas", "mass"), 1u);
  EXPECT_EQ(edit_distance("max_setp_size", "max_step_size"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

TEST(Text, ClosestMatchOnlyWithinASmallDistance) {
  EXPECT_EQ(closest_match("mas", {"pose", "mass", "inertia"}), "mass");
  EXPECT_EQ(closest_match("--duraton", {"--duration", "--rtf", "--iterations"}), "--duration");
  EXPECT_EQ(closest_match("velocity_decay", {"pose", "inertial", "collision"}), "");
  EXPECT_EQ(closest_match("mass", {"mass"}), "") << "an exact name is not a misspelling";
  EXPECT_EQ(misspelling_distance("mas"), 1u);
  EXPECT_EQ(misspelling_distance("inertial"), 2u);
  EXPECT_EQ(misspelling_distance("max_setp_size"), 3u);
}

}  // namespace
}  // namespace kestrel
