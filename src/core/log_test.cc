#include "kestrel/core/log.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

namespace kestrel {
namespace {

// One line per message, labelled as findings are, no timestamps; a log line clears the live
// status line and the status line is drawn again below it (never glued to a log line).
TEST(Log, OneLabelledLineAndTheStatusLineRedrawnBelow) {
  log::init();
  testing::internal::CaptureStderr();
  spdlog::warn("w.sdf:3: [w::m] something");
  spdlog::error("broken");
  log::status("sim 1.000 s");
  spdlog::info("[mission] m: done");
  log::status("");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "warning: w.sdf:3: [w::m] something\n"
            "error: broken\n"
            "\r\033[Ksim 1.000 s"
            "\r\033[Kinfo: [mission] m: done\nsim 1.000 s"
            "\r\033[K");
}

// What is logged on a capturing thread becomes the capture's lines, not output.
TEST(Log, CaptureCollectsWarningsAndErrors) {
  log::init();
  testing::internal::CaptureStderr();
  std::vector<log::Capture::Line> lines;
  {
    log::Capture c;
    spdlog::info("dropped");
    spdlog::warn("a warning");
    spdlog::error("an error");
    lines = c.lines();
  }
  spdlog::warn("after");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "warning: after\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_FALSE(lines[0].error);
  EXPECT_EQ(lines[0].message, "a warning");
  EXPECT_TRUE(lines[1].error);
  EXPECT_EQ(lines[1].message, "an error");
}

}  // namespace
}  // namespace kestrel
