#pragma once
/// @file A small fixed pool of worker threads that runs a batch of tasks and waits for it.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kestrel {

/// `threads` workers; run() hands them a batch of tasks (each task index once) and returns when
/// every task is done. The calling thread works on the batch too.
class TaskPool {
 public:
  explicit TaskPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~TaskPool() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  unsigned workers() const { return static_cast<unsigned>(workers_.size()); }

  /// Runs task(i) for every i in [0, n); returns when all are done; rethrows the first
  /// exception (in completion order: tasks that must report deterministically catch their own).
  void run(std::size_t n, const std::function<void(std::size_t)>& task) {
    {
      std::lock_guard lock(m_);
      task_ = &task;
      n_ = n;
      next_ = 0;
      remaining_ = n;
      error_ = nullptr;
    }
    cv_.notify_all();
    std::unique_lock lock(m_);
    drain(lock);
    done_cv_.wait(lock, [&] { return remaining_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    std::unique_lock lock(m_);
    while (true) {
      cv_.wait(lock, [&] { return quit_ || (task_ && next_ < n_); });
      if (quit_) return;
      drain(lock);
    }
  }
  // Takes tasks of the current batch until none is left (lock held between tasks).
  void drain(std::unique_lock<std::mutex>& lock) {
    while (task_ && next_ < n_) {
      const std::size_t i = next_++;
      const auto* task = task_;
      lock.unlock();
      std::exception_ptr e;
      try {
        (*task)(i);
      } catch (...) {
        e = std::current_exception();
      }
      lock.lock();
      if (e && !error_) error_ = e;
      if (--remaining_ == 0) done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t n_ = 0, next_ = 0, remaining_ = 0;
  std::exception_ptr error_;
  bool quit_ = false;
};

}  // namespace kestrel
