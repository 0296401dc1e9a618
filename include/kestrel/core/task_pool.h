#pragma once
/// @file A small fixed pool of worker threads that runs a batch of tasks and waits for it.

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kestrel {

/// The CPUs this process may run on (its affinity mask: `taskset -c 0` gives 1), which
/// std::thread::hardware_concurrency() ignores.
inline unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// `threads` workers; run() hands them a batch of tasks (each task index once) and returns when
/// every task is done. The calling thread works on the batch too.
///
/// `spin`: how long a worker that has run out of tasks, and run() waiting for the last task of
/// its batch, poll before they sleep on a condition variable. Waking a sleeping thread took
/// 50-100 us on the 2-core machine, as long as a VecEnv's whole task, so batches that follow
/// each other within microseconds (VecEnv's steps) spin; 0 (the default) never does, for
/// callers whose batches are far apart (a spinning worker would take a core from other work).
class TaskPool {
 public:
  explicit TaskPool(unsigned threads, std::chrono::microseconds spin = {}) : spin_(spin) {
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~TaskPool() {
    {
      std::lock_guard lock(m_);
      quit_ = true;
      batch_.fetch_add(1, std::memory_order_release);  // ends a worker's spin
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
      done_.store(n == 0, std::memory_order_relaxed);
      batch_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    std::unique_lock lock(m_);
    drain(lock);
    if (remaining_ != 0 && spin_.count() > 0) {
      lock.unlock();
      spin_until([&] { return done_.load(std::memory_order_acquire); });
      lock.lock();
    }
    done_cv_.wait(lock, [&] { return remaining_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    std::unique_lock lock(m_);
    std::uint64_t seen = batch_.load(std::memory_order_relaxed);
    while (true) {
      if (spin_.count() > 0 && !quit_ && !(task_ && next_ < n_)) {
        lock.unlock();
        spin_until([&] { return batch_.load(std::memory_order_acquire) != seen; });
        lock.lock();
      }
      cv_.wait(lock, [&] { return quit_ || (task_ && next_ < n_); });
      if (quit_) return;
      seen = batch_.load(std::memory_order_relaxed);
      drain(lock);
    }
  }
  // Polls `ready` for at most spin_.
  template <class Ready>
  void spin_until(const Ready& ready) const {
    const auto until = std::chrono::steady_clock::now() + spin_;
    while (!ready() && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
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
      if (--remaining_ == 0) {
        done_.store(true, std::memory_order_release);
        done_cv_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t n_ = 0, next_ = 0, remaining_ = 0;
  std::exception_ptr error_;
  bool quit_ = false;
  const std::chrono::microseconds spin_;
  std::atomic<std::uint64_t> batch_{0};  // batches handed out (a spinning worker watches it)
  std::atomic<bool> done_{true};         // the current batch's last task is done
};

}  // namespace kestrel
