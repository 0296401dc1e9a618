#include "kestrel/sim/server.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>

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
    while (!signal_thread_quit_) {
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig > 0) {
        signal_ = sig;
        stop();
      }
    }
  });
}

}  // namespace kestrel::sim
