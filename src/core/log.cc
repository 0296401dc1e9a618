#include "kestrel/core/log.h"

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <mutex>

namespace kestrel::log {

namespace {

thread_local Capture* t_capture = nullptr;

const char* label(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::critical:
    case spdlog::level::err:
      return "error: ";
    case spdlog::level::warn:
      return "warning: ";
    case spdlog::level::info:
      return "info: ";
    default:
      return "debug: ";
  }
}

// stderr, one line per message, below which the live status line is drawn again.
class Sink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_status(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (text.empty() && status_.empty()) return;
    status_ = text;
    std::fputs("\r\033[K", stderr);
    std::fputs(status_.c_str(), stderr);
    std::fflush(stderr);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string line = label(msg.level);
    line.append(msg.payload.data(), msg.payload.size());
    line += '\n';
    if (!status_.empty()) line = "\r\033[K" + line + status_;
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  std::string status_;
};

std::shared_ptr<Sink> sink() {
  static const auto s = std::make_shared<Sink>();
  return s;
}

}  // namespace

// Diverts warnings and errors of a capturing thread before they reach the sink.
class CapturingLogger final : public spdlog::logger {
 public:
  CapturingLogger() : spdlog::logger("kestrel", sink()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (Capture* c = t_capture) {
      if (msg.level >= spdlog::level::warn) {
        c->lines_.push_back(
            {msg.level >= spdlog::level::err, std::string(msg.payload.data(), msg.payload.size())});
      }
      return;
    }
    spdlog::logger::sink_it_(msg);
  }
};

void init() {
  static std::mutex m;
  std::lock_guard lock(m);
  // Only spdlog's own default logger (named "") is replaced: a logger an embedding program or
  // a test installed stays.
  if (spdlog::default_logger()->name() != "") return;
  auto logger = std::make_shared<CapturingLogger>();
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);
  spdlog::cfg::load_env_levels();
}

void status(const std::string& text) {
  init();
  sink()->set_status(text);
}

Capture::Capture() : outer_(t_capture) {
  init();
  t_capture = this;
}
Capture::~Capture() { t_capture = outer_; }

}  // namespace kestrel::log
