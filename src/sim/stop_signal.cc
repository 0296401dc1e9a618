#include "kestrel/sim/stop_signal.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "kestrel/core/error.h"

namespace kestrel::sim {

StopSignal::StopSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw Error(std::string("eventfd(): ") + std::strerror(errno));
}

StopSignal::~StopSignal() { ::close(fd_); }

void StopSignal::raise() {
  raised_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  // Never read, so the counter only grows: the descriptor stays readable.
  (void)!::write(fd_, &one, sizeof one);
}

}  // namespace kestrel::sim
