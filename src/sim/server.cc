#include "kestrel/sim/server.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>

#include "kestrel/core/interrupt.h"

namespace kestrel::sim {

Server::~Server() {
  stop();
  for (auto& w : worlds_)
    if (w.thread.joinable()) w.thread.join();
  if (signal_thread_.joinable()) {
    signal_thread_quit_ = true;
    signal_thread_.join();
  }
}

Runner& Server::add(std::unique_ptr<Runner> runner) {
  worlds_.push_back(World{std::move(runner), {}, nullptr});
  return *worlds_.back().runner;
}

void Server::start(Limits limits) {
  for (auto& w : worlds_) {
    ++running_;
    w.thread = std::thread([this, &w, limits] {
      try {
        w.runner->run(limits.max_iterations, limits.max_sim_time);
      } catch (...) {
        w.error = std::current_exception();
        stop();  // one world failing stops the others: nothing is left running
      }
      --running_;
    });
  }
}

void Server::wait() {
  for (auto& w : worlds_)
    if (w.thread.joinable()) w.thread.join();
  for (auto& w : worlds_)
    if (w.error) std::rethrow_exception(w.error);
}

void Server::run(Limits limits) {
  if (worlds_.size() == 1) {
    ++running_;
    try {
      worlds_[0].runner->run(limits.max_iterations, limits.max_sim_time);
    } catch (...) {
      --running_;
      throw;
    }
    --running_;
    return;
  }
  start(limits);
  wait();
}

void Server::stop() {
  for (auto& w : worlds_) w.runner->stop();
}

void Server::install_signal_stop() {
  // Block SIGINT/SIGTERM in this thread (and so in every thread started after), then wait for
  // them on a watcher thread with sigtimedwait: no work is done in a signal handler.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal_thread_ = std::thread([this, set] {
    const timespec tick{0, 50'000'000};
    std::optional<std::chrono::steady_clock::time_point> deadline;
    while (!signal_thread_quit_) {
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig > 0) {
        signal_ = sig;
        request_interrupt(sig);
        stop();
        if (loading_ && !deadline) {
          deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms_);
        }
      }
      if (deadline && loading_ && std::chrono::steady_clock::now() > *deadline) {
        const int s = signal_.load();
        char line[200];
        const int n = std::snprintf(line, sizeof line,
                                    "kestrel: interrupted by SIG%s while loading the world (inside "
                                    "a library call that cannot be interrupted); nothing ran\n",
                                    sigabbrev_np(s) ? sigabbrev_np(s) : "?");
        if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<std::size_t>(n));
        std::_Exit(128 + s);
      }
      if (!loading_) deadline.reset();
    }
  });
}

void Server::set_loading(bool loading, std::chrono::milliseconds grace) {
  grace_ms_ = grace.count();
  loading_ = loading;
}

}  // namespace kestrel::sim
