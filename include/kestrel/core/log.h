#pragma once
/// @file The one log sink (docs/architecture.md, "Reporting"). Every module logs through spdlog
/// (`spdlog::info/warn/error/debug`); kestrel::log::init() makes spdlog's default logger this
/// sink: stderr, one line per message, no timestamps,
///
///   error: MESSAGE        warning: MESSAGE        info: MESSAGE        debug: MESSAGE
///
/// the format findings have (sdf::format_finding): a MESSAGE about a place starts with it
/// ("world.sdf:12: [world::model] ..."). Its level comes from SPDLOG_LEVEL (default info).
/// The live status line of `kestrel run` goes through status(): a log line first clears it
/// and draws it again below, so the two never share a line.
///
/// User-facing findings (a world's problems) are sdf::Finding / kestrel::Error, not log lines;
/// a warning logged while a system is configured is one too when `kestrel check` runs the
/// configure (Capture collects it as a finding).

#include <string>
#include <vector>

namespace kestrel::log {

class CapturingLogger;

/// Installs the sink as spdlog's default logger (idempotent, thread-safe) unless a program or
/// a test has installed a logger of its own (then that one is kept, and Capture collects
/// nothing). The Runner calls it; so does `kestrel`'s main before anything else.
void init();

/// Shows `text` as the live status line at the bottom of stderr (a terminal only), replacing
/// the previous one; empty clears it.
void status(const std::string& text);

/// While alive, warnings and errors logged on this thread are collected instead of printed
/// (`kestrel check` turns them into findings). Info and debug lines are dropped meanwhile.
class Capture {
 public:
  struct Line {
    bool error = false;
    std::string message;
  };
  Capture();
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  const std::vector<Line>& lines() const { return lines_; }

 private:
  friend class CapturingLogger;
  std::vector<Line> lines_;
  Capture* outer_;
};

}  // namespace kestrel::log
