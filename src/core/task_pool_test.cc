#include "kestrel/core/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kestrel {
namespace {

// Every index of every batch runs exactly once, on the caller and the workers, with and without
// spinning between batches; batches of 0 and of 1 task return; an exception reaches the caller
// and the pool runs the next batch.
TEST(TaskPool, EachTaskOnceInBatchAfterBatchSpinningOrNot) {
  for (const auto spin : {std::chrono::microseconds(0), std::chrono::microseconds(200)}) {
    TaskPool pool(3, spin);
    for (const std::size_t n : {0, 1, 2, 7, 64}) {
      for (int batch = 0; batch < 200; ++batch) {
        std::vector<std::atomic<int>> runs(n);
        pool.run(n, [&](std::size_t i) { runs[i].fetch_add(1); });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << i << " of " << n;
      }
    }
    EXPECT_THROW(pool.run(8, [](std::size_t i) { if (i == 5) throw std::runtime_error("5"); }),
                 std::runtime_error);
    std::atomic<std::size_t> sum = 0;
    pool.run(10, [&](std::size_t i) { sum += i; });
    EXPECT_EQ(sum.load(), 45u);
  }
}

// A pool whose workers poll for a minute between batches is destroyed at once while they poll
// (the bound is far above a thread's wake-up and far below the minute).
TEST(TaskPool, DestroyedWhileItsWorkersSpin) {
  for (int k = 0; k < 5; ++k) {
    auto pool = std::make_unique<TaskPool>(2, std::chrono::seconds(60));
    pool->run(4, [](std::size_t) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the workers are polling
    const auto t0 = std::chrono::steady_clock::now();
    pool.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  }
}

}  // namespace
}  // namespace kestrel
